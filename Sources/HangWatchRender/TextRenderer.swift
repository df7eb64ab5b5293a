// The human-readable report printed when the watched program ends.

import HangWatchModel

/// Renders a `Report` as plain text: a one-line verdict, the list of hangs, and
/// for each reported hang its call tree, the way Time Profiler shows it.
///
/// Output is deterministic (no colours, no clock, no locale) so it can be
/// diffed, pasted into bug reports and checked by tests.
package enum TextRenderer {
    /// Narrower than this and the columns no longer make sense; the width is raised to it.
    package static let minimumWidth = 40

    /// Every line is at most `width` columns (at least `minimumWidth`) and the text ends with a newline.
    package static func render(_ report: Report, width: Int = 100) -> String {
        let width = max(width, minimumWidth)
        var sections: [[String]] = [TextLayout.wrap(summaryLine(report), width: width)
            + (ReportSectionsText.process(report.process, width: width) ?? [])]
        if !report.hangs.isEmpty {
            sections.append(HangListText.lines(report, width: width))
        }
        for hang in report.hangs where hang.reported {
            sections.append(HangListText.detail(hang, width: width))
        }
        if let launch = report.launch {
            sections.append(ReportSectionsText.launch(launch, width: width))
        }
        for frames in report.frameLoops.isEmpty ? Array(report.frames.map { [$0] } ?? []) : report.frameLoops {
            sections.append(ReportSectionsText.frames(frames, width: width))
        }
        if !report.notes.isEmpty {
            sections.append(report.notes.flatMap { TextLayout.wrap("note: " + $0, width: width, hangingIndent: 6) })
        }
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n") + "\n"
    }

    /// "hangwatch: 3 hangs (2 reported ≥ 250 ms), longest 412.3 ms, total 893.0 ms — RunLoopDemo (pid 1234) exited 0 after 2.41 s"
    static func summaryLine(_ report: Report) -> String {
        let summary = report.summary
        let hangs: String
        if summary.hangCount == 0 {
            hangs = "no hangs ≥ " + NumberFormat.thresholdMs(report.thresholds.hangMs)
        } else {
            hangs = "\(summary.hangCount) \(summary.hangCount == 1 ? "hang" : "hangs") "
                + "(\(summary.reportedHangCount) reported ≥ \(NumberFormat.thresholdMs(report.thresholds.reportMs))), "
                + "longest \(NumberFormat.ms(summary.longestHangMs)), total \(NumberFormat.ms(summary.totalHangMs))"
        }
        let process = report.process
        let name = TextLayout.basename(process.executable)
        return "hangwatch: \(hangs) — \(name.isEmpty ? "process" : name) (pid \(process.pid)) "
            + "\(ending(of: process)) after \(NumberFormat.seconds(fromMs: process.wallMs))"
    }

    /// How the program ended; a signal wins because a killed process has no exit code worth showing.
    static func ending(of process: ProcessInfoRecord) -> String {
        if let signal = process.signal { return "killed by " + SignalNames.describe(signal) }
        if let code = process.exitCode { return "exited \(code)" }
        return "ended (exit status unknown)"
    }
}
