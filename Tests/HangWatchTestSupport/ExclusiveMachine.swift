import Testing

/// A trait for tests that must have the machine to themselves while they
/// run: the timing tests (everything under `Integration`) and the heavy ones
/// that would disturb them (the Python validators, Chromium, llvm-symbolizer).
/// Their test cases take one process-wide lock, so a plain `swift test`
/// (which runs suites in parallel) never runs a demo while Chromium renders
/// beside it; other tests still run in parallel. `make test` passes
/// `--no-parallel` anyway, where the lock is never contended.
package struct ExclusiveMachine: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?,
                              performing function: @Sendable () async throws -> Void) async throws {
        // The lock is taken around each test case only: a suite or a whole
        // parameterized test holding it would stop its own cases from running.
        guard testCase != nil else {
            try await function()
            return
        }
        await MachineLock.shared.acquire()
        do {
            try await function()
        } catch {
            await MachineLock.shared.release()
            throw error
        }
        await MachineLock.shared.release()
    }
}

extension Trait where Self == ExclusiveMachine {
    /// The machine to itself while each test case runs (see `ExclusiveMachine`).
    package static var exclusiveMachine: Self { ExclusiveMachine() }
}

/// A lock whose waiters suspend instead of blocking a thread of the test pool.
actor MachineLock {
    static let shared = MachineLock()
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume() // handed over: `held` stays true
        }
    }
}
