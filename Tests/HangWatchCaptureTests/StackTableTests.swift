import HangWatchCapture
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// The stack table's own hash table against a plain dictionary, and the
/// per-sample coverage check against a pc-by-pc search of the images.
@Suite struct StackInterning {
    /// Many stacks, each seen many times: one id per distinct stack, in the
    /// order first seen, and the pcs given back unchanged. Small pc values
    /// make near-identical stacks (one pc apart, one a prefix of another).
    @Test func everyDistinctStackGetsOneIdInFirstSeenOrder() {
        var rng = SplitMix(seed: 7)
        let pool: [[UInt64]] = (0..<4000).map { _ in
            (0..<Int(rng.next() % 41)).map { _ in rng.next() % 24 }
        } + [[], [1], [1, 2], [2, 1], [1, 2, 3]]
        var table = StackTable()
        var expected: [[UInt64]: Int32] = [:]
        for round in 0..<60_000 {
            let stack = pool[Int(rng.next() % UInt64(pool.count))]
            let id = round % 2 == 0 ? table.intern(stack) : stack.withUnsafeBufferPointer { table.intern($0) }
            let want = expected[stack] ?? Int32(expected.count)
            expected[stack] = want
            #expect(id == want)
            #expect(table[id] == stack)
            if id != want { return }
        }
        #expect(table.count == expected.count)
        #expect(expected.count > 3500) // most of the pool was reached
    }

    /// `retain` renumbers the kept stacks in their old order, and interning a
    /// kept stack again finds its new id (the lookup was rebuilt).
    @Test func retainKeepsLookupsInStepWithNewIds() {
        var table = StackTable()
        let stacks: [[UInt64]] = (0..<300).map { i in [UInt64(i), 0x4000, 0x5000] }
        for s in stacks { _ = table.intern(s) }
        let used = Set(stride(from: 1, to: 300, by: 3).map(Int32.init))
        let renumbered = table.retain(used)
        #expect(table.count == used.count)
        for old in used.sorted() {
            let new = renumbered[old]
            #expect(new != nil)
            if let new {
                #expect(table[new] == stacks[Int(old)])
                #expect(table.intern(stacks[Int(old)]) == new)
            }
        }
        #expect(table.intern(stacks[0]) == Int32(used.count)) // dropped: new again
    }

    /// `coversAll`, which tries the previous pc's image first, agrees with a
    /// plain scan of the images for each pc, on stacks that hop between
    /// images, touch their edges and fall into gaps.
    @Test func coverageOfAStackMatchesCoverageOfEachPc() {
        let discovery = ModuleDiscovery()
        let images: [(UInt64, UInt64)] = [(0x1000, 0x2000), (0x2000, 0x2800), (0x4000, 0x9000), (0xA000, 0xA001)]
        for (i, (start, end)) in images.enumerated() {
            discovery.noteKnown(ModuleImage(path: "/lib/m\(i).so", loadBias: start, start: start, end: end, buildId: []),
                                generation: 3, flags: 0)
        }
        var rng = SplitMix(seed: 11)
        let interesting: [UInt64] = [0, 0xFFF, 0x1000, 0x1FFF, 0x2000, 0x27FF, 0x2800, 0x3FFF, 0x4000, 0x8FFF,
                                     0x9000, 0x9FFF, 0xA000, 0xA001, .max]
        for _ in 0..<5000 {
            let pcs = (0..<Int(rng.next() % 8)).map { _ in interesting[Int(rng.next() % UInt64(interesting.count))] }
            let each = pcs.allSatisfy { pc in images.contains { $0.0 <= pc && pc < $0.1 } }
            let all = pcs.withUnsafeBufferPointer { discovery.coversAll($0, generation: 3) }
            #expect(all == each, "\(pcs.map { String($0, radix: 16) })")
            if all != each { return }
        }
        #expect([UInt64(0x1000)].withUnsafeBufferPointer { discovery.coversAll($0, generation: 4) } == false)
        #expect(discovery.covers(0x1000, generation: 3))
        #expect(!discovery.covers(0x2800, generation: 3))
    }
}
