// One hang, told as soon as it is known: the unit of `--events FILE.jsonl`,
// of the library's `onHang` callback and of the OTLP export.

/// A hang as it happens. A hang that reaches the report threshold while it
/// still runs is told twice: first `inProgress` (its tree so far), then
/// `ended` (the whole of it). Shorter hangs are told once, when they end.
public struct HangEvent: Sendable, Equatable {
    /// Whether the hang had ended when the event was made.
    public enum Phase: String, Sendable, Equatable {
        /// The hang is over; the event holds all of it.
        case ended = "hang"
        /// The hang still runs; duration and tree are what was seen so far.
        case inProgress = "hang-in-progress"
    }

    /// Ended or in progress.
    public var phase: Phase
    /// When the event was made, in ns since the Unix epoch.
    public var timeUnixNs: Int64
    /// The watched process (pid, executable, start time; no exit status yet).
    public var process: ProcessInfoRecord
    /// The thresholds in force.
    public var thresholds: Thresholds
    /// The hang, as the report holds it. `hang.id` is the same in the
    /// in-progress and the ended event of one hang.
    public var hang: Hang

    /// An event of `phase` about `hang`.
    public init(phase: Phase, timeUnixNs: Int64, process: ProcessInfoRecord, thresholds: Thresholds, hang: Hang) {
        self.phase = phase
        self.timeUnixNs = timeUnixNs
        self.process = process
        self.thresholds = thresholds
        self.hang = hang
    }

    /// When the hang started, in ns since the Unix epoch (nil when the process start is unknown).
    public var hangStartUnixNs: Int64? {
        process.startTimeUnixNs.map { $0 + Int64((hang.startMs * 1e6).rounded()) }
    }
}
