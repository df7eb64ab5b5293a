// `hangwatch diff` as plain text: a metrics table and the symbols that moved.

import HangWatchAnalysis
import HangWatchModel

enum DiffTextRenderer {
    static let width = 100

    static func render(_ diff: ReportDiff, before: String, after: String) -> String {
        var metrics = TextTable(columns: [
            .init(title: "Metric", flexible: true, minWidth: 12),
            .init(title: "Before", alignRight: true),
            .init(title: "After", alignRight: true),
            .init(title: "Change", alignRight: true),
            .init(title: "Change %", alignRight: true),
        ])
        metrics.rows = diff.metrics.map { m in
            [m.label, DiffValueFormat.value(m.before, unit: m.unit), DiffValueFormat.value(m.after, unit: m.unit),
             DiffValueFormat.change(m), DiffValueFormat.percent(m)]
        }
        var sections = [
            TextLayout.wrap("hangwatch diff: \(before) → \(after)", width: width),
            metrics.lines(width: width),
        ]
        var symbols = TextTable(columns: [
            .init(title: "Change", alignRight: true),
            .init(title: "Before", alignRight: true),
            .init(title: "After", alignRight: true),
            .init(title: "Self change", alignRight: true),
            .init(title: "Symbol", flexible: true, minWidth: 20),
        ])
        symbols.rows = diff.symbols.map { s in
            [DiffValueFormat.signed(s.changeMs, unit: "ms"), NumberFormat.ms(s.beforeMs), NumberFormat.ms(s.afterMs),
             DiffValueFormat.signed(s.selfChangeMs, unit: "ms"),
             SymbolDisplayName(symbol: s.symbol, image: s.image).text + (s.image.isEmpty ? "" : " [\(TextLayout.basename(s.image))]") + DiffValueFormat.sameChange(s)]
        }
        let heading = "Symbols whose hang time changed most (time in the call trees of reported hangs, "
            + "each symbol counted once per stack; frames of one call chain with the same change share a row):"
        sections.append(TextLayout.wrap(heading, width: width)
                        + (diff.symbols.isEmpty ? ["  (no symbol's hang time changed)"] : symbols.lines(width: width, margin: "  ")))
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n") + "\n"
    }
}
