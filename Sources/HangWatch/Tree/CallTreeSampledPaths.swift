// Taking a call tree back apart into the stacks it was built from.

extension CallTreeNode {
    /// Every path from the root to a node that has samples of its own, in
    /// depth-first display order, each path leaf first, with those samples (from `selfSamples`, which decides how a node's
    /// own samples are counted). The synthetic `<all>` root is not a frame and
    /// is left out of the paths.
    ///
    /// Iterative, with parent links instead of a path copy per node, so the
    /// runaway recursion of a hostile or very deep tree stays linear to walk.
    func sampledPathsLeafFirst(selfSamples: (CallTreeNode) -> Int) -> [WeightedStack] {
        let skipRoot = CallTreeBuilder.isSyntheticRoot(self)
        var frames: [Frame] = []
        var parents: [Int] = []
        var pending: [(node: CallTreeNode, parent: Int)] = [(self, -1)]
        var stacks: [WeightedStack] = []
        while let (node, parent) = pending.popLast() {
            let index = frames.count
            frames.append(Frame(symbol: node.symbol, image: node.image, source: node.source))
            parents.append(parent)
            let own = selfSamples(node)
            if own > 0 {
                var path: [Frame] = []
                var cursor = index
                while cursor >= 0 {
                    path.append(frames[cursor])
                    cursor = parents[cursor]
                }
                if skipRoot { path.removeLast() }
                stacks.append(WeightedStack(frames: path, weight: own))
            }
            // Reversed, so children are visited in order (heaviest first): the
            // paths come out in the tree's display order.
            for child in node.children.reversed() { pending.append((child, index)) }
        }
        return stacks
    }
}
