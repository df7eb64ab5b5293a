/// What the engine is asked to watch and how, shared by `hangwatch run` and the library.
public struct CaptureConfig: Sendable, Equatable {
    /// Busy time of the watched loop, in ms, from which it counts as a hang (default 100).
    public var hangMs: Double = CaptureOptions.Defaults.hangMs
    /// Hang duration in ms from which a hang gets a call tree (default 250).
    public var reportMs: Double = CaptureOptions.Defaults.reportMs
    /// Samples per second during a hang (default 1000).
    public var sampleHz: Double = CaptureOptions.Defaults.sampleHz
    /// The frame deadline in ms, which makes the watched loop a frame loop; nil (the default) for
    /// none.
    public var frameMs: Double? = nil
    /// Thread names or globs to watch; `main` is the main role. Empty: main only.
    public var threadPatterns: [String] = []
    /// Give the frames of reported call trees their function's `file:line`
    /// (from DWARF, through llvm-symbolizer). Off by default: it runs a helper.
    public var sourceLines = false
    /// How running threads are sampled during a hang (default `.kernel`).
    public var sampler: Sampler = .kernel
    /// The ways a running thread can be sampled.
    public enum Sampler: String, Sendable, Equatable, CaseIterable {
        /// The kernel samples the thread (a perf_event task clock): the program receives
        /// no signal. Falls back to `.signal`, and says so in the report, where
        /// perf_event_open is refused.
        case kernel
        /// SIGPROF to a thread /proc shows running. A sample can race into a call that
        /// any signal handler ends early (sigtimedwait, a socket read with a timeout).
        case signal
    }
    /// The clock the heartbeat stamps each loop wait with (default `.tsc`).
    public var heartbeatClock: HeartbeatClock = .tsc
    /// The clocks a loop wait can be stamped with; both give CLOCK_MONOTONIC nanoseconds.
    public enum HeartbeatClock: String, Sendable, Equatable, CaseIterable {
        /// The CPU's time-stamp counter, scaled by a rate the watchdog measures against
        /// CLOCK_MONOTONIC (cheaper than a vDSO call; BENCHMARKS.md). Used only where the kernel's
        /// clocksource is the TSC and the CPU says constant_tsc and nonstop_tsc; elsewhere,
        /// and for the first few ms, a stamp is a `clock_gettime`.
        case tsc
        /// Always `clock_gettime(CLOCK_MONOTONIC)` (the vDSO).
        case vdso
    }
    /// The defaults: 100 ms hangs, 250 ms reports, 1000 Hz, no frame deadline, the main thread, no
    /// source lines, the kernel's sampler, the TSC heartbeat clock.
    public init() {}
}

package enum CaptureError: Error, Equatable, CustomStringConvertible {
    case cannotCreateLog(String, String)
    case agentNotFound(String)
    package var description: String {
        switch self {
        case let .cannotCreateLog(path, why): return "cannot create sample log \(path): \(why)"
        case let .agentNotFound(path): return "preload agent not found (looked for \(path)); run `make agent`"
        }
    }
}
