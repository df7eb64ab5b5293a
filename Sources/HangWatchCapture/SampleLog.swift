import CHangWatchEngine
import HangWatchSymbols

/// The reader's handle on a sample log (see `hangwatch_log.h`): a shared file
/// mapping the target writes into, which stays readable after the target dies.
package final class SampleLog {
    package let header: UnsafeMutablePointer<hw_log_header>
    package let path: String?

    /// Creates a fresh log file at `path` with a ring of `capacity` bytes.
    package init(creatingAt path: String, capacity: UInt64) throws(CaptureError) {
        guard let h = hw_log_create(path, capacity) else {
            throw CaptureError.cannotCreateLog(path, errnoDescription())
        }
        header = h
        self.path = path
    }

    /// An in-memory log for the in-process library (no file).
    package init(anonymousCapacity capacity: UInt64) throws(CaptureError) {
        guard let h = hw_log_create_anonymous(capacity) else {
            throw CaptureError.cannotCreateLog("(anonymous)", errnoDescription())
        }
        header = h
        path = nil
    }

    deinit { hw_log_unmap(header) }

    /// Hands every whole committed record to `body`, in order, then releases it.
    /// `writerGone`: the target is dead, so uncommitted records will never complete.
    package func drain(writerGone: Bool, _ body: (UnsafePointer<hw_rec_header>) -> Void) {
        drain(writerGone: writerGone, nowNs: nil, body)
    }

    /// `drain` at a given CLOCK_MONOTONIC time (tests step over abandoned records without waiting).
    package func drain(writerGone: Bool, nowNs: UInt64?, _ body: (UnsafePointer<hw_rec_header>) -> Void) {
        epochAtLastDrain = hw_log_sampling_epoch(header)
        while let record = nowNs.map({ hw_log_peek_at(header, writerGone, $0) }) ?? hw_log_peek(header, writerGone) {
            body(record)
            hw_log_consume(header, record)
        }
        // The ring of a file log is also mapped by the target: pages the reader
        // is done with need not stay in the reader's memory.
        if path != nil { hw_log_release_consumed(header, &releasedPosition) }
    }

    /// How long a parked reader sleeps at most (`parkReader`): frame batches,
    /// thread and module records wait up to this long while nothing is sampled.
    package static let idleParkNs: UInt64 = 1_000_000_000

    /// The park's limit for a reader that also rotates an event file every
    /// `rotationIntervalNs` (nil: none): `idleParkNs`, or a tenth of the
    /// interval when that is shorter, so a rotation is at most that late.
    package static func parkLimitNs(rotationIntervalNs: UInt64?) -> UInt64 {
        min(idleParkNs, rotationIntervalNs.map { $0 / 10 } ?? .max)
    }

    /// Threads the engine samples now.
    package var samplingSessions: UInt32 { hw_log_sampling_sessions(header) }

    /// How long a reader with no live events to tell waits between drains while
    /// `sessions` threads are sampled: 200 ms for one, less for more (a drain
    /// then finds about 200 ms of one thread's samples, as it found 50 ms of
    /// four threads' when every drain was 50 ms apart), never under 50 ms.
    /// Waking is most of the reader's cost per sample at high rates, so it
    /// wakes no more often than the log's room requires (BENCHMARKS.md has
    /// the cost of a wake-up).
    package static func drainIntervalMs(sessions: UInt32) -> Int32 {
        Int32(max(50, 200 / max(1, Int(sessions))))
    }

    /// The engine's sampling-session epoch as the last drain began.
    package private(set) var epochAtLastDrain: UInt32 = 0

    /// After a drain: sleeps until the engine starts sampling a thread, `stop`
    /// is set (and the log's reader woken), or `timeoutNs` passes. Returns false
    /// at once, without sleeping, while a thread is being sampled or when a
    /// session began or ended since the drain began (`epoch`, by default the
    /// last drain's): then the caller drains at its usual interval. See
    /// `reader_park.c`.
    package func parkReader(epoch: UInt32? = nil, stop: UnsafePointer<UInt32>?, timeoutNs: UInt64) -> Bool {
        hw_log_reader_park(header, epoch ?? epochAtLastDrain, stop, timeoutNs) >= 0
    }

    /// Between two drains while threads are sampled: sleeps `timeoutNs`, less
    /// when the engine starts sampling another thread (the interval then
    /// shortens) or `stop` is set. See `hw_log_reader_wait`.
    package func waitReader(stop: UnsafePointer<UInt32>?, timeoutNs: UInt64) {
        _ = hw_log_reader_wait(header, epochAtLastDrain, stop, timeoutNs)
    }

    /// Ring position up to which this process's page mappings were dropped.
    private var releasedPosition: UInt64 = 0

    /// Records the writer had to drop because the ring was full.
    package var droppedRecords: UInt64 { hw_log_dropped(header) }

    /// Dropped samples (SAMPLE and REPEAT records): a full ring drops these first.
    package var droppedSamples: UInt64 {
        hw_log_dropped_kind(header, UInt32(HW_REC_SAMPLE.rawValue)) + hw_log_dropped_kind(header, UInt32(HW_REC_REPEAT.rawValue))
    }

    /// Dropped records of every other kind (hang boundaries, threads, modules...):
    /// only when even the headroom kept for them was full.
    package var droppedControlRecords: UInt64 { droppedRecords &- droppedSamples }

    /// Records skipped because their writer reserved them and never committed
    /// (its thread died, or left a signal handler by longjmp).
    package var abandonedRecords: UInt64 { header.pointee.abandoned_records }

    /// How long an uncommitted record whose writer may still live holds the reader up.
    package var abandonAfterNs: UInt64 {
        get { header.pointee.abandon_ns }
        set { header.pointee.abandon_ns = newValue }
    }

    /// The process that claimed the log (0 until the engine starts).
    package var ownerPid: Int32 { header.pointee.owner_pid }
}
