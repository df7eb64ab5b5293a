// A call tree taken back apart into the weighted stacks it was built from.

import HangWatchModel

/// The stacks of a tree, with the time one sample stands for.
///
/// Filters that change the shape of a tree (hiding frames, re-rooting at a
/// symbol) are simplest and exact as rewrites of stacks followed by a rebuild:
/// `CallTreeBuilder` then merges siblings, sorts and weighs the result with
/// the same rules as a freshly captured tree.
///
/// A rewrite must keep each stack's `waiting`, so that the rebuilt tree has
/// the original's waiting time (`tracksWaiting`).
struct CallTreeStacks {
    var stacks: [WeightedStack]
    var msPerSample: Double
    /// Whether the original tree had thread states (`waitingMs`), so the rebuilt one has them too.
    var tracksWaiting: Bool

    /// Every root-to-node path where samples ended, weighted by those samples
    /// (`CallTreeNode.sampledStacks()`, with its one rule for a node's own samples).
    /// Nil when the tree's numbers cannot describe samples (a hostile file).
    init?(_ root: CallTreeNode) {
        guard root.sampleCount > 0, root.weightMs.isFinite, root.weightMs > 0 else { return nil }
        msPerSample = root.weightMs / Double(root.sampleCount)
        stacks = root.sampledStacks()
        tracksWaiting = root.waitingMs != nil
    }

    /// The tree these stacks make, or nil when no sample is left.
    func tree() -> CallTreeNode? {
        CallTreeBuilder.build(stacks, msPerSample: msPerSample, tracksWaiting: tracksWaiting)
    }
}
