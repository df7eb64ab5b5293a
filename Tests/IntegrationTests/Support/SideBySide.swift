import Foundation
import HangWatchTestSupport

/// A value made on a thread of its own from the moment this is created; `get`
/// waits for it. For runs whose time goes to timed waits (a program's sleeps,
/// a service's idle second): started together, they take the time of the
/// longest, not the sum.
final class InBackground<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, any Error>?

    /// Starts `make` on a new thread.
    init(_ make: @escaping @Sendable () throws -> Value) {
        Thread.detachNewThread {
            let made = Result { try make() }
            self.lock.lock()
            self.result = made
            self.lock.unlock()
            self.done.signal()
        }
    }

    /// Returns once `make` is done.
    func wait() {
        done.wait()
        done.signal() // for the next reader
    }

    /// The value, or the error `make` threw, once it is done.
    func get() throws -> Value {
        wait()
        lock.lock()
        defer { lock.unlock() }
        guard let result else { throw TestFailure("no result was set") }
        return try result.get()
    }
}

/// Runs `first` on a thread of its own while `second` runs on the caller's,
/// and returns both once both are done (either one's error is thrown, the
/// first one's before the second's). For a program run plain beside the same
/// program under hangwatch, when its time goes to timed waits: the pair then
/// takes the time of one run.
func sideBySide<First, Second>(_ first: @escaping @Sendable () throws -> First,
                               _ second: () throws -> Second) throws -> (First, Second) {
    let firstRun = InBackground(first)
    let secondResult = Result { try second() }
    return (try firstRun.get(), try secondResult.get())
}
