// Taking a call tree back apart into the stacks it was built from: the one
// reconstruction that the filters, the inverted view and the export formats share.

import HangWatchModel

extension CallTreeNode {
    /// Samples whose stack ends at this node: its count minus what its children account for.
    ///
    /// The one rule for a node's own samples. Counts, not `selfMs`: counts are
    /// exact integers, and a node whose children were cut off when the file was
    /// written (see `JSONReport.maxTreeDepth`) keeps their weight. Never
    /// negative: a hand-edited file may claim children heavier than their
    /// parent, and no view has a meaning for a negative sample count.
    package var selfSampleCount: Int {
        var inChildren = 0
        for child in children {
            let (sum, overflow) = inChildren.addingReportingOverflow(max(0, child.sampleCount))
            inChildren = overflow ? Int.max : sum
        }
        // Hostile files can hold any Int here: subtract without trapping.
        let (own, overflow) = sampleCount.subtractingReportingOverflow(inChildren)
        return overflow ? 0 : max(0, own)
    }

    /// Every path from the root to a node that has samples of its own
    /// (`selfSampleCount`), root first, in depth-first display order, weighted
    /// by those samples. The synthetic `<all>` root is not a frame and is left
    /// out of the paths, so its own samples (stacks the unwinder found nothing
    /// in) come out as an empty stack.
    ///
    /// Iterative, with parent links instead of a path copy per node, so the
    /// runaway recursion of a hostile or very deep tree stays linear to walk.
    package func sampledStacks() -> [WeightedStack] {
        let skipRoot = CallTreeBuilder.isSyntheticRoot(self)
        var frames: [Frame] = []
        var parents: [Int] = []
        var pending: [(node: CallTreeNode, parent: Int)] = [(self, -1)]
        var stacks: [WeightedStack] = []
        while let (node, parent) = pending.popLast() {
            let index = frames.count
            frames.append(Frame(symbol: node.symbol, image: node.image, source: node.source))
            parents.append(parent)
            let own = node.selfSampleCount
            if own > 0 {
                var path: [Frame] = []
                var cursor = index
                while cursor >= 0 {
                    path.append(frames[cursor])
                    cursor = parents[cursor]
                }
                if skipRoot { path.removeLast() }
                stacks.append(WeightedStack(frames: path.reversed(), weight: own))
            }
            // Reversed, so children are visited in order (heaviest first): the
            // paths come out in the tree's display order.
            for child in node.children.reversed() { pending.append((child, index)) }
        }
        return stacks
    }
}
