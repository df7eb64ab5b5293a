import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

/// The comparison itself, on hand-made reports.
@Suite struct DiffTests {
    static func frame(_ symbol: String) -> Frame { Frame(symbol: symbol, image: "App") }

    static func report(hangs: [(ms: Double, stacks: [([String], Int)])], wallMs: Double = 3_600_000,
                       cpu: (Double, Double)? = nil, rssKb: Int? = nil) -> Report {
        let list = hangs.enumerated().map { index, hang in
            let tree = CallTreeBuilder.build(hang.stacks.map { WeightedStack(frames: $0.0.map(frame), weight: $0.1) },
                                             msPerSample: 1)
            return Hang(id: index + 1, thread: ThreadRef(tid: 1, name: "main"), startMs: 0, durationMs: hang.ms,
                        reported: hang.ms >= 250, inProgress: false, kind: .cpu, blockedIn: nil,
                        sampleCount: tree?.sampleCount ?? 0, sampleCoverage: 1, callTree: hang.ms >= 250 ? tree : nil)
        }
        return Report(process: ProcessInfoRecord(pid: 1, executable: "/opt/App", arguments: [], exitCode: 0, signal: nil,
                                                 wallMs: wallMs, cpuUserMs: cpu?.0, cpuSystemMs: cpu?.1, peakRssKb: rssKb),
                      thresholds: Thresholds(), summary: Summary(hangs: list), hangs: list)
    }

    @Test func symbolWeightsCountARecursiveSymbolOncePerPath() throws {
        let report = Self.report(hangs: [(400, [(["main", "walk", "walk", "walk", "leaf"], 10),
                                                (["main", "walk", "walk"], 5),
                                                (["main", "other", "leaf"], 3)])])
        let weights = SymbolWeights.of(report)
        #expect(weights["walk"]?.totalMs == 15, "not 15 + 15 + 10 for each recursion level")
        #expect(weights["walk"]?.selfMs == 5)
        #expect(weights["leaf"]?.totalMs == 13, "leaf under two different paths adds up")
        #expect(weights["leaf"]?.selfMs == 13)
        #expect(weights["main"]?.totalMs == 18)
        // Hangs below the report threshold have no tree and add nothing.
        let short = Self.report(hangs: [(100, [(["main", "x"], 100)])])
        #expect(SymbolWeights.of(short).isEmpty)
    }

    @Test func metricsChangeAbsoluteAndPercent() throws {
        let before = Self.report(hangs: [(500, [(["main", "slow"], 500)]), (300, [(["main", "slow"], 300)]), (120, [])],
                                 wallMs: 60_000, cpu: (900, 100), rssKb: 20_480)
        let after = Self.report(hangs: [(260, [(["main", "slow"], 100), (["main", "fast"], 160)])],
                                wallMs: 60_000, cpu: (400, 100), rssKb: 10_240)
        let diff = ReportDiff(before: before, after: after)
        func metric(_ key: String) throws -> ReportDiff.MetricChange {
            try #require(diff.metrics.first { $0.key == key })
        }
        #expect(diff.metrics.map(\.key) == ["hangCount", "reportedHangCount", "longestHangMs", "totalHangMs",
                                            "hangRateSPerHour", "hitchRatioMsPerS", "cpuMs", "peakRssKb"])
        #expect(try metric("hangCount").before == 3)
        #expect(try metric("hangCount").after == 1)
        #expect(try metric("hangCount").change == -2)
        #expect(try abs(#require(metric("hangCount").changePercent) + 66.666) < 0.01)
        #expect(try metric("totalHangMs").change == -660)
        // Hang rate: only hangs ≥ 250 ms, over 60 s of wall time: 800 ms → 48 s/hour, 260 ms → 15.6 s/hour.
        #expect(try abs(#require(metric("hangRateSPerHour").before) - 48) < 1e-9)
        #expect(try abs(#require(metric("hangRateSPerHour").after) - 15.6) < 1e-9)
        #expect(try metric("cpuMs").before == 1000)
        #expect(try metric("cpuMs").changePercent == -50)
        #expect(try metric("peakRssKb").change == -10_240)
        #expect(try metric("hitchRatioMsPerS").before == nil)
        #expect(try metric("hitchRatioMsPerS").change == nil)

        #expect(diff.symbols.map(\.symbol) == ["slow", "main", "fast"], "largest |change| first")
        let slow = try #require(diff.symbols.first { $0.symbol == "slow" })
        #expect(slow.beforeMs == 800)
        #expect(slow.afterMs == 100)
        #expect(slow.changeMs == -700)
        #expect(diff.symbols.first { $0.symbol == "fast" }?.changeMs == 160)
    }

    @Test func symbolsAreTheTenLargestChangesAndUnchangedOnesAreLeftOut() {
        let stacks = (1...15).map { (["main", "f\($0)"], $0 * 10) }
        let before = Self.report(hangs: [(2000, stacks + [(["main", "same"], 50)])])
        let after = Self.report(hangs: [(300, [(["main", "same"], 50)])])
        let diff = ReportDiff(before: before, after: after)
        #expect(diff.symbols.count == 10)
        #expect(diff.symbols.first?.symbol == "main")
        #expect(Array(diff.symbols.dropFirst().map(\.symbol).prefix(3)) == ["f15", "f14", "f13"])
        #expect(!diff.symbols.contains { $0.symbol == "same" })
        #expect(ReportDiff(before: before, after: before).symbols.isEmpty)
    }

    @Test func framesOfOneChainWithTheSameChangeShareARow() throws {
        let before = Self.report(hangs: [(300, [(["_start", "main", "runLoop", "work"], 300)])])
        let after = Self.report(hangs: [(300, [(["_start", "main", "runLoop", "other"], 100)])])
        let rows = ReportDiff(before: before, after: after).symbols
        #expect(rows.map(\.symbol) == ["work", "runLoop", "other"])
        let spine = try #require(rows.first { $0.symbol == "runLoop" })
        #expect(spine.changeMs == -200)
        #expect(spine.sameChange == ["_start", "main"], "outermost first")
    }

    @Test func jsonShapeIsStableAndComplete() throws {
        let before = Self.report(hangs: [(400, [(["main", "slow"], 400)])])
        let after = Self.report(hangs: [])
        let data = try DiffFormat.json.render(ReportDiff(before: before, after: after), before: "b.json", after: "a.json")
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["diffVersion", "before", "after", "metrics", "symbols"])
        #expect(object["diffVersion"] as? Int == 1)
        #expect(object["before"] as? String == "b.json")
        let metrics = try #require(object["metrics"] as? [String: [String: Any]])
        #expect(Set(metrics.keys) == ["hangCount", "reportedHangCount", "longestHangMs", "totalHangMs",
                                      "hangRateSPerHour", "hitchRatioMsPerS", "cpuMs", "peakRssKb"])
        for (key, value) in metrics {
            #expect(Set(value.keys) == ["unit", "before", "after", "change", "changePercent"], "\(key)")
        }
        #expect(metrics["hitchRatioMsPerS"]?["before"] is NSNull, "unknown values are explicit nulls")
        #expect(metrics["hangCount"]?["changePercent"] as? Double == -100)
        let symbols = try #require(object["symbols"] as? [[String: Any]])
        #expect(Set(symbols.first?.keys.map { $0 } ?? []) == ["symbol", "image", "beforeMs", "afterMs", "changeMs",
                                                                "beforeSelfMs", "afterSelfMs", "selfChangeMs",
                                                                "sameChange"])
        // main and slow lost the same 400 ms: one row, under the deeper frame.
        #expect(symbols.count == 1)
        #expect(symbols.first?["symbol"] as? String == "slow")
        #expect(symbols.first?["sameChange"] as? [String] == ["main"])
        #expect(symbols.first?["changeMs"] as? Double == -400)
    }
}
