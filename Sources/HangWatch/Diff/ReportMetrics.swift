// The headline numbers of one report: what a Metrics table shows and a diff compares.

/// Derived, comparable numbers of a report. The markdown report's Metrics
/// table and `hangwatch diff` both use these, so a single report and a
/// before/after comparison can never disagree on a definition.
public struct ReportMetrics: Sendable, Equatable {
    /// Hangs that count towards the hang rate: the usual threshold at which a
    /// hang is noticeable to a user, whatever thresholds the run used.
    public static let hangRateThresholdMs = 250.0

    public var hangCount: Int
    public var reportedHangCount: Int
    public var longestHangMs: Double
    public var totalHangMs: Double
    public var wallMs: Double
    /// Seconds spent in hangs ≥ `hangRateThresholdMs` per hour of wall time:
    /// the sum of their durations ÷ wall time × 3600. Nil without a wall time.
    public var hangRateSecondsPerHour: Double?
    /// Hitching time per second of frames (the main frame loop); nil unless frames were measured.
    public var hitchRatioMsPerS: Double?
    /// The program's user + system CPU time; nil when either is unknown.
    public var cpuMs: Double?
    public var peakRssKb: Int?

    public init(_ report: Report) {
        // From the hangs rather than the stored summary, so a filtered or
        // hand-edited report is measured by what it actually contains.
        let summary = Summary(hangs: report.hangs)
        hangCount = summary.hangCount
        reportedHangCount = summary.reportedHangCount
        longestHangMs = summary.longestHangMs
        totalHangMs = summary.totalHangMs
        wallMs = report.process.wallMs
        let longHangMs = report.hangs.filter { $0.durationMs >= Self.hangRateThresholdMs }.reduce(0) { $0 + $1.durationMs }
        hangRateSecondsPerHour = wallMs > 0 ? longHangMs / wallMs * 3600 : nil
        hitchRatioMsPerS = report.frames?.hitchRatioMsPerS
        if let user = report.process.cpuUserMs, let system = report.process.cpuSystemMs {
            cpuMs = user + system
        }
        peakRssKb = report.process.peakRssKb
    }
}
