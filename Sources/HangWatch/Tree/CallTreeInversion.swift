// The bottom-up view (Time Profiler's "Invert Call Tree").

extension CallTreeNode {
    /// The bottom-up tree: the roots are the functions samples ended in, weighted
    /// by their self time, and each node's children are its callers.
    ///
    /// It answers "where is the time spent, whoever called it", which a top-down
    /// tree scatters over many branches. Works on trees read back from a report
    /// file, so it rebuilds the stacks from self times rather than needing samples.
    /// The top-down tree's synthetic `<all>` root is not a frame and is dropped.
    ///
    /// Invert an unpruned tree: self time under hidden children is not in a pruned
    /// tree, so it would be missing here too. Returns nil when no node has self time.
    public func inverted() -> CallTreeNode? {
        guard sampleCount > 0, weightMs > 0, weightMs.isFinite else { return nil }
        let msPerSample = weightMs / Double(sampleCount)

        // Flatten with parent links so each stack is rebuilt only where a sample
        // ended, instead of carrying a path copy for every node of a deep tree.
        var frames: [Frame] = []
        var parents: [Int] = []
        var pending: [(node: CallTreeNode, parent: Int)] = [(self, -1)]
        var stacks: [WeightedStack] = []
        while let (node, parent) = pending.popLast() {
            let index = frames.count
            frames.append(Frame(symbol: node.symbol, image: node.image, source: node.source))
            parents.append(parent)
            let selfSamples = Self.samples(in: node.selfMs, msPerSample: msPerSample, atMost: node.sampleCount)
            if selfSamples > 0 {
                var path: [Frame] = []
                var cursor = index
                while cursor >= 0 {
                    path.append(frames[cursor])
                    cursor = parents[cursor]
                }
                // `path` runs leaf to root, which is exactly the inverted order.
                if CallTreeBuilder.isSyntheticRoot(self) { path.removeLast() }
                stacks.append(WeightedStack(frames: path, weight: selfSamples))
            }
            for child in node.children { pending.append((child, index)) }
        }
        return CallTreeBuilder.build(stacks, msPerSample: msPerSample)
    }

    /// Converts a time back to whole samples without trapping on values a
    /// hand-edited or hostile report file may hold (NaN, 1e300, negatives).
    private static func samples(in ms: Double, msPerSample: Double, atMost limit: Int) -> Int {
        let ratio = (ms / msPerSample).rounded()
        guard ratio.isFinite, ratio > 0 else { return 0 }
        return ratio >= Double(limit) ? max(0, limit) : Int(ratio)
    }
}
