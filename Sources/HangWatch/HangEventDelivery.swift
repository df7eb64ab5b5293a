import Synchronization
import HangWatchAnalysis
import HangWatchLive

/// Calls the `onHang` callback off the hung thread and off the reader: on a
/// thread of its own ("hangwatch-on-hang"), one hang at a time, in the order
/// hangs ended. A thread rather than a dispatch queue: in a `dispatchMain()`
/// program the main queue runs on pool workers, and a callback on a pool
/// worker could sit on the very thread the next main-queue item needs.
///
/// A callback that blocks holds back only later callbacks: the engine, the
/// reader and the event file go on. While it blocks, at most `maxPending`
/// hangs wait for it; further ones are dropped and counted (`dropped`), so a
/// stuck callback cannot grow memory without bound.
final class HangEventDelivery: Sendable {
    /// Hangs that may wait for a blocked callback before new ones are dropped.
    static let maxPending = 256

    private let callback: @Sendable (HangEvent) -> Void
    private let jobs = JobThread(name: "hangwatch-on-hang", capacity: maxPending)
    /// Hangs not delivered because `maxPending` were already waiting.
    var dropped: Int { jobs.refused }

    init(_ callback: @escaping @Sendable (HangEvent) -> Void) {
        self.callback = callback
    }

    /// Set when the callback had not returned after the time the exit gives it.
    private let stuckAtExit = Atomic<Bool>(false)

    /// At exit: waits up to 1 s for the callbacks queued so far, and remembers
    /// when they did not all return.
    func flushAtExit() {
        if !flush(timeoutNs: 1_000_000_000) { stuckAtExit.store(true, ordering: .relaxed) }
    }

    /// What the report says about the callback: that it was still running at
    /// exit, or that hangs were dropped while it blocked.
    var notes: [String] {
        var notes: [String] = []
        if stuckAtExit.load(ordering: .relaxed) {
            notes.append("the onHang callback had not returned at exit: hangwatch waited 1 s for it, then went on")
        }
        if dropped > 0 {
            notes.append("\(dropped) hangs were not passed to the onHang callback: \(Self.maxPending) were already waiting for it")
        }
        return notes
    }

    /// Waits up to `timeoutNs` for the callbacks queued so far to return.
    func flush(timeoutNs: UInt64) -> Bool { jobs.drain(timeoutNs: timeoutNs) }

    /// Hands the hangs among `events` that ended to the callback.
    func deliverEnded(_ events: [HangEvent]) {
        let ended = events.filter { $0.phase == .ended }
        if !ended.isEmpty { deliver(ended) }
    }

    /// Queues each event for the callback (never blocks the caller).
    func deliver(_ events: [HangEvent]) {
        for event in events {
            let callback = callback
            jobs.submit { callback(event) }
        }
    }
}
