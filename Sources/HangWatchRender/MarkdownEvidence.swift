// A finding's evidence (a call-tree excerpt) and how to validate a fix.

import HangWatchAnalysis
import HangWatchModel

enum MarkdownEvidence {
    /// Paths longer than this keep their top and bottom: the bottom is where the
    /// time goes, the top says which entry point got there.
    static let maxPathLines = 40
    static let keptTopLines = 8

    /// The heaviest path of the finding's longest sampled hang, system frames
    /// included, as a fenced block.
    static func callTreeExcerpt(_ finding: HangFinding) -> [String] {
        guard let hang = finding.exemplar, let tree = hang.callTree else { return [] }
        // The frames every sample shares (_start … the run loop … the callback)
        // say little: one line names them, the path starts at the last of them.
        let split = tree.splittingRootChain()
        let path = CallTreeBuilder.heaviestPath(of: split.visibleRoot)
        var lines = path.enumerated().map { depth, node in line(node, depth: depth, total: tree.weightMs) }
        if !split.folded.isEmpty {
            let names = split.folded.map { SymbolDisplayName(symbol: $0.symbol, image: $0.image).text }
            lines.insert("  (\(names.count) frames above, in every sample: \(names.joined(separator: " → ")))", at: 0)
        }
        if lines.count > maxPathLines {
            let tail = maxPathLines - keptTopLines - 1
            let hidden = lines.count - keptTopLines - tail
            lines = Array(lines.prefix(keptTopLines)) + ["    … \(hidden) frames …"] + Array(lines.suffix(tail))
        }
        let header = "Hang #\(hang.id): \(NumberFormat.ms(hang.durationMs)), \(hang.sampleCount) "
            + "\(hang.sampleCount == 1 ? "sample" : "samples") "
            + "(\(NumberFormat.percent(hang.sampleCoverage, of: 1, decimals: 0)) covered); heaviest path "
            + "(weight, share of the hang's samples, self time):"
        return causeLines(finding) + [header, ""] + MarkdownSyntax.fenced(lines)
    }

    /// One line per hang of the finding that has a cause (at most three), then a blank line.
    static func causeLines(_ finding: HangFinding) -> [String] {
        let lines = finding.hangs.compactMap { hang in
            HangCauseText.line(hang).map { "Hang #\(hang.id) cause: \(MarkdownSyntax.text($0))" }
        }.prefix(3)
        return lines.isEmpty ? [] : lines.flatMap { [$0, ""] }
    }

    /// "  401.0 ms  100.0%    0.0 ms  main [RunLoopDemo]", indented by depth (capped so deep paths stay readable).
    private static func line(_ node: CallTreeNode, depth: Int, total: Double) -> String {
        let weight = TextLayout.padLeft(NumberFormat.ms(node.weightMs), to: 10)
        let share = TextLayout.padLeft(NumberFormat.percent(node.weightMs, of: total), to: 7)
        let selfTime = TextLayout.padLeft(NumberFormat.ms(node.selfMs), to: 10)
        let indent = String(repeating: " ", count: min(depth, 16))
        let symbol = SymbolDisplayName(symbol: node.symbol, image: node.image).fitted(to: MarkdownSyntax.maxInlineLength)
        let image = node.image.isEmpty ? "" : " [\(TextLayout.basename(node.image))]"
        return "\(weight) \(share) \(selfTime)  \(indent)\(symbol)\(image)"
    }

    /// What to measure after a change, and the commands that measure it.
    static func validation(_ finding: HangFinding, report: Report) -> [String] {
        var thresholds = report.thresholds
        let expectation: String
        switch finding.cause {
        case .code(let frame):
            expectation = "after a change, capture the same scenario again and compare: the hang time in "
                + "\(MarkdownSyntax.code(SymbolDisplayName(symbol: frame.symbol, image: frame.image).text)) (now \(NumberFormat.ms(finding.totalMs))) should fall, "
                + "and no hang should stay at or above \(NumberFormat.thresholdMs(ReportMetrics.hangRateThresholdMs))."
        case .systemOnly:
            expectation = "capture again with system libraries folded into their callers "
                + "(`hangwatch report after.json --hide-system`) to see which call of the program leads there, then compare."
        case .noSamples:
            expectation = "capture again and check that these hangs get samples; the notes below say why they did not."
        case .belowReportThreshold:
            thresholds.reportMs = thresholds.hangMs
            expectation = "capture again with call trees for these hangs too (`--report-ms \(command(report.thresholds.hangMs))`), then compare."
        }
        let program = ([report.process.executable] + report.process.arguments).map(shellQuoted).joined(separator: " ")
        let commands = [
            (["hangwatch run --format json -o after.json"] + rerunFlags(thresholds) + ["--", program])
                .joined(separator: " "),
            "hangwatch diff before.json after.json",
        ]
        return ["- **Validation:** " + expectation, ""] + MarkdownSyntax.fenced(commands, info: "sh").map { "  " + $0 }
    }

    /// The thresholds the report was made with, as flags, so the new capture measures the same thing.
    private static func rerunFlags(_ thresholds: Thresholds) -> [String] {
        let defaults = Thresholds()
        var flags: [String] = []
        if thresholds.hangMs != defaults.hangMs { flags += ["--hang-ms", command(thresholds.hangMs)] }
        if thresholds.reportMs != defaults.reportMs { flags += ["--report-ms", command(thresholds.reportMs)] }
        if thresholds.sampleHz != defaults.sampleHz { flags += ["--sample-hz", command(thresholds.sampleHz)] }
        if let frameMs = thresholds.frameMs { flags += ["--frame-ms", command(frameMs)] }
        return flags
    }

    private static func command(_ value: Double) -> String {
        NumberFormat.fixed(value, value == value.rounded() ? 0 : 3)
    }

    /// Single-quoted for a POSIX shell when it holds anything but safe characters.
    static func shellQuoted(_ word: String) -> String {
        let safe = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0)) }
        if safe && !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
