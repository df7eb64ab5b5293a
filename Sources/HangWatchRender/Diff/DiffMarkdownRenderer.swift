// `hangwatch diff` as Markdown: the audit template's Before / After metrics table.

import HangWatchAnalysis
import HangWatchModel

enum DiffMarkdownRenderer {
    static func render(_ diff: ReportDiff, before: String, after: String) -> String {
        let metricRows = diff.metrics.map { m in
            [MarkdownSyntax.text(m.label), DiffValueFormat.value(m.before, unit: m.unit),
             DiffValueFormat.value(m.after, unit: m.unit), DiffValueFormat.change(m), DiffValueFormat.percent(m)]
        }
        var out = [
            "# Hang comparison: \(MarkdownSyntax.code(before)) → \(MarkdownSyntax.code(after))",
            "",
            "## Metrics",
            "",
        ]
        out += MarkdownSyntax.table(header: ["Metric", "Before", "After", "Change", "Change %"],
                                    rightAligned: [1, 2, 3, 4], rows: metricRows)
        out += [
            "",
            "## Symbols whose hang time changed most",
            "",
            "Time in the call trees of reported hangs, each symbol counted once per stack (inclusive); "
                + "self time is the part spent in the symbol itself. Frames of one call chain with exactly "
                + "the same change share a row, under the deepest frame of the program's own code.",
            "",
        ]
        if diff.symbols.isEmpty {
            out.append("No symbol's hang time changed.")
        } else {
            let rows = diff.symbols.map { s in
                [MarkdownSyntax.code(SymbolDisplayName(symbol: s.symbol, image: s.image).text) + DiffValueFormat.sameChange(s), DiffValueFormat.signed(s.changeMs, unit: "ms"),
                 NumberFormat.ms(s.beforeMs), NumberFormat.ms(s.afterMs), DiffValueFormat.signed(s.selfChangeMs, unit: "ms")]
            }
            out += MarkdownSyntax.table(header: ["Symbol", "Change", "Before", "After", "Self change"],
                                        rightAligned: [1, 2, 3, 4], rows: rows)
        }
        return out.joined(separator: "\n") + "\n"
    }
}
