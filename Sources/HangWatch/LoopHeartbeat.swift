import CHangWatchEngine

/// The heartbeat API for loops hangwatch cannot see on its own (a custom
/// event loop on any thread). Create it on the loop's thread, then either mark
/// each wait with `waiting { … }` (one call per iteration), or call
/// `willWait()` / `didWake()` around the wait.
///
/// Time outside the waits is the loop's busy time: at least the hang threshold
/// makes a hang, sampled and reported like the main run loop's.
public struct LoopHeartbeat: @unchecked Sendable {
    private let slot: OpaquePointer

    /// Registers the calling thread as a watched loop. Returns nil when the
    /// watcher is not running, too many threads are watched, or the watcher has
    /// a thread list (`HANGWATCH_THREADS`, `CaptureConfig.threadPatterns`) that
    /// does not name this thread (`main` for the main thread): name the thread
    /// before making its heartbeat.
    public init?() {
        guard HangWatcher.shared != nil, let slot = hw_register_marked_loop() else { return nil }
        self.slot = slot
    }

    /// The loop is about to wait for events.
    @inline(__always) public func willWait() { hw_heartbeat_wait_begin(slot) }
    /// The loop's wait returned: work begins.
    @inline(__always) public func didWake() { hw_heartbeat_wait_end(slot) }

    /// Runs the loop's wait, marking it as the idle part of the iteration.
    @inline(__always) public func waiting<T>(_ wait: () throws -> T) rethrows -> T {
        willWait()
        defer { didWake() }
        return try wait()
    }
}
