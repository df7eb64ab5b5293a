// One call tree as Time Profiler-style text: Weight, %, Self, then the indented tree.

import HangWatchAnalysis
import HangWatchModel

/// Lays out a call tree in a fixed number of columns.
///
/// A hang's tree can hold thousands of nodes and recursion hundreds of levels
/// deep; a terminal report is read top to bottom, so it shows the heavy part,
/// keeps every line inside `width`, and says how much it left out.
package struct CallTreeText {
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

    /// A layout `width` columns wide, with the default thresholds.
    package init(width: Int) { self.width = width }

    /// The tree as the text report shows it: direct recursion collapsed, the
    /// root chain every sample shares folded into one line, light and very
    /// deep nodes hidden (and counted), heaviest callee first, short names.
    package func lines(for tree: CallTreeNode) -> [String] {
        let split = tree.collapsingDirectRecursion().splittingRootChain()
        // The visible root carries the whole weight, so fractions of it are fractions of the tree.
        let pruned = split.visibleRoot.pruned(minFraction: minFraction, maxDepth: maxDepth)
        var rows: [(node: CallTreeNode, depth: Int)] = []
        var pending: [(node: CallTreeNode, depth: Int)] = [(pruned.root, 0)]
        while let (node, depth) = pending.popLast() {
            rows.append((node, depth))
            // Reversed so the heaviest child is popped, and so printed, first.
            for child in node.children.sorted(by: CallTreeBuilder.heavierFirst).reversed() {
                pending.append((child, depth + 1))
            }
        }

        let weights = rows.map(\.node.weightMs) + [tree.weightMs]
        let weightWidth = weights.map { NumberFormat.ms($0).count }.max().map { max($0, 6) } ?? 6
        let selfWidth = rows.map { NumberFormat.ms($0.node.selfMs).count }.max().map { max($0, 4) } ?? 4
        // A Waiting column (time the thread was blocked, not running) when the tree has any.
        let showsWaiting = (tree.waitingMs ?? 0) > 0
        let waitingWidth = showsWaiting ? max(7, NumberFormat.ms(tree.waitingMs ?? 0).count) : 0
        let prefixWidth = margin.count + weightWidth + selfWidth + Self.percentWidth + 3 * Self.gap.count
            + (showsWaiting ? waitingWidth + Self.gap.count : 0)
        let treeWidth = max(1, width - prefixWidth)
        let symbolRoom = min(Self.minSymbolWidth, treeWidth * 2 / 3)
        let indentLevels = min(Self.maxIndentLevels, max(0, (treeWidth - symbolRoom) / 2))

        func columns(weightMs: Double, selfMs: Double, waitingMs: Double?) -> String {
            margin + TextLayout.padLeft(NumberFormat.ms(weightMs), to: weightWidth) + Self.gap
                + TextLayout.padLeft(NumberFormat.percent(weightMs, of: tree.weightMs), to: Self.percentWidth) + Self.gap
                + TextLayout.padLeft(NumberFormat.ms(selfMs), to: selfWidth) + Self.gap
                + (showsWaiting ? TextLayout.padLeft(waitingMs.map(NumberFormat.ms) ?? "", to: waitingWidth) + Self.gap : "")
        }

        var out = [margin + TextLayout.padLeft("Weight", to: weightWidth) + Self.gap
                   + TextLayout.padLeft("%", to: Self.percentWidth) + Self.gap
                   + TextLayout.padLeft("Self", to: selfWidth) + Self.gap
                   + (showsWaiting ? TextLayout.padLeft("Waiting", to: waitingWidth) + Self.gap : "") + "Symbol"]
        if !split.folded.isEmpty {
            let summary = Self.foldedChain(split.folded, width: treeWidth)
            out.append(TextLayout.truncatingEnd(columns(weightMs: tree.weightMs, selfMs: 0, waitingMs: tree.waitingMs)
                                                + summary, to: width))
        }
        for (node, depth) in rows {
            let indent: String
            if depth <= indentLevels {
                indent = String(repeating: " ", count: 2 * depth)
            } else {
                indent = String(repeating: " ", count: 2 * indentLevels) + "…\(depth) "
            }
            let label = Self.label(for: node, width: treeWidth - indent.count)
            out.append(TextLayout.truncatingEnd(columns(weightMs: node.weightMs, selfMs: node.selfMs,
                                                        waitingMs: node.waitingMs) + indent + label,
                                                to: width))
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

    /// "⋯ 11 frames: _start → … → main → RunLoop.run(mode:before:) → …".
    ///
    /// The first frame always appears, and the last one when it is a landmark
    /// (it calls the first visible row: `sortRecords()` above `qsort_r`). In
    /// between, landmarks are listed in order while they fit; the other frames,
    /// and landmarks that do not fit, give way to a "…". A landmark is a frame
    /// a reader would recognise: not a reserved `_name`, not an offset, not
    /// compiler-generated glue such as `partial apply for` or `@objc` thunks.
    static func foldedChain(_ frames: [Frame], width: Int) -> String {
        let header = "⋯ \(frames.count) frames: "
        let names = frames.map { SymbolDisplayName(symbol: $0.symbol, image: $0.image).text }
        func joined(_ shown: Set<Int>) -> String {
            var parts: [String] = []
            var previous = -1
            for index in shown.sorted() {
                if index > previous + 1 { parts.append("…") }
                parts.append(names[index])
                previous = index
            }
            if previous < names.count - 1 { parts.append("…") }
            return header + parts.joined(separator: " → ")
        }
        let everything = joined(Set(names.indices))
        if everything.count <= width { return everything }

        var shown: Set<Int> = [0]
        if let last = names.indices.last, isLandmark(names[last]) { shown.insert(last) }
        for index in names.indices.dropFirst().dropLast() where isLandmark(names[index]) {
            shown.insert(index)
            if joined(shown).count > width {
                shown.remove(index)
                break
            }
        }
        return TextLayout.truncatingEnd(joined(shown), to: width)
    }

    private static let glue = ["partial apply for ", "@objc ", "reabstraction thunk", "dispatch thunk of ",
                               "protocol witness for ", "specialized partial apply"]

    private static func isLandmark(_ name: String) -> Bool {
        !name.hasPrefix("_") && !name.contains("+0x") && !glue.contains { name.hasPrefix($0) }
    }

    /// "symbol [image File.swift:42]" squeezed into `width`: the image name is
    /// kept short, and the symbol is shown in its short form, cut at the end if
    /// it must be. The source (present with `--source-lines`) is the first thing
    /// to go when the line is too long: it stays only while the bracket takes
    /// at most a third of the room.
    static func label(for node: CallTreeNode, width: Int) -> String {
        let image = TextLayout.basename(node.image)
        let name = node.symbol.isEmpty
            ? SymbolDisplayName(text: "<unknown>", baseNameEnd: nil)
            : SymbolDisplayName(symbol: node.symbol, image: image)
        guard width > 0 else { return "" }
        var imagePart = image.isEmpty ? "" : " [" + image + "]"
        let imageBudget = width / 3
        if let source = node.source.map(shortSource), !image.isEmpty {
            let withSource = " [" + image + " " + source + "]"
            if name.text.count + withSource.count <= width { return name.text + withSource }
            if withSource.count <= imageBudget { return name.fitted(to: width - withSource.count) + withSource }
        }
        if name.text.count + imagePart.count <= width { return name.text + imagePart }
        if imagePart.count > imageBudget {
            imagePart = imageBudget >= 8 ? " [" + TextLayout.truncatingEnd(image, to: imageBudget - 3) + "]" : ""
        }
        return name.fitted(to: width - imagePart.count) + imagePart
    }

    /// "Work.swift:42" for "/src/Demo/Work.swift:42": the report file keeps the
    /// whole path, a terminal line has room for the file name only.
    static func shortSource(_ source: String) -> String {
        guard let colon = source.lastIndex(of: ":") else { return TextLayout.basename(source) }
        return TextLayout.basename(String(source[..<colon])) + String(source[colon...])
    }
}
