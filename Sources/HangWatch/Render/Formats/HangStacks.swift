// Turning call trees back into the weighted stacks they were built from:
// the input every profile exchange format (folded, speedscope, pprof) wants.

/// One distinct stack of a hang, root first, with the samples that ended in its leaf.
struct SampledStack: Equatable {
    var frames: [Frame]
    var samples: Int
}

/// A reported hang together with the call tree that carries its evidence.
struct ProfiledHang {
    var hang: Hang
    var tree: CallTreeNode

    /// The tree unfolded into stacks, in the tree's own order (heaviest first, depth first).
    var stacks: [SampledStack] { tree.sampledStacks() }
}

extension Report {
    /// The hangs exporters show: reported ones that have a call tree, in report order.
    var profiledHangs: [ProfiledHang] {
        hangs.compactMap { hang in
            guard hang.reported, let tree = hang.callTree else { return nil }
            return ProfiledHang(hang: hang, tree: tree)
        }
    }
}

/// Stands in for samples the unwinder could not walk at all (the `<all>` root's own samples).
let unknownFrame = Frame(symbol: "[unknown]", image: "")

extension CallTreeNode {
    /// Samples whose stack ends at this node: its count minus what its children account for.
    ///
    /// Never negative: a hand-edited file may claim children heavier than their parent,
    /// and no format has a meaning for a negative sample count.
    var selfSampleCount: Int {
        var inChildren = 0
        for child in children {
            let (sum, overflow) = inChildren.addingReportingOverflow(max(0, child.sampleCount))
            inChildren = overflow ? Int.max : sum
        }
        // Hostile files can hold any Int here: subtract without trapping.
        let (own, overflow) = sampleCount.subtractingReportingOverflow(inChildren)
        return overflow ? 0 : max(0, own)
    }

    /// Every root-to-node path that has self samples, with those samples.
    ///
    /// The `<all>` node that the tree builder adds when stacks share no root is
    /// not a real frame and is left out; its own samples become `[unknown]`.
    func sampledStacks() -> [SampledStack] {
        sampledPathsLeafFirst { $0.selfSampleCount }.map { stack in
            SampledStack(frames: stack.frames.isEmpty ? [unknownFrame] : stack.frames.reversed(), samples: stack.weight)
        }
    }
}

/// Counts per key in first-seen order, so merged output stays deterministic.
struct OrderedCounts<Key: Hashable> {
    private(set) var keys: [Key] = []
    private var counts: [Key: Int] = [:]

    mutating func add(_ key: Key, _ count: Int) {
        if let existing = counts[key] {
            let (sum, overflow) = existing.addingReportingOverflow(count)
            counts[key] = overflow ? Int.max : sum
        } else {
            keys.append(key)
            counts[key] = count
        }
    }

    subscript(key: Key) -> Int { counts[key] ?? 0 }

    var entries: [(key: Key, count: Int)] { keys.map { ($0, counts[$0] ?? 0) } }
}

/// Interns values into dense indices in first-seen order (frame tables, string tables).
struct Interner<Value: Hashable> {
    private(set) var values: [Value] = []
    private var indices: [Value: Int] = [:]

    init(_ initial: [Value] = []) {
        for value in initial { _ = index(of: value) }
    }

    mutating func index(of value: Value) -> Int {
        if let existing = indices[value] { return existing }
        indices[value] = values.count
        values.append(value)
        return values.count - 1
    }
}
