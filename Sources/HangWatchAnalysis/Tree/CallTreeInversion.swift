// The bottom-up view (Time Profiler's "Invert Call Tree").

import HangWatchModel

extension CallTreeNode {
    /// The bottom-up tree: the roots are the functions samples ended in, weighted
    /// by their self time (which is also their `selfMs`), and each node's
    /// children are its callers (`selfMs` 0), as in Time Profiler's "Invert Call Tree".
    ///
    /// It answers "where is the time spent, whoever called it", which a top-down
    /// tree scatters over many branches. Works on trees read back from a report
    /// file: it rebuilds the stacks from the nodes' own samples (`sampledStacks()`)
    /// and builds them leaf first. The top-down tree's synthetic `<all>` root is
    /// not a frame and is dropped.
    ///
    /// Thread states survive when the tree has them (`waitingMs`): a top-level
    /// node's waiting time is the blocked part of its self time (all of it for
    /// the wrapped call a blocked sample ends in, such as `usleep`), and a
    /// caller's is the blocked part of the time it led to.
    ///
    /// Invert an unpruned tree: the samples of hidden children are not in a pruned
    /// tree, so they would be missing here too. Returns nil when no node has samples of its own.
    package func inverted() -> CallTreeNode? {
        guard sampleCount > 0, weightMs > 0, weightMs.isFinite else { return nil }
        let msPerSample = weightMs / Double(sampleCount)
        return CallTreeBuilder.build(sampledStacks(), msPerSample: msPerSample, inverted: true,
                                     tracksWaiting: waitingMs != nil)
    }

    /// Time Profiler's Self in an inverted tree: a top-level node is a leaf
    /// function and all of its weight is its self time; the levels below are
    /// its callers, whose time is not their own. (Built from leaf-first paths,
    /// the trie puts self time where the paths end: on the outermost callers.)
    func withInvertedSelf() -> CallTreeNode {
        guard CallTreeBuilder.isSyntheticRoot(self) else { return withSelfOnlyAtTop() }
        var root = self
        root.selfMs = 0
        root.children = children.map { $0.withSelfOnlyAtTop() }
        return root
    }

    /// This node's self time set to its weight, and every node below it to 0.
    private func withSelfOnlyAtTop() -> CallTreeNode {
        var node = self
        node.selfMs = weightMs
        node.children = children.map { $0.withoutSelf() }
        return node
    }

    private func withoutSelf() -> CallTreeNode {
        var node = self
        node.selfMs = 0
        node.children = children.map { $0.withoutSelf() }
        return node
    }
}
