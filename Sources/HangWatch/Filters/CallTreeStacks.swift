// A call tree taken back apart into the weighted stacks it was built from.

/// The stacks of a tree, with the time one sample stands for.
///
/// Filters that change the shape of a tree (hiding frames, re-rooting at a
/// symbol) are simplest and exact as rewrites of stacks followed by a rebuild:
/// `CallTreeBuilder` then merges siblings, sorts and weighs the result with
/// the same rules as a freshly captured tree.
struct CallTreeStacks {
    var stacks: [WeightedStack]
    var msPerSample: Double

    /// Every root-to-node path where samples ended, weighted by those samples.
    ///
    /// Self samples are the node's count less its children's, not `selfMs`:
    /// counts are exact integers, and a node whose children were cut off when
    /// the file was written (see `JSONReport.maxTreeDepth`) keeps their weight.
    /// The synthetic `<all>` root is not a frame and is left out of the paths.
    /// Nil when the tree's numbers cannot describe samples (a hostile file).
    init?(_ root: CallTreeNode) {
        guard root.sampleCount > 0, root.weightMs.isFinite, root.weightMs > 0 else { return nil }
        msPerSample = root.weightMs / Double(root.sampleCount)
        stacks = root.sampledPathsLeafFirst { node in
            let childSamples = node.children.reduce(0) { Self.saturatingAdd($0, max(0, $1.sampleCount)) }
            return max(0, node.sampleCount) > childSamples ? node.sampleCount - childSamples : 0
        }.map { WeightedStack(frames: $0.frames.reversed(), weight: $0.weight) }
    }

    /// The tree these stacks make, or nil when no sample is left.
    func tree() -> CallTreeNode? {
        CallTreeBuilder.build(stacks, msPerSample: msPerSample)
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
