// Turns sampled stacks into a top-down call tree (Time Profiler's default view).

import HangWatchModel

/// Builds `CallTreeNode` trees from symbolicated, weighted stacks.
///
/// The tree is what a reader scans first, so it must be deterministic: equal
/// input gives byte-identical renderings, whatever order the samples came in.
package enum CallTreeBuilder {
    /// Symbol of the synthetic root used when the stacks do not share one outermost frame.
    package static let allSymbol = "<all>"

    /// Builds a top-down tree: callers above callees, the outermost frame at the root.
    ///
    /// - `weightMs` is the samples through a node × `msPerSample`; `selfMs` counts
    ///   only the samples whose stack ends at the node.
    /// - Frames are merged when symbol and image match under the same parent.
    /// - When every stack starts with the same frame that frame is the root, so the
    ///   common case (`main` on the main thread) needs no made-up node. Otherwise,
    ///   or when some stacks are empty (the unwinder found nothing), the root is a
    ///   synthetic `<all>` node whose self weight holds those empty samples.
    /// - Children are sorted heaviest first, ties by symbol then image.
    /// - `inverted: true` builds the bottom-up view from the same stacks (see `inverted()`).
    ///
    /// Returns nil when there is no sample to show (no stacks, or none with a positive weight).
    /// - `tracksWaiting: true` gives every node `waitingMs`, the weight of the
    ///   stacks marked `waiting` (only for stacks whose thread state is known).
    package static func build(_ stacks: [WeightedStack], msPerSample: Double, inverted: Bool = false,
                              tracksWaiting: Bool = false) -> CallTreeNode? {
        var trie = StackTrie()
        trie.tracksWaiting = tracksWaiting
        for stack in stacks where stack.weight > 0 {
            trie.insert(inverted ? Array(stack.frames.reversed()) : stack.frames, weight: stack.weight,
                        waiting: stack.waiting)
        }
        let tree = trie.tree(msPerSample: msPerSample)
        return inverted ? tree?.withInvertedSelf() : tree
    }

    /// True for the `<all>` node `build` adds when the stacks have no common outermost frame.
    package static func isSyntheticRoot(_ node: CallTreeNode) -> Bool {
        node.symbol == allSymbol && node.image.isEmpty
    }

    /// The display order of siblings: heaviest first, then by name so ties never
    /// depend on hashing or sample order.
    package static func heavierFirst(_ a: CallTreeNode, _ b: CallTreeNode) -> Bool {
        if a.weightMs != b.weightMs { return a.weightMs > b.weightMs }
        if a.sampleCount != b.sampleCount { return a.sampleCount > b.sampleCount }
        if a.symbol != b.symbol { return a.symbol < b.symbol }
        return a.image < b.image
    }
}

/// A prefix tree of frames stored in one flat array.
///
/// Flat storage keeps insertion iterative (stacks can be thousands of frames
/// deep in a runaway recursion) and makes the final conversion a single
/// reverse pass: a child is always created after its parent.
struct StackTrie {
    private struct Entry {
        /// The first frame seen for this node; its source stands for the node,
        /// which is consistent because a source is per function.
        var frame: Frame
        var samples = 0
        var selfSamples = 0
        var waitingSamples = 0
        /// Keyed by symbol and image only: sources never split a node.
        var children: [Frame: Int] = [:]
    }

    /// Index 0 is the synthetic root; its frame is never shown unless it is needed.
    private var entries = [Entry(frame: Frame(symbol: CallTreeBuilder.allSymbol, image: ""))]
    private var emptyStackSamples = 0
    /// Whether nodes get `waitingMs` (see `CallTreeBuilder.build`).
    var tracksWaiting = false

    mutating func insert(_ frames: [Frame], weight: Int, waiting: Bool = false) {
        entries[0].samples = Self.add(entries[0].samples, weight)
        if waiting { entries[0].waitingSamples = Self.add(entries[0].waitingSamples, weight) }
        if frames.isEmpty { emptyStackSamples = Self.add(emptyStackSamples, weight) }
        var current = 0
        for frame in frames {
            let key = Frame(symbol: frame.symbol, image: frame.image)
            let next: Int
            if let existing = entries[current].children[key] {
                next = existing
            } else {
                next = entries.count
                entries.append(Entry(frame: frame))
                entries[current].children[key] = next
            }
            entries[next].samples = Self.add(entries[next].samples, weight)
            if waiting { entries[next].waitingSamples = Self.add(entries[next].waitingSamples, weight) }
            current = next
        }
        entries[current].selfSamples = Self.add(entries[current].selfSamples, weight)
    }

    /// Saturating: weights rebuilt from a report file (see `inverted()`) can be
    /// arbitrary, and a wrong-but-huge count beats a trap while reading a file.
    private static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// Converts to nested nodes, or nil when nothing was inserted.
    func tree(msPerSample: Double) -> CallTreeNode? {
        guard entries[0].samples > 0 else { return nil }
        var built = [CallTreeNode?](repeating: nil, count: entries.count)
        for index in entries.indices.reversed() {
            let entry = entries[index]
            var children: [CallTreeNode] = []
            children.reserveCapacity(entry.children.count)
            for childIndex in entry.children.values {
                if let child = built[childIndex] { children.append(child) }
                built[childIndex] = nil  // hand over ownership instead of copying subtrees
            }
            children.sort(by: CallTreeBuilder.heavierFirst)
            built[index] = CallTreeNode(symbol: entry.frame.symbol, image: entry.frame.image,
                                        weightMs: Double(entry.samples) * msPerSample,
                                        selfMs: Double(entry.selfSamples) * msPerSample,
                                        sampleCount: entry.samples, children: children,
                                        source: entry.frame.source,
                                        waitingMs: tracksWaiting ? Double(entry.waitingSamples) * msPerSample : nil)
        }
        guard let root = built[0] else { return nil }
        // One shared outermost frame and no frameless samples: that frame is the real root.
        if emptyStackSamples == 0, root.children.count == 1, let only = root.children.first {
            return only
        }
        return root
    }
}
