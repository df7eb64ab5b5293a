#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every distinct unwound stack of a run, stored once. Samples refer to their
/// stack by index, so a long hang that keeps hitting the same few stacks
/// costs memory for those stacks, not for every sample.
///
/// The reader interns every sample it unwinds (about a thousand a second
/// during a hang), so the lookup is its own open-addressing table over a
/// cheap multiplicative hash of the pcs, read straight from the unwinder's
/// buffer: a `[[UInt64]: Int32]` dictionary cost an array allocation and a
/// SipHash of every pc per sample, a large share of the reader's work per
/// sample (BENCHMARKS.md). The pcs come from the
/// target, which could at worst make its own stacks collide: that slows its
/// reader's lookups, never changes which stack an id names (every hit is
/// compared pc by pc).
public struct StackTable: Sendable {
    /// Program counters of each stack, innermost first (pcs[0] is the exact pc).
    private var stacks: [[UInt64]] = []
    /// Each stack's hash, by id: compared before the pcs, and reused when the table grows.
    private var hashes: [UInt64] = []
    /// Open addressing with linear probing: a stack id + 1, or 0 for an empty
    /// slot. Its count is a power of two, kept at least twice the stacks'.
    private var slots: [Int32] = []

    /// An empty table.
    public init() {}

    /// How many distinct stacks there are.
    public var count: Int { stacks.count }

    /// The pcs of stack `id` (an index returned by `intern`).
    public subscript(id: Int32) -> [UInt64] { stacks[Int(id)] }

    /// The index of `pcs`, adding it the first time it is seen.
    public mutating func intern(_ pcs: [UInt64]) -> Int32 {
        pcs.withUnsafeBufferPointer { intern($0, copy: pcs) }
    }

    /// The index of the stack in `pcs` (not kept: copied when it is new).
    public mutating func intern(_ pcs: UnsafeBufferPointer<UInt64>) -> Int32 {
        intern(pcs, copy: nil)
    }

    private mutating func intern(_ pcs: UnsafeBufferPointer<UInt64>, copy: [UInt64]?) -> Int32 {
        let hash = Self.hash(pcs)
        if let id = find(pcs, hash: hash) { return id }
        let id = Int32(stacks.count)
        stacks.append(copy ?? Array(pcs))
        hashes.append(hash)
        if stacks.count * 2 > slots.count { rehash(capacity: max(64, slots.count * 2)) } else { place(id, hash: hash) }
        return id
    }

    private func find(_ pcs: UnsafeBufferPointer<UInt64>, hash: UInt64) -> Int32? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var at = Int(truncatingIfNeeded: hash) & mask
        while slots[at] != 0 {
            let id = Int(slots[at] - 1)
            if hashes[id] == hash, Self.same(stacks[id], pcs) { return Int32(id) }
            at = (at + 1) & mask
        }
        return nil
    }

    private mutating func place(_ id: Int32, hash: UInt64) {
        let mask = slots.count - 1
        var at = Int(truncatingIfNeeded: hash) & mask
        while slots[at] != 0 { at = (at + 1) & mask }
        slots[at] = id + 1
    }

    private mutating func rehash(capacity: Int) {
        slots = [Int32](repeating: 0, count: capacity)
        for (id, hash) in hashes.enumerated() { place(Int32(id), hash: hash) }
    }

    private static func same(_ stored: [UInt64], _ pcs: UnsafeBufferPointer<UInt64>) -> Bool {
        guard stored.count == pcs.count else { return false }
        return stored.withUnsafeBufferPointer { s in
            guard let a = s.baseAddress, let b = pcs.baseAddress else { return true } // both empty
            return memcmp(a, b, s.count * MemoryLayout<UInt64>.stride) == 0
        }
    }

    /// A multiply-xorshift mix of every pc and the depth, finished so that
    /// the low bits (the slot) depend on all of them.
    private static func hash(_ pcs: UnsafeBufferPointer<UInt64>) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(pcs.count)
        for pc in pcs {
            h = (h ^ pc) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
        }
        h = (h ^ (h >> 29)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 32)
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
