// The headline numbers of one report: what a Metrics table shows and a diff compares.

import HangWatchModel

/// Derived, comparable numbers of a report. The markdown report's Metrics
/// table and `hangwatch diff` both use these, so a single report and a
/// before/after comparison can never disagree on a definition.
package struct ReportMetrics: Sendable, Equatable {
    /// Hangs that count towards the hang rate: the usual threshold at which a
    /// hang is noticeable to a user, whatever thresholds the run used.
    package static let hangRateThresholdMs = 250.0

    package var hangCount: Int
    package var reportedHangCount: Int
    package var longestHangMs: Double
    package var totalHangMs: Double
    package var wallMs: Double
    /// Seconds spent in hangs ≥ `hangRateThresholdMs` per hour of wall time:
    /// the sum of their durations ÷ wall time × 3600. Nil without a wall time.
    package var hangRateSecondsPerHour: Double?
    /// Hitching time per second of frames (the main frame loop); nil unless frames were measured.
    package var hitchRatioMsPerS: Double?
    /// The program's user + system CPU time; nil when either is unknown.
    package var cpuMs: Double?
    package var peakRssKb: Int?
    /// Hangs per cause (`deadlock`, `throttled`, `stopped`, `starved-of-cpu`); kinds with none are absent.
    package var causeCounts: [HangCause.Kind: Int] = [:]

    package init(_ report: Report) {
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
        for hang in report.hangs { if let kind = hang.cause?.kind { causeCounts[kind, default: 0] += 1 } }
    }
}
