// Direct recursion folded into one node, on a finished tree (the text view's
// counterpart of FrameFilters.collapsingRecursion, which works on stacks).

import HangWatchModel

extension CallTreeNode {
    /// This tree with every node that calls itself directly merged with its
    /// recursive callees: a child with the same symbol and image as its parent
    /// becomes part of the parent, and its children become the parent's.
    ///
    /// A merge sorter or a tree walk otherwise shows as a staircase as deep as
    /// the recursion, with the callee's time split over every level. Weights
    /// stay honest: a node's weight is taken from the outermost call of each
    /// recursion (the inner calls' time is already inside it), self times add
    /// up, and callees reached at several depths are summed into one node.
    /// Indirect recursion (a → b → a) is kept: merging it would invent calls.
    /// The work is iterative, so a runaway recursion cannot exhaust the stack.
    package func collapsingDirectRecursion() -> CallTreeNode {
        var merged = MergedTree(root: self)
        // (node, index of the merged entry its parent went into)
        var pending: [(node: CallTreeNode, parentEntry: Int)] = children.reversed().map { ($0, 0) }
        while let (node, parentEntry) = pending.popLast() {
            let entry = merged.entry(for: node, under: parentEntry)
            for child in node.children.reversed() { pending.append((child, entry)) }
        }
        return merged.tree()
    }
}

/// The collapsed tree under construction, in one flat array (children after parents).
private struct MergedTree {
    private struct Entry {
        var symbol: String
        var image: String
        var weightMs: Double
        var selfMs: Double
        var sampleCount: Int
        var source: String?
        var waitingMs: Double?
        var children: [Frame: Int] = [:]
    }

    private var entries: [Entry]

    init(root: CallTreeNode) {
        entries = [Entry(symbol: root.symbol, image: root.image, weightMs: root.weightMs,
                         selfMs: root.selfMs, sampleCount: root.sampleCount, source: root.source,
                         waitingMs: root.waitingMs)]
    }

    /// Adds `node`, found below the node merged into `parent`, and returns the entry it went into.
    mutating func entry(for node: CallTreeNode, under parent: Int) -> Int {
        if node.symbol == entries[parent].symbol, node.image == entries[parent].image {
            // A recursive call: its time is part of the parent's weight already.
            entries[parent].selfMs += node.selfMs
            return parent
        }
        let frame = Frame(symbol: node.symbol, image: node.image)
        if let existing = entries[parent].children[frame] {
            entries[existing].weightMs += node.weightMs
            entries[existing].selfMs += node.selfMs
            entries[existing].sampleCount = Self.add(entries[existing].sampleCount, node.sampleCount)
            // Waiting adds up like weight (a recursive call's is already in its parent's).
            entries[existing].waitingMs = entries[existing].waitingMs.flatMap { a in node.waitingMs.map { a + $0 } }
            return existing
        }
        entries.append(Entry(symbol: node.symbol, image: node.image, weightMs: node.weightMs,
                             selfMs: node.selfMs, sampleCount: node.sampleCount, source: node.source,
                             waitingMs: node.waitingMs))
        entries[parent].children[frame] = entries.count - 1
        return entries.count - 1
    }

    /// Saturating, for counts read from a report file.
    private static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    /// Nested nodes, children heaviest first, built in one reverse pass.
    func tree() -> CallTreeNode {
        var built = [CallTreeNode?](repeating: nil, count: entries.count)
        for index in entries.indices.reversed() {
            let entry = entries[index]
            var children: [CallTreeNode] = []
            children.reserveCapacity(entry.children.count)
            for childIndex in entry.children.values {
                if let child = built[childIndex] { children.append(child) }
                built[childIndex] = nil
            }
            children.sort(by: CallTreeBuilder.heavierFirst)
            built[index] = CallTreeNode(symbol: entry.symbol, image: entry.image, weightMs: entry.weightMs,
                                        selfMs: entry.selfMs, sampleCount: entry.sampleCount, children: children,
                                        source: entry.source, waitingMs: entry.waitingMs)
        }
        // Entry 0 is the root and is always built.
        return built[0] ?? CallTreeNode(symbol: entries[0].symbol, image: entries[0].image, weightMs: 0,
                                        selfMs: 0, sampleCount: 0, children: [], source: entries[0].source)
    }
}
