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

    /// Samples through this node taken while its thread was blocked: `waitingMs`
    /// as a count, inclusive like `sampleCount`. Nil when the tree does not know
    /// thread states (`waitingMs` is nil).
    ///
    /// Read as a share of the node's own weight, so no time per sample is
    /// needed; a report file's milliseconds are rounded to 3 decimals, which at
    /// 0.1 ms a sample (10 kHz, the highest rate) moves the count by far less
    /// than the half a sample rounding absorbs. Clamped to `0...sampleCount`: a
    /// hand-edited file may claim more waiting than weight, or numbers no count can hold.
    var waitingSampleCount: Int? {
        guard let waitingMs else { return nil }
        let all = max(0, sampleCount)
        // NaN fails both comparisons, so it counts as no waiting.
        guard waitingMs > 0, weightMs > 0, weightMs.isFinite else { return 0 }
        let share = waitingMs / weightMs
        guard share < 1 else { return all }
        let count = (share * Double(all)).rounded()
        // Double(Int.max) rounds up to 2^63, which `Int(_:)` would trap on.
        return count >= Double(all) ? all : Int(count)
    }

    /// Of `selfSampleCount`, the samples taken while the thread was blocked:
    /// the node's waiting samples minus its children's (0 when unknown).
    private var selfWaitingSampleCount: Int {
        guard let waiting = waitingSampleCount else { return 0 }
        var inChildren = 0
        for child in children {
            let (sum, overflow) = inChildren.addingReportingOverflow(child.waitingSampleCount ?? 0)
            inChildren = overflow ? Int.max : sum
        }
        return min(selfSampleCount, max(0, waiting - inChildren))  // both operands are in 0...Int.max
    }

    /// Every path from the root to a node that has samples of its own
    /// (`selfSampleCount`), root first, in depth-first display order, weighted
    /// by those samples. The synthetic `<all>` root is not a frame and is left
    /// out of the paths, so its own samples (stacks the unwinder found nothing
    /// in) come out as an empty stack.
    ///
    /// The thread state is part of a sample: a node's own samples taken while
    /// blocked (`waitingMs`) come out as a `waiting` stack, after the stack of
    /// its running ones when it has both, so a tree rebuilt from these stacks
    /// with `tracksWaiting` has the same waiting time. The export formats,
    /// which have no thread state, see such a path twice in a row and merge it
    /// by frames.
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
                let frames = Array(path.reversed())
                let waiting = node.selfWaitingSampleCount
                if own > waiting { stacks.append(WeightedStack(frames: frames, weight: own - waiting)) }
                if waiting > 0 { stacks.append(WeightedStack(frames: frames, weight: waiting, waiting: true)) }
            }
            // Reversed, so children are visited in order (heaviest first): the
            // paths come out in the tree's display order.
            for child in node.children.reversed() { pending.append((child, index)) }
        }
        return stacks
    }
}
