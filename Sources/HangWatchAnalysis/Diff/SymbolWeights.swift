// Hang time per symbol over a report's call trees: what `hangwatch diff` compares.

import HangWatchModel

/// The hang time a symbol accounts for in one report.
package struct SymbolWeight: Sendable, Equatable {
    package var symbol: String
    /// The image the symbol was first seen in (symbols are compared by name
    /// alone, because a rebuilt program may load from a different path).
    package var image: String
    /// Inclusive time: the weight of every node of this symbol, counted once
    /// per stack path, so a recursive function is not counted at each level.
    package var totalMs: Double
    /// Self time: samples that ended in this symbol.
    package var selfMs: Double
    /// The shallowest level the symbol was seen at (the root is 0): how far
    /// down the call chain it sits, for telling a caller from its callee.
    package var depth: Int
}

package enum SymbolWeights {
    /// Per-symbol weights over the call trees of the report's reported hangs.
    ///
    /// A node adds its `weightMs` to its symbol's total unless an ancestor on
    /// its path has the same symbol (that ancestor's weight already includes
    /// it). Self time adds up at every node. The synthetic `<all>` root is not
    /// a symbol and is skipped.
    package static func of(_ report: Report) -> [String: SymbolWeight] {
        var weights: [String: SymbolWeight] = [:]
        for tree in report.hangs.filter(\.reported).compactMap(\.callTree) {
            add(tree, to: &weights)
        }
        return weights
    }

    private static func add(_ root: CallTreeNode, to weights: inout [String: SymbolWeight]) {
        // Iterative walk with explicit enter/leave steps: trees can be hundreds of levels deep.
        enum Step { case enter(CallTreeNode, depth: Int), leave(String) }
        var onPath: [String: Int] = [:]
        // The synthetic root is not a frame: its children are the outermost frames.
        var pending: [Step] = [.enter(root, depth: CallTreeBuilder.isSyntheticRoot(root) ? -1 : 0)]
        while let step = pending.popLast() {
            switch step {
            case .leave(let symbol):
                onPath[symbol, default: 1] -= 1
            case .enter(let node, let depth):
                if depth >= 0 {
                    var weight = weights[node.symbol]
                        ?? SymbolWeight(symbol: node.symbol, image: node.image, totalMs: 0, selfMs: 0, depth: depth)
                    if onPath[node.symbol, default: 0] == 0 { weight.totalMs += node.weightMs }
                    weight.selfMs += node.selfMs
                    weight.depth = min(weight.depth, depth)
                    weights[node.symbol] = weight
                    onPath[node.symbol, default: 0] += 1
                    pending.append(.leave(node.symbol))
                }
                for child in node.children.reversed() { pending.append(.enter(child, depth: depth + 1)) }
            }
        }
    }
}
