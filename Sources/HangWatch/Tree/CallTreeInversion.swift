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

        // Leaf-first paths are exactly the inverted order.
        let stacks = sampledPathsLeafFirst { node in
            Self.samples(in: node.selfMs, msPerSample: msPerSample, atMost: node.sampleCount)
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
