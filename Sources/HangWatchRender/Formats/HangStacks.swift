// Turning call trees back into the weighted stacks they were built from:
// the input every profile exchange format (folded, speedscope, pprof) wants.

import HangWatchAnalysis
import HangWatchModel

/// A reported hang together with the call tree that carries its evidence.
struct ProfiledHang {
    var hang: Hang
    var tree: CallTreeNode

    /// The tree unfolded into stacks, root first, in the tree's own order (heaviest
    /// first, depth first), each weighted by the samples that ended in its leaf.
    /// The samples of the `<all>` root itself, which no frame explains, are `[unknown]`.
    var stacks: [WeightedStack] {
        tree.sampledStacks().map { $0.frames.isEmpty ? WeightedStack(frames: [unknownFrame], weight: $0.weight) : $0 }
    }
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
