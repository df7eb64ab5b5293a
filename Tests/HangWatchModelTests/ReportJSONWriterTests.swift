import Foundation
import HangWatchModel
import HangWatchTestSupport
import Testing

/// The report's own JSON writer against Foundation's JSONEncoder, byte for byte,
/// on the same trees: reports made up with every field kind, awkward strings and
/// numbers, and trees with keys the report does not have.
@Suite struct ReportJSONWriterTests {

    static let strings = ["", "main", "a \"quoted\" name", "back\\slash", "path/with/slashes", "tab\tnew\nline\r",
                          "bell\u{07}and\u{1F}unit", "é ü 漢字 😇", "$s11RunLoopDemo18parseLargeDocumentyyF",
                          "closure #1 @Sendable (Foundation.Timer) -> () in WaitDemo", "\u{7F}del", "\u{2028}sep"]
    static let doubles: [Double] = [0, -0.0, 0.001, 0.5, 1, 2.5, 16.667, 100, 250, 1000, 301.536, 123456.789,
                                    1e-7, 0.0001, 1e11, 999_999_999_999.999, 1e12, 1e15, 1e16, 1.5e17, 1e21, 1e300,
                                    -3.25, -1e-9, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]

    static func string(_ r: inout SplitMix) -> String { strings[r.below(strings.count)] }
    static func double(_ r: inout SplitMix) -> Double {
        r.chance(50) ? doubles[r.below(doubles.count)] : Double(r.next() % 10_000_000) / Double([1, 7, 1000, 3][r.below(4)])
    }

    static func node(_ r: inout SplitMix, depth: Int) -> CallTreeNode {
        let count = depth > 4 ? 0 : r.below(3)
        return CallTreeNode(symbol: string(&r), image: string(&r), weightMs: double(&r), selfMs: double(&r),
                            sampleCount: r.below(5000), children: (0..<count).map { _ in node(&r, depth: depth + 1) },
                            source: r.chance(30) ? string(&r) : nil, waitingMs: r.chance(50) ? double(&r) : nil)
    }

    static func frames(_ r: inout SplitMix) -> FrameStats {
        FrameStats(name: string(&r), deadlineMs: double(&r), frameCount: r.below(100_000), hitchCount: r.below(50),
                   missedFrames: r.below(50), hitchMs: double(&r), hitchRatioMsPerS: double(&r), band: string(&r),
                   p50Ms: double(&r), p95Ms: double(&r), p99Ms: double(&r), maxMs: double(&r),
                   histogram: (0..<r.below(4)).map { _ in HistogramBucket(upToMs: r.chance(70) ? double(&r) : nil, count: r.below(999)) })
    }

    static func report(_ r: inout SplitMix) -> Report {
        let kinds: [HangKind] = [.cpu, .blocked, .mixed, .unknown]
        let hangs = (0..<r.below(4)).map { id in
            Hang(id: id + 1, thread: ThreadRef(tid: r.below(1 << 22), name: string(&r), role: string(&r)),
                 startMs: double(&r), durationMs: double(&r), reported: r.chance(50), inProgress: r.chance(20),
                 kind: kinds[r.below(kinds.count)], blockedIn: r.chance(40) ? string(&r) : nil, sampleCount: r.below(9999),
                 sampleCoverage: double(&r), callTree: r.chance(70) ? node(&r, depth: 0) : nil,
                 cpuMs: r.chance(60) ? double(&r) : nil, runnableMs: r.chance(60) ? double(&r) : nil,
                 blockedSymbol: r.chance(50) ? string(&r) : nil,
                 lockOwner: r.chance(30) ? LockOwner(tid: r.below(99999), name: string(&r), evidence: string(&r),
                                                     callTree: r.chance(50) ? node(&r, depth: 2) : nil) : nil,
                 runningThreads: (0..<r.below(3)).map { _ in RunningThread(tid: r.below(99999), name: string(&r), cpuMs: double(&r)) },
                 poolThreads: r.chance(30) ? (0..<r.below(3)).map { _ in
                     PoolThread(tid: r.below(99999), name: string(&r), state: string(&r),
                                blockedIn: r.chance(50) ? string(&r) : nil, jobHangId: r.below(9),
                                cpuMs: r.chance(60) ? double(&r) : nil, callTree: r.chance(50) ? node(&r, depth: 2) : nil)
                 } : nil)
        }
        let loops = (0..<r.below(3)).map { _ in frames(&r) }
        return Report(process: ProcessInfoRecord(pid: r.below(1 << 22), executable: string(&r),
                                                 arguments: (0..<r.below(3)).map { _ in string(&r) },
                                                 exitCode: r.chance(70) ? r.below(256) - 1 : nil, signal: r.chance(20) ? r.below(65) : nil,
                                                 wallMs: double(&r), cpuUserMs: r.chance(70) ? double(&r) : nil,
                                                 cpuSystemMs: r.chance(70) ? double(&r) : nil, peakRssKb: r.chance(70) ? r.below(1 << 30) : nil,
                                                 startTimeUnixNs: r.chance(70) ? (r.chance(20) ? .max : Int64(r.next() >> 2)) : nil),
                      thresholds: Thresholds(hangMs: double(&r), reportMs: double(&r), sampleHz: double(&r),
                                             frameMs: r.chance(50) ? double(&r) : nil),
                      summary: Summary(hangs: hangs), hangs: hangs, frames: loops.first, frameLoops: loops,
                      launch: r.chance(50) ? Launch(durationMs: double(&r), reachedFirstWait: r.chance(50), sampleCount: r.below(999),
                                                    callTree: r.chance(50) ? node(&r, depth: 1) : nil) : nil,
                      notes: (0..<r.below(3)).map { _ in string(&r) })
    }

    static func foundation(_ tree: JSONValue) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(tree)
    }

    @Test func reportsAreWrittenAsJSONEncoderWritesThem() throws {
        var r = SplitMix(seed: 0x5EED_0101)
        for round in 0..<400 {
            let tree = JSONReport.tree(of: Self.report(&r))
            let ours = try tree.prettyPrinted(), theirs = try Self.foundation(tree)
            guard ours == theirs else {
                let a = String(decoding: ours, as: UTF8.self).replacingOccurrences(of: "\n", with: "⏎"), b = String(decoding: theirs, as: UTF8.self).replacingOccurrences(of: "\n", with: "⏎")
                let at = zip(a, b).prefix { $0 == $1 }.count
                Issue.record("round \(round): differs at \(at): ours …\(a.dropFirst(max(0, at - 60)).prefix(120))… JSONEncoder …\(b.dropFirst(max(0, at - 60)).prefix(120))…")
                return
            }
        }
    }

    /// Keys the report does not use: digits, case, prefixes of each other.
    @Test func anyKeysSortAsJSONEncoderSortsThem() throws {
        let keys = ["a", "A", "b", "B", "a1", "a2", "a10", "a02", "A10", "ab", "aB", "Ab", "p50Ms", "p5Ms", "p500",
                    "x9y", "x10y", "x09y", "_a", "a_", "Z", "z", "1", "10", "2", "", "key", "keys", "keY"]
        var r = SplitMix(seed: 0x5EED_0102)
        for round in 0..<300 {
            let members = (0..<(1 + r.below(8))).map { _ in (key: keys[r.below(keys.count)], value: JSONValue.int(Int64(r.below(9)))) }
            var seen = Set<String>()
            let tree = JSONValue.object(members.filter { seen.insert($0.key).inserted })
            let ours = try tree.prettyPrinted()
            #expect(try ours == Self.foundation(tree), "round \(round): \(String(decoding: ours, as: UTF8.self))")
        }
    }

    @Test func emptyContainersAtEveryDepth() throws {
        for tree: JSONValue in [.object([]), .array([]), .array([.object([]), .array([])]),
                                .object([("a", .object([])), ("b", .array([.array([])]))])] {
            #expect(try tree.prettyPrinted() == Self.foundation(tree))
        }
    }

    @Test func nonFiniteNumbersAreRefusedAsJSONEncoderRefusesThem() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONValue.double(value).prettyPrinted() }
            #expect(throws: EncodingError.self) { try Self.foundation(.double(value)) }
        }
        // The error names the field, the whole way down.
        let tree = JSONValue.object([("hangs", .array([.object([("id", .int(1))]),
                                                       .object([("cpuMs", .double(.nan))])]))])
        do {
            _ = try tree.prettyPrinted()
            Issue.record("NaN was written")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["hangs", "1", "cpuMs"])
            #expect(context.debugDescription == "Unable to encode Double.nan directly in JSON.")
        } catch {
            Issue.record("\(error)")
        }
    }
}
