import HangWatchAnalysis
import HangWatchModel
import HangWatchTestSupport
import Testing

/// Call-tree building is pure logic over symbolicated stacks, so these tests
/// hand-make the stacks and check every number the renderer will print.
@Suite struct CallTreeTests {
    static func frame(_ symbol: String, _ image: String = "App") -> Frame { Frame(symbol: symbol, image: image) }

    static func stack(_ symbols: [String], _ weight: Int) -> WeightedStack {
        WeightedStack(frames: symbols.map { frame($0) }, weight: weight)
    }

    /// main → a → b ×3, main → a → c ×2, main → d ×1, main ×1.
    static let sample: [WeightedStack] = [
        stack(["main", "a", "b"], 3),
        stack(["main", "a", "c"], 2),
        stack(["main", "d"], 1),
        stack(["main"], 1),
    ]

    static func child(_ node: CallTreeNode, _ symbol: String) -> CallTreeNode? {
        node.children.first { $0.symbol == symbol }
    }

    @Test func sharedOutermostFrameIsTheRoot() throws {
        let root = try #require(CallTreeBuilder.build(Self.sample, msPerSample: 2))
        #expect(root.symbol == "main")
        #expect(root.image == "App")
        #expect(root.sampleCount == 7)
        #expect(root.weightMs == 14)
        #expect(root.selfMs == 2)
        #expect(root.children.map(\.symbol) == ["a", "d"])

        let a = try #require(Self.child(root, "a"))
        #expect(a.weightMs == 10)
        #expect(a.selfMs == 0)
        #expect(a.sampleCount == 5)
        #expect(a.children.map(\.symbol) == ["b", "c"])
        #expect(a.children.map(\.weightMs) == [6, 4])
        #expect(a.children.map(\.selfMs) == [6, 4])
        #expect(a.children.allSatisfy { $0.children.isEmpty })
    }

    @Test func differentOutermostFramesGetSyntheticRoot() throws {
        let root = try #require(CallTreeBuilder.build([Self.stack(["x", "y"], 1), Self.stack(["z"], 2)], msPerSample: 1))
        #expect(root.symbol == CallTreeBuilder.allSymbol)
        #expect(root.image == "")
        #expect(CallTreeBuilder.isSyntheticRoot(root))
        #expect(root.weightMs == 3)
        #expect(root.selfMs == 0)
        #expect(root.children.map(\.symbol) == ["z", "x"])
    }

    @Test func emptyStacksBecomeSelfTimeOfSyntheticRoot() throws {
        let root = try #require(CallTreeBuilder.build([Self.stack(["main", "a"], 4), Self.stack([], 1)], msPerSample: 1))
        #expect(CallTreeBuilder.isSyntheticRoot(root))
        #expect(root.weightMs == 5)
        #expect(root.selfMs == 1)
        #expect(root.children.map(\.symbol) == ["main"])
    }

    @Test func framesMergeOnlyWhenSymbolAndImageMatch() throws {
        let stacks = [
            WeightedStack(frames: [Self.frame("main"), Self.frame("memcpy", "libc.so.6")], weight: 2),
            WeightedStack(frames: [Self.frame("main"), Self.frame("memcpy", "libc.so.6")], weight: 1),
            WeightedStack(frames: [Self.frame("main"), Self.frame("memcpy", "libfast.so")], weight: 1),
        ]
        let root = try #require(CallTreeBuilder.build(stacks, msPerSample: 1))
        #expect(root.children.map(\.image) == ["libc.so.6", "libfast.so"])
        #expect(root.children.map(\.sampleCount) == [3, 1])
    }

    @Test func sameFrameAtDifferentPositionsIsNotMerged() throws {
        let root = try #require(CallTreeBuilder.build([Self.stack(["main", "f", "g"], 1), Self.stack(["main", "g"], 1)],
                                                      msPerSample: 1))
        #expect(root.children.map(\.symbol) == ["f", "g"])
        #expect(root.nodeCount == 4)
    }

    @Test func tiesAreOrderedBySymbolWhateverTheInputOrder() throws {
        let stacks = [Self.stack(["r", "beta"], 2), Self.stack(["r", "alpha"], 2), Self.stack(["r", "gamma"], 5)]
        let forward = try #require(CallTreeBuilder.build(stacks, msPerSample: 1))
        let backward = try #require(CallTreeBuilder.build(stacks.reversed(), msPerSample: 1))
        #expect(forward.children.map(\.symbol) == ["gamma", "alpha", "beta"])
        #expect(forward == backward)
    }

    @Test func nonPositiveWeightsAndEmptyInputGiveNoTree() {
        #expect(CallTreeBuilder.build([], msPerSample: 1) == nil)
        #expect(CallTreeBuilder.build([Self.stack(["main"], 0), Self.stack(["main"], -3)], msPerSample: 1) == nil)
    }

    @Test func heaviestPathFollowsTheHeaviestChild() throws {
        let root = try #require(CallTreeBuilder.build(Self.sample, msPerSample: 1))
        #expect(CallTreeBuilder.heaviestPath(of: root).map(\.symbol) == ["main", "a", "b"])
        let leaf = CallTreeNode(symbol: "only", image: "", weightMs: 1, selfMs: 1, sampleCount: 1, children: [])
        #expect(CallTreeBuilder.heaviestPath(of: leaf).map(\.symbol) == ["only"])
    }

    @Test func pruningHidesLightSubtreesButKeepsWeightsHonest() throws {
        // 1000 samples: "light" is 4 (0.4%, hidden with its 2 descendants), "edge" is 5 (0.5%, kept).
        let stacks = [
            Self.stack(["main", "heavy"], 991),
            Self.stack(["main", "light", "l1", "l2"], 4),
            Self.stack(["main", "edge"], 5),
        ]
        let root = try #require(CallTreeBuilder.build(stacks, msPerSample: 1))
        let pruned = root.pruned()
        #expect(pruned.hiddenNodeCount == 3)
        #expect(pruned.root.weightMs == 1000)
        #expect(pruned.root.sampleCount == 1000)
        #expect(pruned.root.children.map(\.symbol) == ["heavy", "edge"])

        let everything = root.pruned(minFraction: 0)
        #expect(everything.hiddenNodeCount == 0)
        #expect(everything.root == root)
    }

    @Test func pruningByDepth() throws {
        let root = try #require(CallTreeBuilder.build([Self.stack(["main", "a", "b", "c", "d"], 1)], msPerSample: 1))
        let pruned = root.pruned(minFraction: 0, maxDepth: 2)
        #expect(CallTreeBuilder.heaviestPath(of: pruned.root).map(\.symbol) == ["main", "a", "b"])
        #expect(pruned.hiddenNodeCount == 2)
        #expect(root.depth == 5)
        #expect(pruned.root.depth == 3)
    }

    @Test func invertedPutsLeafFunctionsAtTheRoots() throws {
        let root = try #require(CallTreeBuilder.build(Self.sample, msPerSample: 2))
        let inverted = try #require(root.inverted())
        #expect(CallTreeBuilder.isSyntheticRoot(inverted))
        #expect(inverted.weightMs == 14)
        #expect(inverted.children.map(\.symbol) == ["b", "c", "d", "main"])
        #expect(inverted.children.map(\.weightMs) == [6, 4, 2, 2])

        let b = try #require(Self.child(inverted, "b"))
        // Time Profiler's Self: a top-level leaf's weight is its self time; its callers have none.
        #expect(b.selfMs == 6)
        #expect(CallTreeBuilder.heaviestPath(of: b).map(\.symbol) == ["b", "a", "main"])
        #expect(CallTreeBuilder.heaviestPath(of: b).last?.selfMs == 0)

        // Samples that ended in main itself: a root with no callers.
        let main = try #require(Self.child(inverted, "main"))
        #expect(main.selfMs == 2)
        #expect(main.children.isEmpty)

        // Same answer as building bottom-up from the stacks directly.
        #expect(inverted == CallTreeBuilder.build(Self.sample, msPerSample: 2, inverted: true))
    }

    @Test func invertedWithOneLeafFunctionHasItAsRoot() throws {
        let stacks = [Self.stack(["main", "wait", "usleep"], 3), Self.stack(["main", "poll", "usleep"], 1)]
        let inverted = try #require(CallTreeBuilder.build(stacks, msPerSample: 1)?.inverted())
        #expect(inverted.symbol == "usleep")
        #expect(inverted.weightMs == 4)
        #expect(inverted.children.map(\.symbol) == ["wait", "poll"])
    }

    @Test func invertingATreeWithASyntheticRootDropsIt() throws {
        let stacks = [Self.stack(["x", "leaf"], 2), Self.stack(["y", "leaf"], 1)]
        let inverted = try #require(CallTreeBuilder.build(stacks, msPerSample: 1)?.inverted())
        #expect(inverted.symbol == "leaf")
        #expect(inverted.children.map(\.symbol) == ["x", "y"])
        #expect(inverted.nodeCount == 3)
    }

    @Test func collapsingRecursionMergesOnlyDirectRepeats() {
        let stacks = [Self.stack(["main", "f", "f", "f", "g"], 2), Self.stack(["f", "g", "f"], 1)]
        let collapsed = FrameFilters.collapsingRecursion(stacks)
        #expect(collapsed.map { $0.frames.map(\.symbol) } == [["main", "f", "g"], ["f", "g", "f"]])
        #expect(collapsed.map(\.weight) == [2, 1])
    }

    @Test func deepStacksBuildWithoutRecursion() throws {
        let deep = Self.stack(["main"] + (0..<1500).map { "f\($0)" }, 1)
        let root = try #require(CallTreeBuilder.build([deep], msPerSample: 1))
        #expect(root.depth == 1501)
        #expect(root.nodeCount == 1501)
        #expect(root.pruned(maxDepth: 40).hiddenNodeCount == 1460)
    }

    // MARK: recursion collapsed on a finished tree

    /// A merge sort: msort calls itself at several depths, the comparator below each.
    static let recursive: [WeightedStack] = [
        stack(["main", "sort", "msort", "msort", "msort", "compare"], 4),
        stack(["main", "sort", "msort", "msort", "compare"], 3),
        stack(["main", "sort", "msort", "compare"], 2),
        stack(["main", "sort", "msort", "msort"], 1),
        stack(["main", "sort", "msort", "msort", "other", "msort"], 1),
        stack(["main", "sort"], 1),
    ]

    @Test func collapsingRecursionOnATreeMergesDepthsAndKeepsWeights() throws {
        let tree = try #require(CallTreeBuilder.build(Self.recursive, msPerSample: 2))
        #expect(tree.depth == 6)
        let collapsed = tree.collapsingDirectRecursion()
        #expect(collapsed.weightMs == tree.weightMs)
        let sort = try #require(Self.child(collapsed, "sort"))
        let msort = try #require(Self.child(sort, "msort"))
        #expect(msort.weightMs == 22)
        #expect(msort.sampleCount == 11)
        #expect(msort.selfMs == 2)
        #expect(msort.children.map(\.symbol) == ["compare", "other"])
        #expect(msort.children.map(\.weightMs) == [18, 2])
        #expect(msort.children.map(\.sampleCount) == [9, 1])
        // msort → other → msort is indirect: it stays.
        let other = try #require(Self.child(msort, "other"))
        #expect(Self.child(other, "msort")?.selfMs == 2)
        // The same tree as collapsing the stacks before building.
        #expect(collapsed == CallTreeBuilder.build(FrameFilters.collapsingRecursion(Self.recursive), msPerSample: 2))
    }

    @Test func collapsingRecursionNeedsTheSameImageToo() throws {
        let stacks = [WeightedStack(frames: [Self.frame("main"), Self.frame("f", "A"), Self.frame("f", "B")], weight: 1)]
        let tree = try #require(CallTreeBuilder.build(stacks, msPerSample: 1))
        #expect(tree.collapsingDirectRecursion() == tree)
    }

    @Test func runawayRecursionCollapsesWithoutExhaustingTheStack() throws {
        let deep = Self.stack(["main"] + Array(repeating: "recurse", count: 2_000) + ["leaf"], 3)
        let tree = try #require(CallTreeBuilder.build([deep, Self.stack(["main", "other"], 1)], msPerSample: 1))
        let collapsed = tree.collapsingDirectRecursion()
        #expect(collapsed.depth == 3)
        #expect(CallTreeBuilder.heaviestPath(of: collapsed).map(\.symbol) == ["main", "recurse", "leaf"])
        #expect(Self.child(collapsed, "recurse")?.weightMs == 3)
    }

    // MARK: the root chain

    /// What every run-loop hang looks like: a long single path, then the work.
    static let runLoop: [WeightedStack] = [
        stack(["_start", "main", "RunLoop.run", "__CFRunLoopRun", "timer", "work", "a"], 3),
        stack(["_start", "main", "RunLoop.run", "__CFRunLoopRun", "timer", "work", "b"], 1),
    ]

    @Test func rootChainFoldsAllButItsLastFrame() throws {
        let tree = try #require(CallTreeBuilder.build(Self.runLoop, msPerSample: 1))
        let split = tree.splittingRootChain()
        #expect(split.folded.map(\.symbol) == ["_start", "main", "RunLoop.run", "__CFRunLoopRun"])
        #expect(split.folded.allSatisfy { $0.image == "App" })
        // timer is the last single-child frame: it stays, calling work.
        #expect(split.visibleRoot.symbol == "timer")
        #expect(split.visibleRoot.weightMs == tree.weightMs)
        #expect(split.visibleRoot.children.map(\.symbol) == ["work"])
    }

    @Test func rootChainStopsAtSelfTimeAndAtBranches() throws {
        // main has self time: nothing can be folded above work.
        var stacks = Self.runLoop
        stacks.append(Self.stack(["_start", "main"], 1))
        let branching = try #require(CallTreeBuilder.build(stacks, msPerSample: 1))
        let split = branching.splittingRootChain()
        #expect(split.folded.isEmpty)
        #expect(split.visibleRoot == branching)

        // Two frames would be folded into a line as long as they are: not worth it.
        let short = try #require(CallTreeBuilder.build([Self.stack(["main", "loop", "work"], 2),
                                                        Self.stack(["main", "loop", "work", "x"], 1)], msPerSample: 1))
        #expect(short.splittingRootChain().folded.isEmpty)
        #expect(short.splittingRootChain(minimumFolded: 1).folded.map(\.symbol) == ["main"])

        let synthetic = try #require(CallTreeBuilder.build([Self.stack(["x"], 1), Self.stack(["y"], 1)], msPerSample: 1))
        #expect(synthetic.splittingRootChain().visibleRoot == synthetic)
    }
}

