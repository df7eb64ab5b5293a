import CHangWatchEngine
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Counts hitches of a frame-deadline loop from inside the program: mark each
/// frame with `frame { … }`, or `frameStarted()` / `frameEnded()`. Several
/// named monitors may run at once, from any threads. Their statistics join
/// the watcher's report (`frames`, `frameLoops`); a frame that runs past the
/// hang threshold is also sampled and reported as a hang (when the watcher has
/// a thread list, `HANGWATCH_THREADS`, only on a thread it names). Once a
/// monitor has timed a frame on a thread, the engine's own frames for that
/// thread's loop (`HANGWATCH_FRAME_MS`) stop: the monitor's are the ones counted.
public final class FrameMonitor: Sendable {
    /// The loop's name, as the report shows it in `FrameStats.name`.
    public let name: String
    /// The frame budget in ms.
    public let deadlineMs: Double
    /// Start of the frame in progress; 0 when none. A monitor is one loop, so
    /// one frame is open at a time.
    private let openStartNs = Atomic<UInt64>(0)
    /// The frames so far, folded as each ends (bounded memory however long the loop runs).
    private let frames: Mutex<FrameTally>

    /// - Parameters:
    ///   - name: shown in the report (e.g. "render", "audio").
    ///   - deadlineMs: the frame budget, e.g. 16.667 at 60 Hz; one that is not
    ///     above 0 counts no hitch.
    public init(name: String, deadlineMs: Double) {
        self.name = name
        self.deadlineMs = deadlineMs
        frames = Mutex(FrameTally(deadlineMs: deadlineMs))
        HangWatcher.shared?.register(self)
    }

    /// A frame's work begins now.
    public func frameStarted() {
        let now = hw_fast_now_ns() // the heartbeat's clock (the TSC where it serves)
        openStartNs.store(now, ordering: .relaxed)
        if let slot = FrameThread.slot() {
            // This monitor counts the frames; the engine's frame deadline (HANGWATCH_FRAME_MS)
            // must not count them again under the thread's name.
            hw_heartbeat_frames_elsewhere(slot)
            hw_heartbeat_wait_end_at(slot, now)
        }
    }

    /// The frame's work is done.
    public func frameEnded() {
        let now = hw_fast_now_ns()
        if let slot = FrameThread.slot() { hw_heartbeat_wait_begin_at(slot, now) }
        let start = openStartNs.exchange(0, ordering: .relaxed)
        guard start != 0, now >= start else { return }
        frames.withLock { $0.add(startNs: start, durationNs: now - start) }
    }

    /// Runs one frame's work.
    @inline(__always)
    public func frame<T>(_ work: () throws -> T) rethrows -> T {
        frameStarted()
        defer { frameEnded() }
        return try work()
    }

    /// Statistics so far; nil before the first frame.
    public func statistics() -> FrameStats? {
        // A copy of its own, so the percentiles are worked out with the lock free
        // and the loop's next frameEnded neither waits for them nor copies its
        // durations (as a shared copy-on-write buffer would make it do).
        let tally = frames.withLock { $0.unshared() }
        guard tally.frameCount > 0 else { return nil }
        return FrameStatistics.compute(name: name, tally: tally,
                                       intervalMs: Double(tally.lastEndNs &- tally.firstStartNs) / 1e6)
    }
}

/// The calling thread's watch slot for frame loops, registered on first use
/// so that long frames are sampled like hangs (on a thread the thread list, if
/// any, names: as a LoopHeartbeat's). A thread-local read after that.
enum FrameThread {
    @inline(__always)
    static func slot() -> OpaquePointer? {
        if let slot = hw_current_slot() { return slot }
        guard hw_engine_running() else { return nil }
        return hw_register_marked_loop()
    }
}
