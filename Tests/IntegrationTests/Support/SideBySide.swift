import Foundation
import HangWatchTestSupport

/// Runs `first` on a thread of its own while `second` runs on the caller's,
/// and returns both once both are done (either one's error is thrown, the
/// first one's before the second's). For a program run plain beside the same
/// program under hangwatch, when its time goes to timed waits: the pair then
/// takes the time of one run.
func sideBySide<First: Sendable, Second>(_ first: @escaping @Sendable () throws -> First,
                                         _ second: () throws -> Second) throws -> (First, Second) {
    let firstResult = ResultBox<First>()
    let firstDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        firstResult.set(Result { try first() })
        firstDone.signal()
    }
    let secondResult = Result { try second() }
    firstDone.wait()
    return (try firstResult.get(), try secondResult.get())
}

/// A value set on one thread and read on another after it signalled.
final class ResultBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Value, any Error>?

    func set(_ result: Result<Value, any Error>) {
        lock.lock()
        self.result = result
        lock.unlock()
    }

    /// The value set, or its error; an error too when nothing was set.
    func get() throws -> Value {
        lock.lock()
        defer { lock.unlock() }
        guard let result else { throw TestFailure("no result was set") }
        return try result.get()
    }
}
