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

    /// Waits up to `timeoutNs` for the callbacks queued so far to return.
    func flush(timeoutNs: UInt64) -> Bool { jobs.drain(timeoutNs: timeoutNs) }

    /// Queues each event for the callback (never blocks the caller).
    func deliver(_ events: [HangEvent]) {
        for event in events {
            let callback = callback
            jobs.submit { callback(event) }
        }
    }
}
