// One call tree as Time Profiler-style text: Weight, %, Self, then the indented tree.

/// Lays out a call tree in a fixed number of columns.
///
/// A hang's tree can hold thousands of nodes and recursion hundreds of levels
/// deep; a terminal report is read top to bottom, so it shows the heavy part,
/// keeps every line inside `width`, and says how much it left out.
struct CallTreeText {
    var width: Int
    /// Nodes lighter than this fraction of the root are hidden.
    var minFraction = 0.005
    /// Nodes deeper than this (the root is depth 0) are hidden.
    var maxDepth = 40
    /// Left margin of every line, so the tree sits under its section header.
    var margin = "  "

    private static let gap = "  "
    private static let percentWidth = 6  // "100.0%"
    /// Past this depth the indentation stops growing and a "…depth" marker is shown instead.
    private static let maxIndentLevels = 12
    /// Room the indentation must leave for the symbol (less on narrow terminals).
    private static let minSymbolWidth = 40

    func lines(for tree: CallTreeNode) -> [String] {
        let pruned = tree.pruned(minFraction: minFraction, maxDepth: maxDepth)
        var rows: [(node: CallTreeNode, depth: Int)] = []
        var pending: [(node: CallTreeNode, depth: Int)] = [(pruned.root, 0)]
        while let (node, depth) = pending.popLast() {
            rows.append((node, depth))
            // Reversed so the heaviest child is popped, and so printed, first.
            for child in node.children.sorted(by: CallTreeBuilder.heavierFirst).reversed() {
                pending.append((child, depth + 1))
            }
        }

        let weightWidth = rows.map { NumberFormat.ms($0.node.weightMs).count }.max().map { max($0, 6) } ?? 6
        let selfWidth = rows.map { NumberFormat.ms($0.node.selfMs).count }.max().map { max($0, 4) } ?? 4
        let prefixWidth = margin.count + weightWidth + selfWidth + Self.percentWidth + 3 * Self.gap.count
        let treeWidth = max(1, width - prefixWidth)
        let symbolRoom = min(Self.minSymbolWidth, treeWidth * 2 / 3)
        let indentLevels = min(Self.maxIndentLevels, max(0, (treeWidth - symbolRoom) / 2))

        var out = [margin + TextLayout.padLeft("Weight", to: weightWidth) + Self.gap
                   + TextLayout.padLeft("%", to: Self.percentWidth) + Self.gap
                   + TextLayout.padLeft("Self", to: selfWidth) + Self.gap + "Symbol"]
        for (node, depth) in rows {
            let columns = margin + TextLayout.padLeft(NumberFormat.ms(node.weightMs), to: weightWidth) + Self.gap
                + TextLayout.padLeft(NumberFormat.percent(node.weightMs, of: tree.weightMs), to: Self.percentWidth) + Self.gap
                + TextLayout.padLeft(NumberFormat.ms(node.selfMs), to: selfWidth) + Self.gap
            let indent: String
            if depth <= indentLevels {
                indent = String(repeating: " ", count: 2 * depth)
            } else {
                indent = String(repeating: " ", count: 2 * indentLevels) + "…\(depth) "
            }
            let label = Self.label(for: node, width: treeWidth - indent.count)
            out.append(TextLayout.truncatingEnd(columns + indent + label, to: width))
        }
        if pruned.hiddenNodeCount > 0 {
            let noun = pruned.hiddenNodeCount == 1 ? "node" : "nodes"
            let message = "(\(pruned.hiddenNodeCount) \(noun) hidden: lighter than "
                + NumberFormat.percent(minFraction, of: 1) + " of " + NumberFormat.ms(tree.weightMs)
                + " or deeper than \(maxDepth) levels)"
            out += TextLayout.wrap(margin + message, width: width, hangingIndent: margin.count + 1)
        }
        return out
    }

    /// "symbol [image]" squeezed into `width`: the image name is kept short, and
    /// the symbol loses its middle, which for Swift is usually generic parameters.
    static func label(for node: CallTreeNode, width: Int) -> String {
        let symbol = node.symbol.isEmpty ? "<unknown>" : node.symbol
        let image = TextLayout.basename(node.image)
        guard width > 0 else { return "" }
        var imagePart = image.isEmpty ? "" : " [" + image + "]"
        if symbol.count + imagePart.count <= width { return symbol + imagePart }
        let imageBudget = width / 3
        if imagePart.count > imageBudget {
            imagePart = imageBudget >= 8 ? " [" + TextLayout.truncatingEnd(image, to: imageBudget - 3) + "]" : ""
        }
        return TextLayout.truncatingMiddle(symbol, to: width - imagePart.count) + imagePart
    }
}
