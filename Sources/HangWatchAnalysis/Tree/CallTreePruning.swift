// Hiding the long tail of a call tree without lying about the weights.

import HangWatchModel

/// A call tree with its light and very deep subtrees left out.
package struct PrunedCallTree: Sendable, Equatable {
    /// The visible tree. Every kept node keeps its full `weightMs`, so a parent may
    /// weigh more than its self time plus its listed children: the difference is hidden.
    package var root: CallTreeNode
    /// How many nodes were left out, counting every node inside a hidden subtree.
    package var hiddenNodeCount: Int
}

extension CallTreeNode {
    /// Leaves out subtrees lighter than `minFraction` of this node's weight and
    /// nodes deeper than `maxDepth` (this node is depth 0).
    ///
    /// Weights are not folded into parents: a reader comparing a parent with its
    /// children must see that something is missing rather than a wrong self time.
    /// `minFraction` 0 keeps every node with a weight; nil `maxDepth` keeps all levels.
    package func pruned(minFraction: Double = 0.005, maxDepth: Int? = nil) -> PrunedCallTree {
        let cutoff = weightMs * max(0, minFraction)
        var hidden = 0
        let root = prunedCopy(depth: 0, cutoff: cutoff, maxDepth: maxDepth, hidden: &hidden)
        return PrunedCallTree(root: root, hiddenNodeCount: hidden)
    }

    private func prunedCopy(depth: Int, cutoff: Double, maxDepth: Int?, hidden: inout Int) -> CallTreeNode {
        var copy = self
        copy.children = []
        for child in children {
            let tooDeep = maxDepth.map { depth + 1 > $0 } ?? false
            if tooDeep || child.weightMs < cutoff {
                hidden += child.nodeCount
            } else {
                copy.children.append(child.prunedCopy(depth: depth + 1, cutoff: cutoff, maxDepth: maxDepth, hidden: &hidden))
            }
        }
        return copy
    }
}
