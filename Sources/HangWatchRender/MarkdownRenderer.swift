// The evidence report in Markdown, laid out like a performance audit.

import HangWatchModel

/// Renders a `Report` as a performance-audit document: a Summary naming the
/// most likely bottleneck, Findings ordered by the hang time they cost (each
/// with symptom, likely cause, call-tree evidence and how to validate a fix),
/// and a Metrics table.
///
/// Output is deterministic and GitHub-flavoured Markdown; every name that comes
/// from the program or a report file is escaped (see `MarkdownSyntax`).
package enum MarkdownRenderer {
    package static func render(_ report: Report) -> String {
        let name = TextLayout.basename(report.process.executable)
        var out: [String] = [
            "# Hang report: \(MarkdownSyntax.text(name.isEmpty ? "process" : name))",
            "",
            MarkdownMetrics.processLine(report) + " " + thresholdsLine(report.thresholds),
            "",
            "## Summary",
            "",
            MarkdownSummary.paragraph(report),
            "",
            "## Findings",
            "",
        ]
        let findings = HangFinding.group(report)
        if findings.isEmpty {
            out += ["No findings: no hang was recorded.", ""]
        }
        for (index, finding) in findings.enumerated() {
            out += section(finding, number: index + 1, report: report)
        }
        out += ["## Metrics", ""] + MarkdownMetrics.table(report) + [""]
        if !report.notes.isEmpty {
            out += ["## Notes", ""] + report.notes.map { "- " + MarkdownSyntax.text($0) } + [""]
        }
        return out.joined(separator: "\n")
    }

    private static func section(_ finding: HangFinding, number: Int, report: Report) -> [String] {
        let t = report.thresholds
        var lines = [
            "### \(number). \(MarkdownFindings.title(finding, reportMs: t.reportMs))",
            "",
            "- **Symptom:** " + MarkdownFindings.symptom(finding),
            "- **Likely cause:** " + MarkdownFindings.likelyCause(finding, reportMs: t.reportMs),
        ]
        let excerpt = MarkdownEvidence.callTreeExcerpt(finding)
        if excerpt.isEmpty {
            lines.append("- **Evidence:** no call tree (the hangs were not sampled).")
        } else {
            lines.append("- **Evidence:** " + excerpt[0])
            lines += excerpt.dropFirst().map { $0.isEmpty ? "" : "  " + $0 }
        }
        lines += MarkdownEvidence.validation(finding, report: report)
        return lines + [""]
    }

    /// "Hangs are loop busy periods ≥ 100 ms; call trees for hangs ≥ 250 ms, sampled at 1000 Hz."
    private static func thresholdsLine(_ t: Thresholds) -> String {
        var text = "Hangs are busy periods of the loop of \(NumberFormat.thresholdMs(t.hangMs)) or more; "
            + "hangs of \(NumberFormat.thresholdMs(t.reportMs)) or more were sampled at "
            + "\(NumberFormat.fixed(t.sampleHz, t.sampleHz == t.sampleHz.rounded() ? 0 : 1)) Hz for a call tree"
        if let frameMs = t.frameMs { text += "; frame deadline \(NumberFormat.thresholdMs(frameMs))" }
        return text + "."
    }
}
