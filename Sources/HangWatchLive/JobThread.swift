import CHangWatchEngine
import Dispatch
import Foundation
import Glibc

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
        // The thread holds its JobThread for ever: it is never stopped, and a
        // JobThread freed under a waiting thread would free its semaphore too.
        let thread = Thread { self.run() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, or counts it refused when the backlog is full; true when queued.
    @discardableResult
    package func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        submit(job, counted: true)
    }

    /// `counted`: a refusal counts in `refused` (a hang dropped); `drain`'s own
    /// marker, retried while the backlog is full, is no dropped hang.
    private func submit(_ job: @escaping @Sendable () -> Void, counted: Bool) -> Bool {
        lock.lock()
        let accepted = backlog.count < capacity
        if accepted { backlog.append(job) } else if counted { refusedCount += 1 }
        lock.unlock()
        if accepted { wake.signal() }
        return accepted
    }

    /// Waits until every job submitted so far has run, or `timeoutNs` passed;
    /// true when they all ran (at exit: the last hang is still sent).
    package func drain(timeoutNs: UInt64) -> Bool {
        let done = DispatchSemaphore(value: 0)
        // A full backlog refuses the marker: then wait for room first, within the bound.
        let deadline = DispatchTime.now() + .nanoseconds(Int(min(timeoutNs, UInt64(Int.max))))
        while !submit({ done.signal() }, counted: false) {
            if DispatchTime.now() >= deadline { return false }
            usleep(10_000)
        }
        return done.wait(timeout: deadline) == .success
    }

    private func run() {
        // In-process its waits pass through the library's wrappers: never as a watched loop's.
        hw_never_watch_this_thread()
        while true {
            wake.wait()
            lock.lock()
            let job = backlog.isEmpty ? nil : backlog.removeFirst()
            lock.unlock()
            job?()
        }
    }
}
