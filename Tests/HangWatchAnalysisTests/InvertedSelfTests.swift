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

    // MARK: thread states

    /// A blocked hang as `StackResolver` gives it: the wrapped call (`usleep`) is
    /// the leaf of the blocked samples, and the samples are marked waiting.
    static let blocked: [WeightedStack] = {
        let f = { (s: String) in Frame(symbol: s, image: "app") }
        let libc = { (s: String) in Frame(symbol: s, image: "libc.so.6") }
        return [
            WeightedStack(frames: [f("_start"), f("main"), f("waitForDisk"), libc("usleep")], weight: 311, waiting: true),
            WeightedStack(frames: [f("_start"), f("main"), f("waitForDisk")], weight: 9),
            WeightedStack(frames: [f("_start"), f("main"), f("crunch")], weight: 40),
            // One leaf in both states: the thread was caught in poll's own code too.
            WeightedStack(frames: [f("_start"), f("main"), libc("poll")], weight: 20, waiting: true),
            WeightedStack(frames: [f("_start"), f("main"), libc("poll")], weight: 5),
        ]
    }()

    static func row(_ node: CallTreeNode) -> [Double?] { [node.weightMs, node.selfMs, node.waitingMs] }

    @Test func blockedAndRunningLeavesAreTheTopLevelWithTheirSelfAndWaitingTime() throws {
        let normal = try #require(CallTreeBuilder.build(Self.blocked, msPerSample: 1, tracksWaiting: true))
        #expect(normal.first(containing: "usleep").map(Self.row) == [311, 311, 311])
        let inverted = try #require(normal.inverted())
        #expect(CallTreeBuilder.isSyntheticRoot(inverted))
        #expect(Self.row(inverted) == [385, 0, 331])
        // Weight, Self (its weight) and the waiting part of it, leaf by leaf.
        #expect(inverted.children.map(\.symbol) == ["usleep", "crunch", "poll", "waitForDisk"])
        #expect(inverted.children.map(Self.row) == [[311, 311, 311], [40, 40, 0], [25, 25, 20], [9, 9, 0]])
        // A caller's rows say how much of the time it led to was waiting, and own none of it.
        let usleep = try #require(inverted.children.first)
        #expect(CallTreeBuilder.heaviestPath(of: usleep).map(\.symbol) == ["usleep", "waitForDisk", "main", "_start"])
        #expect(CallTreeBuilder.heaviestPath(of: usleep).dropFirst().map(Self.row) == [[311, 0, 311], [311, 0, 311],
                                                                                      [311, 0, 311]])
        // The same tree as inverting the captured stacks directly.
        #expect(inverted == CallTreeBuilder.build(Self.blocked, msPerSample: 1, inverted: true, tracksWaiting: true))
    }

    @Test func anAllBlockedHangHasTheWaitAsItsRoot() throws {
        let waits = Self.blocked.filter { $0.waiting && $0.frames.last?.symbol == "usleep" }
        let inverted = try #require(CallTreeBuilder.build(waits, msPerSample: 1, tracksWaiting: true)?.inverted())
        #expect(inverted.symbol == "usleep")
        #expect(Self.row(inverted) == [311, 311, 311])
        #expect(inverted.children.map(\.symbol) == ["waitForDisk"])
    }

    /// Trees without thread states (files before schema v2) stay without them.
    @Test func unknownThreadStatesStayUnknown() throws {
        let inverted = try #require(CallTreeBuilder.build(Self.blocked, msPerSample: 1)?.inverted())
        #expect(inverted.children.map(\.symbol) == ["usleep", "crunch", "poll", "waitForDisk"])
        #expect(inverted.children.map(\.selfMs) == [311, 40, 25, 9])
        #expect(inverted.first(containing: "usleep")?.waitingMs == nil)
        #expect(inverted.waitingMs == nil)
    }
}
