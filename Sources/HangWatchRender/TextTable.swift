// A small fixed-width table whose text columns give way when the terminal is narrow.

struct TextTable {
    struct Column {
        var title: String
        var alignRight = false
        /// Flexible columns (names, free text) shrink, with an ellipsis, to fit the width;
        /// numbers never do, because a cut number reads as a different number.
        var flexible = false
        var minWidth = 8
    }

    var columns: [Column]
    var rows: [[String]] = []

    private static let gap = "  "

    func lines(width: Int, margin: String = "") -> [String] {
        var widths = columns.indices.map { index in
            rows.reduce(columns[index].title.count) { max($0, index < $1.count ? $1[index].count : 0) }
        }
        func total() -> Int { margin.count + widths.reduce(0, +) + Self.gap.count * max(0, widths.count - 1) }
        while total() > width {
            let candidates = columns.indices.filter { columns[$0].flexible && widths[$0] > columns[$0].minWidth }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
        }
        let render = { (cells: [String]) -> String in
            let padded = columns.indices.map { index -> String in
                let cell = TextLayout.truncatingEnd(index < cells.count ? cells[index] : "", to: widths[index])
                return columns[index].alignRight ? TextLayout.padLeft(cell, to: widths[index])
                                                 : TextLayout.padRight(cell, to: widths[index])
            }
            let line = margin + padded.joined(separator: Self.gap)
            return TextLayout.truncatingEnd(String(line.reversed().drop(while: { $0 == " " }).reversed()), to: width)
        }
        return [render(columns.map(\.title))] + rows.map(render)
    }
}
