// The Metrics table of the markdown report, and units shared with the diff.

import HangWatchAnalysis
import HangWatchModel

enum MarkdownMetrics {
    static func table(_ report: Report) -> [String] {
        let m = ReportMetrics(report)
        let t = report.thresholds
        let rows: [[String]] = [
            ["Hangs", "\(m.hangCount)", "busy ≥ \(NumberFormat.thresholdMs(t.hangMs)); \(m.reportedHangCount) reported "
                + "with a call tree (≥ \(NumberFormat.thresholdMs(t.reportMs)))"],
            ["Longest hang", m.hangCount > 0 ? NumberFormat.ms(m.longestHangMs) : "—", ""],
            ["Total hang time", NumberFormat.ms(m.totalHangMs),
             NumberFormat.percent(m.totalHangMs, of: m.wallMs) + " of \(NumberFormat.seconds(fromMs: m.wallMs)) wall time"],
            ["Hang rate", m.hangRateSecondsPerHour.map { NumberFormat.fixed($0, 1) + " s/hour" } ?? "n/a",
             "hangs ≥ \(NumberFormat.thresholdMs(ReportMetrics.hangRateThresholdMs)) only: their time ÷ wall time × 3600"],
            ["Hitch ratio", m.hitchRatioMsPerS.map { NumberFormat.fixed($0, 1) + " ms/s" } ?? "n/a", hitchNote(report)],
            ["CPU time", m.cpuMs.map(cpu) ?? "n/a", cpuNote(report.process)],
            ["Peak memory", m.peakRssKb.map(memory) ?? "n/a", m.peakRssKb == nil ? "not measured" : "peak resident set size"],
        ]
        return MarkdownSyntax.table(header: ["Metric", "Value", "Notes"], rightAligned: [1], rows: rows)
    }

    private static func hitchNote(_ report: Report) -> String {
        guard let frames = report.frames else {
            return report.thresholds.frameMs == nil ? "no frame deadline was set (`--frame-ms`)" : "no frame was measured"
        }
        return "\(frames.band); \(frames.hitchCount) of \(frames.frameCount) frames missed the "
            + "\(NumberFormat.thresholdMs(frames.deadlineMs)) deadline, p95 \(NumberFormat.ms(frames.p95Ms))"
    }

    private static func cpuNote(_ process: ProcessInfoRecord) -> String {
        guard let user = process.cpuUserMs, let system = process.cpuSystemMs else { return "not measured" }
        return "user \(cpu(user)) + system \(cpu(system)), the program and the children it waited for"
    }

    /// "1.23 s" for CPU times: they are compared with wall time, which is shown in seconds.
    static func cpu(_ ms: Double) -> String { NumberFormat.fixed(ms / 1000, 2) + " s" }

    /// "24.1 MiB" from KiB (what the kernel reports in `ru_maxrss`).
    static func memory(_ kb: Int) -> String { NumberFormat.fixed(Double(kb) / 1024, 1) + " MiB" }

    /// The process line: how the run ended, its CPU time and peak memory.
    static func processLine(_ report: Report) -> String {
        let p = report.process
        let command = ([TextLayout.basename(p.executable)] + p.arguments).joined(separator: " ")
        var text = "\(MarkdownSyntax.code(command)) (pid \(p.pid)) \(TextRenderer.ending(of: p)) after "
            + NumberFormat.seconds(fromMs: p.wallMs)
        if let user = p.cpuUserMs, let system = p.cpuSystemMs {
            text += "; CPU \(cpu(user + system)) (user \(cpu(user)), system \(cpu(system)))"
        }
        if let rss = p.peakRssKb { text += "; peak RSS \(memory(rss))" }
        return text + "."
    }
}
