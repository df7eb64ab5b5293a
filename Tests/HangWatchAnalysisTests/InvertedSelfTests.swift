import HangWatchAnalysis
import HangWatchModel
import Testing

/// `report --inverted` keeps Time Profiler's meaning of Self (issue 9, item 5):
/// the top level is the leaves, weighted by their self time, and that weight is
/// their Self; callers below carry none.
@Suite struct InvertedSelfTests {
    static func tree() -> CallTreeNode? {
        let f = { (s: String) in Frame(symbol: s, image: "app") }
        let stacks = [
            WeightedStack(frames: [f("_start"), f("main"), f("handleA"), f("burn")], weight: 300),
            WeightedStack(frames: [f("_start"), f("main"), f("handleB"), f("burn")], weight: 200),
            WeightedStack(frames: [f("_start"), f("main"), f("handleB")], weight: 50),
            WeightedStack(frames: [f("_start"), f("main"), f("memcpy")], weight: 120),
            WeightedStack(frames: [f("_start"), f("main")], weight: 10),
        ]
        return CallTreeBuilder.build(stacks, msPerSample: 1)
    }

    /// Self time per function over the whole normal tree.
    static func selfTimes(_ node: CallTreeNode, into totals: inout [String: Double]) {
        if node.selfMs > 0 { totals[node.symbol, default: 0] += node.selfMs }
        for child in node.children { selfTimes(child, into: &totals) }
    }

    @Test func topLevelIsTheNormalTreesSelfTimes() throws {
        let normal = try #require(Self.tree())
        var expected: [String: Double] = [:]
        Self.selfTimes(normal, into: &expected)
        let inverted = try #require(normal.inverted())
        let top = CallTreeBuilder.isSyntheticRoot(inverted) ? inverted.children : [inverted]
        #expect(Dictionary(uniqueKeysWithValues: top.map { ($0.symbol, $0.weightMs) }) == expected)
        #expect(Dictionary(uniqueKeysWithValues: top.map { ($0.symbol, $0.selfMs) }) == expected)
        // The outermost frame is a caller here, not where the time is spent.
        #expect(expected["burn"] == 500)
        #expect(inverted.first(containing: "_start")?.selfMs == 0)
        func callersSelf(_ node: CallTreeNode) -> Double { node.children.reduce(0) { $0 + $1.selfMs + callersSelf($1) } }
        #expect(top.allSatisfy { callersSelf($0) == 0 })
        #expect(top.first { $0.symbol == "burn" }?.children.map(\.symbol).sorted() == ["handleA", "handleB"])
    }
}
