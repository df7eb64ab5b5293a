import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// Ways to damage a report file, each a plausible real-world or hostile input.
enum ReportMutation: CaseIterable {
    case flipBytes, truncate, deepNesting, hugeNumber, wrongType, duplicateSpan, dropSpan

    static let tokens: [String] = ["1e308", "-1e308", "9223372036854775807", "-9223372036854775808",
                                   "18446744073709551616", "1e400", "-0", "0.0000001", "NaN", "\"\"", "null",
                                   "true", "[]", "{}", "\"slow\"", "[[[[[]]]]]", "{\"a\":{}}", "-1"]

    func apply(to bytes: [UInt8], _ random: inout SplitMix) -> [UInt8] {
        var out = bytes
        switch self {
        case .flipBytes:
            for _ in 0..<(1 + random.below(8)) {
                out[random.below(out.count)] = UInt8(truncatingIfNeeded: random.next())
            }
        case .truncate:
            out = Array(out.prefix(random.below(out.count)))
        case .deepNesting:
            // Nesting right where a value starts, from just under to well over the reader's limit.
            let depth = random.pick([10, 180, 400, 499, 501, 5_000, 100_000])
            let at = valueStart(in: out, &random)
            out.replaceSubrange(at..<at, with: Array(String(repeating: "[", count: depth).utf8)
                                + Array("1".utf8) + Array(String(repeating: "]", count: depth).utf8) + Array(",".utf8))
        case .hugeNumber, .wrongType:
            // Replace one number (or `true`/`false`/`null`/string) with a hostile token.
            let at = valueStart(in: out, &random)
            var end = at
            while end < out.count, !",}]\n".utf8.contains(out[end]) { end += 1 }
            let token = self == .hugeNumber ? random.pick(Array(Self.tokens.prefix(9))) : random.pick(Self.tokens)
            out.replaceSubrange(at..<end, with: Array(token.utf8))
        case .duplicateSpan:
            let start = random.below(out.count)
            let length = min(out.count - start, random.below(400))
            out.insert(contentsOf: out[start..<(start + length)], at: random.below(out.count))
        case .dropSpan:
            let start = random.below(out.count)
            out.removeSubrange(start..<min(out.count, start + random.below(200)))
        }
        return out
    }

    /// The position just after a `: ` (where an object value starts), or anywhere when there is none.
    private func valueStart(in bytes: [UInt8], _ random: inout SplitMix) -> Int {
        for _ in 0..<50 {
            let at = random.below(bytes.count)
            if at >= 2 && bytes[at - 2] == UInt8(ascii: ":") && bytes[at - 1] == UInt8(ascii: " ") { return at }
        }
        return random.below(bytes.count)
    }
}

extension Integration {
    /// Report files are input: damaged ones must be refused cleanly or read and
    /// rendered, never crash hangwatch.
    @Suite struct ReportReaderFuzz {
        static let iterations = 3_000

        /// Everything a `report` or `diff` invocation can do with a decoded report.
        /// A report the reader accepted must render in every format: any renderer
        /// error here fails the test (it would be a failed `report` run, not a clean refusal).
        static func exercise(_ report: Report, against original: Report) throws {
            let filters: [ReportFilterSet] = [
                ReportFilterSet(minimumMs: 200), ReportFilterSet(top: 1), ReportFilterSet(inverted: true),
                ReportFilterSet(hideSystem: true), ReportFilterSet(focus: "parse"), ReportFilterSet(thread: "1"),
                ReportFilterSet(minimumMs: 0, top: 2, inverted: true, hideSystem: true, focus: "Loop", thread: "*"),
            ]
            for filter in filters {
                let filtered = filter.apply(to: report)
                #expect(!TextRenderer.render(filtered).isEmpty)
                #expect(!MarkdownRenderer.render(filtered).isEmpty)
            }
            for format in ReportFormat.allCases {
                let data = try format.render(report)
                #expect(!data.isEmpty, "\(format) rendered nothing")
                // What hangwatch writes, it must read back.
                if format == .json { _ = try JSONReport.decode(data) }
            }
            for format in DiffFormat.allCases {
                #expect(!(try format.render(ReportDiff(before: original, after: report), before: "a", after: "b")).isEmpty)
                #expect(!(try format.render(ReportDiff(before: report, after: original), before: "a", after: "b")).isEmpty)
            }
        }

        /// What one lane of the fuzz saw.
        struct LaneCounts: Sendable {
            var decoded = 0, refused = 0, unchanged = 0
            var byMutation: [String: (decoded: Int, refused: Int)] = [:]
        }

        /// Rounds `lane`, `lane + lanes`, ... of the fuzz, on their own seeded stream.
        static func fuzzLane(_ lane: Int, of lanes: Int, valid: [UInt8], original: Report) throws -> LaneCounts {
            var random = SplitMix(seed: 0x4841_4E47 &+ UInt64(lane))
            var counts = LaneCounts()
            for round in stride(from: lane, to: Self.iterations, by: lanes) {
                let mutation = ReportMutation.allCases[round % ReportMutation.allCases.count]
                let bytes = mutation.apply(to: valid, &random)
                // Only the reader may refuse, and only with a ReportFileError; anything
                // else it throws propagates and fails the test.
                let report: Report
                do {
                    report = try JSONReport.decode(Data(bytes))
                } catch is ReportFileError {
                    counts.refused += 1
                    counts.byMutation["\(mutation)", default: (0, 0)].refused += 1
                    // A refused input is one that is not the valid file.
                    #expect(bytes != valid, "\(mutation) round \(round): the unmodified file was refused")
                    continue
                }
                // Rendering errors are not caught here: they fail the test.
                try Self.exercise(report, against: original)
                counts.decoded += 1
                if bytes == valid { counts.unchanged += 1 }
                counts.byMutation["\(mutation)", default: (0, 0)].decoded += 1
                // Truncation to under half the file cannot leave a complete report.
                if mutation == .truncate {
                    #expect(bytes.count == valid.count || bytes.count > valid.count / 2,
                            "round \(round): a report cut to \(bytes.count) of \(valid.count) bytes was accepted")
                }
            }
            return counts
        }

        // Two lanes, one per core of the CI machine: the rounds are independent, and
        // one lane took 24 s of a serial CI run (2026-12-04).
        @Test func mutatedReportsNeverCrashTheReaderFiltersOrRenderers() async throws {
            let original = try DemoReports.standard.get().report
            let valid = try [UInt8](Data(contentsOf: URL(fileURLWithPath: DemoReports.file(DemoReports.standard))))
            let lanes = 2
            let all = try await withThrowingTaskGroup(of: LaneCounts.self) { group in
                for lane in 0..<lanes {
                    group.addTask { try Self.fuzzLane(lane, of: lanes, valid: valid, original: original) }
                }
                return try await group.reduce(into: [LaneCounts]()) { $0.append($1) }
            }
            let decoded = all.reduce(0) { $0 + $1.decoded }, refused = all.reduce(0) { $0 + $1.refused }
            let unchanged = all.reduce(0) { $0 + $1.unchanged }
            let byMutation = all.reduce(into: [String: (decoded: Int, refused: Int)]()) { merged, lane in
                for (kind, counts) in lane.byMutation {
                    merged[kind, default: (0, 0)].decoded += counts.decoded
                    merged[kind, default: (0, 0)].refused += counts.refused
                }
            }
            #expect(decoded + refused == Self.iterations)
            // Both paths were exercised: some damage is survivable, most is refused.
            #expect(decoded > 50, "\(byMutation)")
            #expect(refused > 500, "\(byMutation)")
            // Nesting beyond the reader's limit and truncation are refused far more often than not.
            for kind in ["truncate", "deepNesting"] {
                let counts = byMutation[kind, default: (0, 0)]
                #expect(counts.refused > counts.decoded, "\(kind): \(counts)")
            }
            // Decoded inputs are mostly damaged-but-readable ones, not mutations that changed nothing.
            #expect(unchanged < decoded, "\(byMutation)")
        }

        /// The original, made hostile on purpose in ways that stay valid JSON.
        @Test func hostileButWellFormedReportsRender() throws {
            let text = try String(contentsOfFile: DemoReports.file(DemoReports.standard), encoding: .utf8)
            let original = try JSONReport.decode(Data(text.utf8))
            let edits: [(String, String)] = [
                ("\"weightMs\" : ", "\"weightMs\" : 1e308, \"x\" : "),
                ("\"sampleCount\" : ", "\"sampleCount\" : 9223372036854775807, \"x\" : "),
                ("\"durationMs\" : ", "\"durationMs\" : -1e308, \"x\" : "),
                ("\"selfMs\" : ", "\"selfMs\" : -5, \"x\" : "),
                ("\"wallMs\" : ", "\"wallMs\" : 0, \"x\" : "),
                ("\"sampleCoverage\" : ", "\"sampleCoverage\" : 1e300, \"x\" : "),
                ("\"symbol\" : \"", "\"symbol\" : \"`|\\n# x\\u0000"),
            ]
            for (find, replace) in edits {
                let hostile = text.replacingOccurrences(of: find, with: replace)
                let report = try JSONReport.decode(Data(hostile.utf8))
                try Self.exercise(report, against: original)
            }
        }

        /// The same damage through the real command line: a clean status and one line, never a crash.
        @Test func damagedFilesThroughTheCommandLine() throws {
            let valid = try [UInt8](Data(contentsOf: URL(fileURLWithPath: DemoReports.file(DemoReports.standard))))
            let scratch = try TestPaths.scratch()
            var random = SplitMix(seed: 7)
            var statuses: [Int32: Int] = [:]
            for round in 0..<40 {
                let mutation = ReportMutation.allCases[round % ReportMutation.allCases.count]
                let path = scratch.appendingPathComponent("damaged-\(round).json").path
                try Data(mutation.apply(to: valid, &random)).write(to: URL(fileURLWithPath: path))
                let format = ["text", "markdown", "json"][round % 3]
                let r = try hangwatch(["report", path, "--format", format, "--hide-system", "--top", "2"])
                statuses[r.status, default: 0] += 1
                #expect([0, 65].contains(r.status), "\(mutation) round \(round): status \(r.status), \(r.stderr)")
                if r.status == 65 {
                    #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
                    #expect(r.stdout.isEmpty)
                }
                let diff = try hangwatch(["diff", path, path, "--format", "json"])
                #expect([0, 65].contains(diff.status), "diff \(mutation) round \(round): \(diff.status)")
            }
            #expect(statuses[65, default: 0] > 0)
        }
    }
}
