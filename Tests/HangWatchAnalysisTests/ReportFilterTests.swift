import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchTestSupport
import Testing

/// Pure tests of the report filters on hand-made reports.
@Suite struct ReportFilterTests {
    static func frame(_ symbol: String, _ image: String = "App") -> Frame { Frame(symbol: symbol, image: image) }
    static let libc = "libc.so.6"

    static func tree(_ stacks: [([Frame], Int)]) -> CallTreeNode? {
        CallTreeBuilder.build(stacks.map { WeightedStack(frames: $0.0, weight: $0.1) }, msPerSample: 1)
    }

    static func hang(_ id: Int, ms: Double, tid: Int = 100, name: String = "main", tree: CallTreeNode? = nil) -> Hang {
        Hang(id: id, thread: ThreadRef(tid: tid, name: name), startMs: Double(id) * 1000, durationMs: ms,
             reported: tree != nil, inProgress: false, kind: .cpu, blockedIn: nil,
             sampleCount: tree?.sampleCount ?? 0, sampleCoverage: tree == nil ? 0 : 1, callTree: tree)
    }

    static func report(_ hangs: [Hang]) -> Report {
        Report(process: ProcessInfoRecord(pid: 100, executable: "/opt/App", arguments: [], exitCode: 0, signal: nil,
                                          wallMs: 10_000),
               thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs)
    }

    /// main → sortRecords → qsort_r[libc] → msort[libc] (self 30) → compare[App] (self 50), and main → idle (20).
    static let qsortTree = tree([
        ([frame("main"), frame("sortRecords"), frame("qsort_r", libc), frame("msort", libc)], 30),
        ([frame("main"), frame("sortRecords"), frame("qsort_r", libc), frame("msort", libc), frame("compare")], 50),
        ([frame("main"), frame("idle")], 20),
    ])

    static func child(_ node: CallTreeNode?, _ symbol: String) -> CallTreeNode? {
        node?.children.first { $0.symbol == symbol }
    }

    static let mixed = report([
        hang(1, ms: 120, tid: 100, name: "main"),
        hang(2, ms: 480, tid: 100, name: "main", tree: qsortTree),
        hang(3, ms: 300, tid: 200, name: "NIO-ELT-0-1", tree: qsortTree),
        hang(4, ms: 480, tid: 201, name: "NIO-ELT-0-2"),
    ])

    @Test func minimumDurationKeepsLongEnoughHangsAndRecomputesTheSummary() {
        let kept = Self.mixed.keepingHangs(atLeastMs: 300)
        #expect(kept.hangs.map(\.id) == [2, 3, 4])
        #expect(kept.summary == Summary(hangCount: 3, reportedHangCount: 2, totalHangMs: 1260, longestHangMs: 480))
        #expect(Self.mixed.keepingHangs(atLeastMs: 481).hangs.isEmpty)
        #expect(Self.mixed.keepingHangs(atLeastMs: 481).summary.longestHangMs == 0)
    }

    @Test func topKeepsTheLongestInTheirOriginalOrder() {
        // 2 and 4 tie at 480 ms; the earlier one wins the tie.
        #expect(Self.mixed.keepingLongestHangs(1).hangs.map(\.id) == [2])
        #expect(Self.mixed.keepingLongestHangs(3).hangs.map(\.id) == [2, 3, 4])
        #expect(Self.mixed.keepingLongestHangs(10).hangs.map(\.id) == [1, 2, 3, 4])
        #expect(Self.mixed.keepingLongestHangs(2).summary.totalHangMs == 960)
    }

    @Test func threadMatchesTidNameOrGlob() {
        #expect(Self.mixed.keepingThread("100").hangs.map(\.id) == [1, 2])
        #expect(Self.mixed.keepingThread("NIO-ELT-0-2").hangs.map(\.id) == [4])
        #expect(Self.mixed.keepingThread("NIO-ELT-*").hangs.map(\.id) == [3, 4])
        #expect(Self.mixed.keepingThread("worker").hangs.isEmpty)
    }

    @Test func hideSystemFoldsLibraryTimeIntoTheCaller() throws {
        let folded = try #require(Self.qsortTree?.hidingSystemFrames())
        #expect(folded.symbol == "main")
        #expect(folded.weightMs == 100, "inclusive weight must not change")
        let sort = try #require(Self.child(folded, "sortRecords"))
        // msort's own 30 ms becomes sortRecords' self time; the comparator moves up under it.
        #expect(sort.weightMs == 80)
        #expect(sort.selfMs == 30)
        #expect(sort.children.map(\.symbol) == ["compare"])
        #expect(sort.children.first?.selfMs == 50)
        #expect(!folded.allSymbols.contains("qsort_r"))
        #expect(!folded.allSymbols.contains("msort"))
        #expect(Self.child(folded, "idle")?.weightMs == 20)
    }

    @Test func hideSystemKeepsAnOutermostSystemFrameAndRecognisesSystemImages() throws {
        let tree = try #require(Self.tree([
            ([Self.frame("start_thread", Self.libc), Self.frame("poll", Self.libc)], 5),
            ([Self.frame("start_thread", Self.libc), Self.frame("work"), Self.frame("memcpy", Self.libc)], 7),
        ]))
        let folded = try #require(tree.hidingSystemFrames())
        #expect(folded.symbol == "start_thread", "no caller to charge the outermost frame to")
        #expect(folded.selfMs == 5)
        #expect(folded.children.map(\.symbol) == ["work"])
        #expect(folded.children.first?.selfMs == 7)

        for system in ["libc.so.6", "/lib/x86_64-linux-gnu/libpthread.so.0", "ld-linux-x86-64.so.2", "libstdc++.so.6",
                       "libgcc_s.so.1", "libm.so.6", "libdispatch.so", "libFoundation.so", "libFoundationEssentials.so",
                       "libswiftCore.so", "libswift_Concurrency.so", "[vdso]", "libhangwatch-agent.so",
                       "/usr/lib/libfoo.so", "/opt/swift/usr/lib/swift/linux/libXYZ.so"] {
            #expect(SystemImages.contains(system), "\(system)")
        }
        for user in ["RunLoopDemo", "/home/me/app/MyApp", "libMyAppCore.so", "libcrypto-ours.so", ""] {
            #expect(!SystemImages.contains(user), "\(user)")
        }
    }

    @Test func focusReRootsAtEveryMatchAndMergesThem() throws {
        let tree = try #require(Self.tree([
            ([Self.frame("main"), Self.frame("a"), Self.frame("tokenize"), Self.frame("scan")], 6),
            ([Self.frame("main"), Self.frame("b"), Self.frame("tokenize")], 4),
            ([Self.frame("main"), Self.frame("c")], 10),
        ]))
        let focused = try #require(tree.focused(on: "token"))
        #expect(focused.symbol == "tokenize")
        #expect(focused.weightMs == 10, "both callers' calls merge into one subtree")
        #expect(focused.selfMs == 4)
        #expect(focused.children.map(\.symbol) == ["scan"])
        #expect(tree.focused(on: "nothing-like-this") == nil)

        let report = Self.report([Self.hang(1, ms: 400, tree: tree), Self.hang(2, ms: 300, tree: Self.qsortTree),
                                  Self.hang(3, ms: 150)])
        let kept = report.focused(on: "tokenize")
        #expect(kept.hangs.map(\.id) == [1], "hangs without the symbol, or without a tree, are dropped")
        #expect(kept.summary.hangCount == 1)
        #expect(kept.hangs.first?.callTree?.symbol == "tokenize")
    }

    /// A blocked hang: main → waitForDisk (9 ms running) → usleep[libc] (311 ms waiting).
    static let blockedTree = CallTreeBuilder.build([
        WeightedStack(frames: [frame("main"), frame("waitForDisk"), frame("usleep", libc)], weight: 311, waiting: true),
        WeightedStack(frames: [frame("main"), frame("waitForDisk")], weight: 9),
    ], msPerSample: 1, tracksWaiting: true)

    @Test func hideSystemAndFocusKeepTheWaitingTime() throws {
        let tree = try #require(Self.blockedTree)
        let folded = try #require(tree.hidingSystemFrames())
        // The wait is folded into its caller, as its self time; that time is still waiting.
        let caller = try #require(Self.child(folded, "waitForDisk"))
        #expect([caller.weightMs, caller.selfMs, caller.waitingMs] == [320, 320, 311])
        #expect(folded.waitingMs == 311)
        let focused = try #require(tree.focused(on: "usleep"))
        #expect([focused.weightMs, focused.selfMs, focused.waitingMs] == [311, 311, 311])
        // --hide-system --inverted: the caller the wait was folded into is the top level.
        let bottomUp = try #require(ReportFilterSet(inverted: true, hideSystem: true)
            .apply(to: Self.report([Self.hang(1, ms: 330, tree: tree)])).hangs.first?.callTree)
        #expect(bottomUp.symbol == "waitForDisk")
        #expect([bottomUp.weightMs, bottomUp.selfMs, bottomUp.waitingMs] == [320, 320, 311])
        // A tree without thread states gets none from a rebuild.
        #expect(Self.qsortTree?.hidingSystemFrames()?.waitingMs == nil)
    }

    @Test func invertingTurnsEveryTreeBottomUp() throws {
        let inverted = Self.report([Self.hang(1, ms: 400, tree: Self.qsortTree)]).invertingCallTrees()
        let root = try #require(inverted.hangs.first?.callTree)
        #expect(CallTreeBuilder.isSyntheticRoot(root))
        #expect(root.children.map(\.symbol) == ["compare", "msort", "idle"])
        #expect(Self.child(Self.child(root, "compare"), "msort") != nil, "callers below callees")
    }

    @Test func filterSetAppliesInAFixedOrderAndSaysSo() throws {
        let set = ReportFilterSet(minimumMs: 200, top: 1, inverted: false, hideSystem: true, focus: nil, thread: "NIO-ELT-*")
        let filtered = set.apply(to: Self.mixed)
        // Thread first (3, 4), then ≥ 200 ms (3, 4), then the single longest (4).
        #expect(filtered.hangs.map(\.id) == [4])
        #expect(filtered.summary.hangCount == 1)
        #expect(filtered.notes.last?.contains("--thread NIO-ELT-* --min-ms 200 --top 1 --hide-system") == true)
        #expect(ReportFilterSet().apply(to: Self.mixed) == Self.mixed)

        // --top before --min-ms would keep nothing here; the fixed order keeps hang 3.
        let order = ReportFilterSet(minimumMs: 250, top: 1, thread: "200").apply(to: Self.mixed)
        #expect(order.hangs.map(\.id) == [3])
        let hidden = try #require(ReportFilterSet(hideSystem: true).apply(to: Self.mixed).hangs[1].callTree)
        #expect(!hidden.allSymbols.contains("qsort_r"))
    }
}
