import Foundation
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchRender
import Testing

/// Causes without running anything: the wait-for chain, the verdict from the
/// measured shares, stopped spans, and the cause in JSON, text and diff.
@Suite struct HangCauseUnitTests {
    static func link(_ waiter: Int32, _ owner: Int32) -> WaitChain.Link {
        WaitChain.Link(waiter: waiter, owner: owner, evidence: .pthreadMutex, ownerName: "t\(owner)")
    }

    static func links(_ pairs: [(Int32, Int32)]) -> [Int32: WaitChain.Link] {
        Dictionary(uniqueKeysWithValues: pairs.map { ($0.0, link($0.0, $0.1)) })
    }

    @Test func aChainBackToItsStartIsACycle() {
        let chain = WaitChain.follow(from: 1, links: Self.links([(1, 2), (2, 1)]))
        #expect(chain.map(\.waiter) == [1, 2])
        #expect(WaitChain.isCycle(chain))
        // Three threads round.
        #expect(WaitChain.isCycle(WaitChain.follow(from: 1, links: Self.links([(1, 2), (2, 3), (3, 1)]))))
        // Into a cycle that does not hold the start: still a cycle (the start waits for it forever).
        let into = WaitChain.follow(from: 1, links: Self.links([(1, 2), (2, 3), (3, 2)]))
        #expect(into.map(\.waiter) == [1, 2, 3] && WaitChain.isCycle(into))
    }

    @Test func aChainThatEndsIsNoCycle() {
        // 3 runs (no link of its own): the chain ends there.
        let chain = WaitChain.follow(from: 1, links: Self.links([(1, 2), (2, 3)]))
        #expect(chain.map(\.owner) == [2, 3])
        #expect(!WaitChain.isCycle(chain))
        #expect(WaitChain.follow(from: 1, links: [:]).isEmpty)
        // A link with no owner ends it too.
        #expect(WaitChain.follow(from: 1, links: Self.links([(1, 0)])).isEmpty)
    }

    @Test func theChainStopsAtEightLinks() {
        let long = Self.links((1...20).map { (Int32($0), Int32($0 + 1)) })
        let chain = WaitChain.follow(from: 1, links: long)
        #expect(chain.count == WaitChain.maxDepth)
        #expect(!WaitChain.isCycle(chain))
        // A cycle longer than eight is not seen as one.
        let ring = Self.links((1...9).map { (Int32($0), Int32($0 % 9 + 1)) })
        #expect(!WaitChain.isCycle(WaitChain.follow(from: 1, links: ring)))
    }

    @Test func theVerdictTakesWhatExplainsMostOfTheHang() {
        typealias F = HangCauseAnalysis.Figures
        #expect(HangCauseAnalysis.verdict(F(durationMs: 900, stoppedMs: 600, throttledMs: nil, runnableMs: 60)) == .stopped)
        #expect(HangCauseAnalysis.verdict(F(durationMs: 900, stoppedMs: 300, throttledMs: nil, runnableMs: 60)) == nil)
        // Throttled time against the time off the CPU: 108 of 197 ms off it.
        #expect(HangCauseAnalysis.verdict(F(durationMs: 256, stoppedMs: nil, throttledMs: 108, runnableMs: 197,
                                            cpuMs: 59)) == .throttled)
        #expect(HangCauseAnalysis.verdict(F(durationMs: 256, stoppedMs: nil, throttledMs: 40, runnableMs: 197,
                                            cpuMs: 59)) == .starvedOfCPU)
        #expect(HangCauseAnalysis.verdict(F(durationMs: 400, stoppedMs: nil, throttledMs: 0, runnableMs: 100,
                                            cpuMs: 300)) == nil)
        // Stopped before throttled: nothing ran at all.
        #expect(HangCauseAnalysis.verdict(F(durationMs: 900, stoppedMs: 600, throttledMs: 900, runnableMs: 0)) == .stopped)
    }

    @Test func stoppedSpansCountByOverlap() {
        let ms: UInt64 = 1_000_000
        let stops = [CapturedStop(generation: 1, fromNs: 100 * ms, toNs: 700 * ms, stoppedNs: 600 * ms),
                     CapturedStop(generation: 2, fromNs: 100 * ms, toNs: 700 * ms, stoppedNs: 600 * ms)]
        #expect(HangCauseAnalysis.stoppedMs(stops, generation: 1, from: 0, to: 1000 * ms) == 600)
        #expect(HangCauseAnalysis.stoppedMs(stops, generation: 1, from: 400 * ms, to: 1000 * ms) == 300)
        #expect(HangCauseAnalysis.stoppedMs(stops, generation: 1, from: 800 * ms, to: 1000 * ms) == nil)
    }

    static func deadlockHang() -> Hang {
        var hang = HangStateUnitTests.hang(blockedIn: "futex")
        hang.inProgress = true
        hang.thread = ThreadRef(tid: 10, name: "main")
        hang.cause = HangCause(kind: .deadlock, threads: [
            DeadlockThread(tid: 10, name: "main", function: "settle_order", waitsFor: 11, evidence: "mutex", callTree: nil),
            DeadlockThread(tid: 11, name: "auditor", function: "record_audit", waitsFor: 10, evidence: "mutex",
                           callTree: CallTreeNode(symbol: "record_audit", image: "demo", weightMs: 300, selfMs: 300,
                                                  sampleCount: 300, children: [])),
        ])
        return hang
    }

    @Test func aDeadlockIsOneLineAndRoundTrips() throws {
        let report = HangStateUnitTests.report([Self.deadlockHang()])
        let text = TextRenderer.render(report)
        #expect(text.contains("deadlock: main (settle_order) waits for auditor (record_audit), which waits for main"), "\(text)")
        #expect(MarkdownRenderer.render(report).contains(#"deadlock: main (settle\_order) waits for auditor (record\_audit)"#))
        let data = try JSONReport.encode(report)
        #expect(try JSONReport.decode(data) == report)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cause = try #require((object["hangs"] as? [[String: Any]])?.first?["cause"] as? [String: Any])
        #expect(cause["kind"] as? String == "deadlock")
        #expect((cause["threads"] as? [[String: Any]])?.map { $0["function"] as? String } == ["settle_order", "record_audit"])
    }

    @Test func throttledAndStoppedSayHowMuch() throws {
        var throttled = HangStateUnitTests.hang(blockedIn: nil)
        throttled.kind = .cpu
        (throttled.blockedSymbol, throttled.lockOwner, throttled.runningThreads) = (nil, nil, [])
        throttled.durationMs = 260
        throttled.throttle = CPUThrottle(throttledMs: 198.5, throttledPeriods: 3, quotaMs: 20, periodMs: 100, cgroupVersion: 1)
        throttled.cause = HangCause(kind: .throttled, ms: 198.5)
        var stopped = throttled
        stopped.id = 2
        stopped.throttle = nil
        stopped.stoppedMs = 600.4
        stopped.durationMs = 900
        stopped.cause = HangCause(kind: .stopped, ms: 600.4)
        let report = HangStateUnitTests.report([throttled, stopped])
        // The line as one, unwrapped.
        let text = TextRenderer.render(report).replacingOccurrences(of: "\n    ", with: " ")
        #expect(text.contains("throttled: the cgroup's CPU limit (20 ms per 100 ms) held the process 198.5 ms of 260.0 ms, in 3 periods"), "\(text)")
        #expect(text.contains("stopped: the process was stopped 600.4 ms of 900.0 ms"), "\(text)")
        #expect(try JSONReport.decode(JSONReport.encode(report)) == report)
        #expect(HTMLReport.render(report).contains("cause-throttled"))
        // cpu.stat sums throttled time over the group's CPUs: more than the hang's wall time is not said as such.
        var wide = throttled
        wide.durationMs = 299.1
        wide.throttle?.throttledMs = 311.1
        wide.cause = HangCause(kind: .throttled, ms: 311.1)
        let wideText = TextRenderer.render(HangStateUnitTests.report([wide])).replacingOccurrences(of: "\n    ", with: " ")
        #expect(wideText.contains("held the process through most of 299.1 ms, in 3 periods (cpu.stat: 311.1 ms throttled, summed over its CPUs)"),
                "\(wideText)")
        #expect(!wideText.contains("311.1 ms of 299.1 ms"))
    }

    @Test func versionFourFilesStillRead() throws {
        var v4 = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(HangStateUnitTests.report([Self.deadlockHang()])))
                              as? [String: Any])
        v4["schemaVersion"] = 4
        var hang = try #require((v4["hangs"] as? [[String: Any]])?.first)
        for key in ["cause", "stoppedMs", "throttle"] { hang[key] = nil }
        v4["hangs"] = [hang]
        let read = try JSONReport.decode(JSONSerialization.data(withJSONObject: v4))
        #expect(read.hangs.first?.cause == nil && read.hangs.first?.lockOwner != nil)
    }

    @Test func diffCountsHangsByCause() {
        let before = HangStateUnitTests.report([Self.deadlockHang()])
        let after = HangStateUnitTests.report([])
        let diff = ReportDiff(before: before, after: after)
        let metric = diff.metrics.first { $0.key == "deadlockHangCount" }
        #expect(metric?.before == 1 && metric?.after == 0, "\(diff.metrics.map(\.key))")
        #expect(!ReportDiff(before: after, after: after).metrics.contains { $0.key == "deadlockHangCount" })
    }
}
