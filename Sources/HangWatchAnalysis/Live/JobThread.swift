import Dispatch
import Foundation

/// One thread that runs submitted jobs in order, with a bounded backlog.
package final class JobThread: @unchecked Sendable {
    private let lock = NSLock()
    private var backlog: [@Sendable () -> Void] = [] // guarded by lock
    private var refusedCount = 0 // guarded by lock
    private let wake = DispatchSemaphore(value: 0)
    private let capacity: Int

    /// Jobs refused because `capacity` were already waiting.
    package var refused: Int {
        lock.lock()
        defer { lock.unlock() }
        return refusedCount
    }

    package init(name: String, capacity: Int) {
        self.capacity = capacity
        let thread = Thread { [unowned(unsafe) self] in self.run() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, or counts it refused when the backlog is full.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        let accepted = backlog.count < capacity
        if accepted { backlog.append(job) } else { refusedCount += 1 }
        lock.unlock()
        if accepted { wake.signal() }
    }

    /// Waits until every job submitted so far has run, or `timeoutNs` passed;
    /// true when they all ran (at exit: the last hang is still sent).
    package func drain(timeoutNs: UInt64) -> Bool {
        let done = DispatchSemaphore(value: 0)
        submit { done.signal() }
        return done.wait(timeout: .now() + .nanoseconds(Int(min(timeoutNs, UInt64(Int.max))))) == .success
    }

    private func run() {
        while true {
            wake.wait()
            lock.lock()
            let job = backlog.isEmpty ? nil : backlog.removeFirst()
            lock.unlock()
            job?()
        }
    }
}
