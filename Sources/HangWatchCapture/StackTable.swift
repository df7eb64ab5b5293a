/// Every distinct unwound stack of a run, stored once. Samples refer to their
/// stack by index, so a long hang that keeps hitting the same few stacks
/// costs memory for those stacks, not for every sample.
public struct StackTable: Sendable {
    /// Program counters of each stack, innermost first (pcs[0] is the exact pc).
    private var stacks: [[UInt64]] = []
    private var ids: [[UInt64]: Int32] = [:]

    public init() {}

    /// How many distinct stacks there are.
    public var count: Int { stacks.count }

    /// The pcs of stack `id` (an index returned by `intern`).
    public subscript(id: Int32) -> [UInt64] { stacks[Int(id)] }

    /// The index of `pcs`, adding it the first time it is seen. The table and
    /// its lookup share one copy of the array.
    public mutating func intern(_ pcs: [UInt64]) -> Int32 {
        if let id = ids[pcs] { return id }
        let id = Int32(stacks.count)
        stacks.append(pcs)
        ids[pcs] = id
        return id
    }

    /// Keeps only the stacks in `used`, renumbered from 0 in their old order;
    /// returns old id → new id for the callers to renumber their samples.
    package mutating func retain(_ used: Set<Int32>) -> [Int32: Int32] {
        var kept = StackTable()
        var renumbered: [Int32: Int32] = [:]
        for (old, pcs) in stacks.enumerated() where used.contains(Int32(old)) {
            renumbered[Int32(old)] = kept.intern(pcs)
        }
        self = kept
        return renumbered
    }
}
