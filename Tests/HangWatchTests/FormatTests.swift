import Foundation
import HangWatch
import Testing

// Exchange formats (folded, speedscope, Chrome trace, pprof) checked by real
// consumers: the Python validators in Tests/validators decode each file with
// jsonschema / the protobuf runtime and report what they read back.

/// Runs a validator script from Tests/validators and decodes the summary it prints.
enum Validators {
    /// python3 from PATH; nil skips the validator-backed suites.
    static let python3: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static let missingPython: Comment = "python3 is not installed: the format validators in Tests/validators cannot run"

    static func script(_ name: String) -> String {
        TestPaths.packageRoot.appendingPathComponent("Tests/validators/\(name)").path
    }

    static func run(_ name: String, _ file: URL) throws -> ProcessResult {
        guard let python3 else { throw TestFailure(missingPython.rawValue) }
        return try ProcessRunner.run(python3, [script(name), file.path], timeout: 120)
    }

    /// The summary of a file the validator accepts; a rejection fails with the validator's reasons.
    static func check<Summary: Decodable>(_ name: String, _ file: URL, as _: Summary.Type) throws -> Summary {
        let result = try run(name, file)
        guard result.status == 0 else {
            throw TestFailure("\(name) rejected \(file.lastPathComponent) (status \(result.status)): \(result.stderr)")
        }
        return try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
    }

    /// The validator's reasons for rejecting a file it must reject.
    static func rejection(_ name: String, _ file: URL) throws -> String {
        let result = try run(name, file)
        guard result.status == 1 else {
            throw TestFailure("\(name) should have rejected \(file.lastPathComponent) with status 1, got \(result.status): "
                              + result.stdout + result.stderr)
        }
        return result.stderr
    }

    static func write(_ data: Data, _ name: String) throws -> URL {
        let url = try TestPaths.scratch().appendingPathComponent(name)
        try data.write(to: url)
        return url
    }
}

struct SpeedscopeSummary: Decodable {
    struct Profile: Decodable {
        var name: String
        var unit: String
        var startValue: Double
        var endValue: Double
        var totalWeight: Double
        var stacks: [[String]]
    }
    var frameCount: Int
    var profiles: [Profile]
}

struct TraceSummary: Decodable {
    struct Metadata: Decodable {
        var name: String
        var pid: Int
        var tid: Int
        var value: String
    }
    struct Slice: Decodable {
        var name: String
        var cat: String
        var pid: Int
        var tid: Int
        var ts: Double
        var dur: Double
        var depth: Int
    }
    var displayTimeUnit: String?
    var metadata: [Metadata]
    var slices: [Slice]
}

struct PprofSummary: Decodable {
    struct Stack: Decodable {
        var frames: [String]
        var values: [Int64]
        var labels: [String: LabelValue]
    }
    enum LabelValue: Decodable, Equatable {
        case number(Int64), text(String)
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int64.self) { self = .number(n) } else { self = .text(try c.decode(String.self)) }
        }
    }
    var sampleTypes: [[String]]
    var periodType: [String]
    var period: Int64
    var timeNanos: Int64
    var durationNanos: Int64
    var defaultSampleType: String
    var comments: [String]
    var mappings: [String]
    var mappingsHaveFunctions: Bool
    var locationCount: Int
    var functionCount: Int
    var stringCount: Int
    var stacks: [Stack]
    var compressedSize: Int
    var rawSize: Int
}

/// One parsed folded line.
struct FoldedLine: Equatable {
    var frames: [String]
    var count: Int

    /// Parses folded text the way flamegraph.pl does: the count follows the last space.
    static func parse(_ text: String) throws -> [FoldedLine] {
        try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            guard let space = line.lastIndex(of: " "), let count = Int(line[line.index(after: space)...]) else {
                throw TestFailure("unparsable folded line: \(line)")
            }
            return FoldedLine(frames: line[..<space].split(separator: ";", omittingEmptySubsequences: false).map(String.init),
                              count: count)
        }
    }
}

/// Hand-made reports with known stacks and counts.
enum FormatFixtures {
    static let executable = "/opt/app/Demo"
    static let weirdSymbol = "weird;name\nline2"

    static func frame(_ symbol: String, _ image: String = executable) -> Frame { Frame(symbol: symbol, image: image) }

    /// main 5 self; main→run→parse 50 self, →tokenize 200, →checksum 100; main→run→weird 20. 375 samples.
    static func mainTree() -> CallTreeNode? {
        let run = [frame("main"), frame("Demo.run()")]
        return CallTreeBuilder.build([
            WeightedStack(frames: run + [frame("Demo.parse()"), frame("Demo.tokenize()")], weight: 200),
            WeightedStack(frames: run + [frame("Demo.parse()")], weight: 50),
            WeightedStack(frames: run + [frame("Demo.parse()"), frame("Demo.checksum()")], weight: 100),
            WeightedStack(frames: run + [frame(weirdSymbol, "/lib/libweird.so")], weight: 20),
            WeightedStack(frames: [frame("main")], weight: 5),
        ], msPerSample: 2)
    }

    /// Stacks with no shared root and 3 frameless samples: the builder adds `<all>`. 153 samples.
    static func workerTree() -> CallTreeNode? {
        CallTreeBuilder.build([
            WeightedStack(frames: [], weight: 3),
            WeightedStack(frames: [frame("start_thread", "/lib/libc.so.6"), frame("work")], weight: 100),
            WeightedStack(frames: [frame("clone", "/lib/libc.so.6"), frame("mystery", "")], weight: 50),
        ], msPerSample: 2)
    }

    static func report(hangs: [Hang]? = nil) -> Report {
        let main = ThreadRef(tid: 100, name: "main"), worker = ThreadRef(tid: 101, name: "worker", role: "loop")
        let hangs = hangs ?? [
            Hang(id: 1, thread: main, startMs: 1000.25, durationMs: 760.4, reported: true, inProgress: false, kind: .cpu,
                 blockedIn: nil, sampleCount: 375, sampleCoverage: 0.99, callTree: mainTree()),
            Hang(id: 2, thread: worker, startMs: 1500, durationMs: 310, reported: true, inProgress: false, kind: .mixed,
                 blockedIn: "poll", sampleCount: 153, sampleCoverage: 0.98, callTree: workerTree()),
            Hang(id: 3, thread: main, startMs: 2000, durationMs: 150, reported: false, inProgress: false, kind: .blocked,
                 blockedIn: "usleep", sampleCount: 70, sampleCoverage: 0.9, callTree: nil),
        ]
        return Report(process: ProcessInfoRecord(pid: 100, executable: executable, arguments: [], exitCode: 0,
                                                 signal: nil, wallMs: 2500),
                      thresholds: Thresholds(sampleHz: 500), summary: Summary(hangs: hangs), hangs: hangs)
    }

    static let empty = Report(process: ProcessInfoRecord(pid: 7, executable: "/bin/tool", arguments: [], exitCode: 0,
                                                         signal: nil, wallMs: 40),
                              thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
}

/// Checks every format against the report it came from; shared by the unit and integration tests.
enum FormatChecks {
    /// Folded counts per hang add up to the hang's samples, and every line is distinct.
    static func folded(_ report: Report) throws {
        let lines = try FoldedLine.parse(FoldedFormat.render(report))
        #expect(Set(lines.map { $0.frames }).count == lines.count, "folded lines must be unique")
        for hang in report.hangs where hang.reported && hang.callTree != nil {
            let prefix = FoldedFormat.hangFrame(hang)
            let mine = lines.filter { $0.frames.first == prefix }
            #expect(mine.reduce(0) { $0 + $1.count } == hang.callTree?.sampleCount, "hang #\(hang.id)")
            #expect(mine.allSatisfy { $0.frames.count >= 2 && $0.count > 0 && !$0.frames.contains("") })
        }
        let labelled = Set(report.hangs.filter { $0.reported && $0.callTree != nil }.map(FoldedFormat.hangFrame))
        #expect(lines.allSatisfy { labelled.contains($0.frames[0]) }, "every line starts with a reported hang's frame")
    }

    /// (hang id, sanitized frames) → samples, from the folded output.
    static func foldedStacks(_ report: Report) throws -> [String: Int] {
        let ids = Dictionary(report.hangs.map { (FoldedFormat.hangFrame($0), $0.id) }) { first, _ in first }
        var stacks: [String: Int] = [:]
        for line in try FoldedLine.parse(FoldedFormat.render(report)) {
            let id = try #require(ids[line.frames[0]])
            stacks["\(id):" + line.frames.dropFirst().joined(separator: ";"), default: 0] += line.count
        }
        return stacks
    }

    static func speedscope(_ report: Report) throws -> SpeedscopeSummary {
        let file = try Validators.write(SpeedscopeFormat.render(report), "hangs.speedscope.json")
        let summary = try Validators.check("validate_speedscope.py", file, as: SpeedscopeSummary.self)
        let profiled = report.hangs.filter { $0.reported && $0.callTree != nil }
        #expect(summary.profiles.count == profiled.count)
        let msPerSample = 1000 / report.thresholds.sampleHz
        for (profile, hang) in zip(summary.profiles, profiled) {
            #expect(profile.unit == "milliseconds")
            #expect(profile.name.hasPrefix("Hang #\(hang.id):"))
            #expect(abs(profile.totalWeight - Double(hang.callTree?.sampleCount ?? 0) * msPerSample) < 0.01)
            #expect(abs(profile.startValue - hang.startMs) < 0.001 && abs(profile.endValue - hang.startMs - hang.durationMs) < 0.002)
        }
        return summary
    }

    static func trace(_ report: Report) throws -> TraceSummary {
        let file = try Validators.write(ChromeTraceFormat.render(report), "hangs.trace.json")
        let summary = try Validators.check("validate_chrome_trace.py", file, as: TraceSummary.self)
        #expect(summary.displayTimeUnit == "ms")
        let hangSlices = summary.slices.filter { $0.cat == "hang" }
        #expect(hangSlices.count == report.hangs.count)
        for (slice, hang) in zip(hangSlices, report.hangs) {
            #expect(slice.depth == 1 && slice.tid == hang.thread.tid && slice.pid == report.process.pid)
            #expect(abs(slice.ts - hang.startMs * 1000) < 0.01 && abs(slice.dur - hang.durationMs * 1000) < 0.01)
        }
        #expect(summary.metadata.contains { $0.name == "process_name" && $0.pid == report.process.pid })
        for tid in Set(report.hangs.map(\.thread.tid)) {
            #expect(summary.metadata.contains { $0.name == "thread_name" && $0.tid == tid })
        }
        return summary
    }

    static func pprof(_ report: Report, startTime: Date? = nil) throws -> PprofSummary {
        let file = try Validators.write(PprofFormat.render(report, startTime: startTime), "hangs.pb.gz")
        let summary = try Validators.check("validate_pprof.py", file, as: PprofSummary.self)
        #expect(summary.sampleTypes == [["samples", "count"], ["wall", "nanoseconds"]])
        #expect(summary.periodType == ["wall", "nanoseconds"])
        #expect(summary.period == Int64((1e9 / report.thresholds.sampleHz).rounded()))
        #expect(summary.durationNanos == Int64((report.process.wallMs * 1e6).rounded()))
        #expect(summary.rawSize == PprofFormat.encode(report, startTime: startTime).count)
        #expect(summary.mappingsHaveFunctions)
        for stack in summary.stacks {
            #expect(stack.values.count == 2 && stack.values[1] == stack.values[0] * summary.period)
        }
        // The same stacks and counts as the folded output, hang by hang.
        var stacks: [String: Int] = [:]
        for stack in summary.stacks {
            guard case .number(let id) = stack.labels["hang"] else {
                Issue.record("sample without a numeric hang label: \(stack.labels)")
                continue
            }
            stacks["\(id):" + stack.frames.map(FoldedFormat.frameName).joined(separator: ";"), default: 0] += Int(stack.values[0])
        }
        let folded = try foldedStacks(report)
        #expect(stacks == folded)
        return summary
    }
}

@Suite struct FoldedFormatTests {
    @Test func linesCarryEachStacksOwnSamplesRootFirst() {
        let text = FoldedFormat.render(FormatFixtures.report())
        #expect(text == """
            hang#1 (760 ms);main 5
            hang#1 (760 ms);main;Demo.run();Demo.parse() 50
            hang#1 (760 ms);main;Demo.run();Demo.parse();Demo.tokenize() 200
            hang#1 (760 ms);main;Demo.run();Demo.parse();Demo.checksum() 100
            hang#1 (760 ms);main;Demo.run();weird,name line2 20
            hang#2 (310 ms);[unknown] 3
            hang#2 (310 ms);start_thread;work 100
            hang#2 (310 ms);clone;mystery 50

            """)
    }

    @Test func countsParseBackToEachHangsSamples() throws {
        try FormatChecks.folded(FormatFixtures.report())
    }

    @Test func withoutHangFramesEqualStacksMerge() throws {
        var report = FormatFixtures.report()
        report.hangs[1].callTree = FormatFixtures.mainTree()  // two hangs, the same stacks
        let lines = try FoldedLine.parse(FoldedFormat.render(report, labelHangs: false))
        #expect(lines.count == 5)
        #expect(lines.first { $0.frames.last == "Demo.tokenize()" }?.count == 400)
        #expect(lines.reduce(0) { $0 + $1.count } == 750)
        #expect(lines.allSatisfy { $0.frames.first == "main" })
    }

    @Test func separatorsInsideSymbolsAreReplaced() {
        #expect(FoldedFormat.frameName("a;b\nc\r\nd") == "a,b c  d")
        #expect(FoldedFormat.frameName("") == "[unknown]")
        #expect(FoldedFormat.frameName("Swift.Array<Swift.Int>.sort(by: (Swift.Int, Swift.Int) -> Swift.Bool) -> ()")
                == "Swift.Array<Swift.Int>.sort(by: (Swift.Int, Swift.Int) -> Swift.Bool) -> ()")
    }

    @Test func noReportedHangsGiveNoLines() {
        #expect(FoldedFormat.render(FormatFixtures.empty) == "")
        let unreported = FormatFixtures.report().hangs.filter { !$0.reported }
        #expect(FoldedFormat.render(FormatFixtures.report(hangs: unreported)) == "")
    }

    /// A runaway recursion: one line, every level kept, no stack overflow.
    @Test func deepRecursionIsOneLine() throws {
        let frames = [FormatFixtures.frame("main")] + Array(repeating: FormatFixtures.frame("recurse"), count: 1000)
        let hang = Hang(id: 1, thread: ThreadRef(tid: 1, name: "main"), startMs: 0, durationMs: 300, reported: true,
                        inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 9, sampleCoverage: 1,
                        callTree: CallTreeBuilder.build([WeightedStack(frames: frames, weight: 9)], msPerSample: 1))
        let lines = try FoldedLine.parse(FoldedFormat.render(FormatFixtures.report(hangs: [hang])))
        #expect(lines.count == 1 && lines.first?.frames.count == 1002 && lines.first?.count == 9)
    }
}

/// The fields speedscope reads besides the profiles; no validator needed.
@Suite struct SpeedscopeFieldTests {
    @Test func fileHoldsExporterAndSchemaFields() throws {
        let object = try JSONSerialization.jsonObject(with: SpeedscopeFormat.render(FormatFixtures.report())) as? [String: Any]
        #expect(object?["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        #expect(object?["exporter"] as? String == "hangwatch@\(HangWatchVersion.string)")
        #expect(object?["activeProfileIndex"] as? Int == 0)
        #expect(object?["name"] as? String == "hangwatch: Demo (pid 100)")
    }
}

@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython))
struct SpeedscopeFormatTests {
    @Test func validFileWithOneProfilePerReportedHang() throws {
        let summary = try FormatChecks.speedscope(FormatFixtures.report())
        // main, run, parse, tokenize, checksum, weird; [unknown], start_thread, work, clone, mystery
        #expect(summary.frameCount == 11)
        #expect(summary.profiles[0].stacks.first == ["main"])
        #expect(summary.profiles[0].stacks.contains(["main", "Demo.run()", FormatFixtures.weirdSymbol]))
        #expect(summary.profiles[1].stacks.first == ["[unknown]"])
        #expect(summary.profiles[1].totalWeight == 306)  // 153 samples at 500 Hz
    }

    @Test func reportWithoutHangsIsStillAValidFile() throws {
        let summary = try FormatChecks.speedscope(FormatFixtures.empty)
        #expect(summary.profiles.isEmpty && summary.frameCount == 0)
    }

    /// The validator is not a rubber stamp: it rejects what speedscope would not load.
    @Test(arguments: [
        #"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"p","unit":"ms","startValue":0,"endValue":1,"samples":[[0]],"weights":[1]}]}"#,
        #"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"p","unit":"milliseconds","startValue":0,"endValue":1,"samples":[[0]]}]}"#,
        #"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"p","unit":"milliseconds","startValue":0,"endValue":1,"samples":[[0,1]],"weights":[1]}]}"#,
    ])
    func validatorRejectsBrokenFiles(json: String) throws {
        let reasons = try Validators.rejection("validate_speedscope.py", Validators.write(Data(json.utf8), "bad.json"))
        #expect(reasons.contains("invalid speedscope file"))
    }
}

@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython))
struct ChromeTraceFormatTests {
    @Test func hangsAreSlicesWithTheirHeaviestPathNestedInside() throws {
        let report = FormatFixtures.report()
        let summary = try FormatChecks.trace(report)
        let hangOne = summary.slices.filter { $0.tid == 100 && $0.ts >= 1_000_250 && $0.ts < 2_000_000 }
        #expect(hangOne.map(\.name) == ["Hang 760 ms", "main", "Demo.run()", "Demo.parse()", "Demo.tokenize()"])
        #expect(hangOne.map(\.depth) == [1, 2, 3, 4, 5])
        // Each level is as wide as its share of its parent's samples.
        let shares = [375.0 / 375, 370.0 / 375, 350.0 / 370, 200.0 / 350]
        for (index, share) in shares.enumerated() {
            #expect(abs(hangOne[index + 1].dur - hangOne[index].dur * share) < 0.01, "level \(index + 1)")
        }
        // The worker's tree has a synthetic <all> root: the path starts at its heaviest real frame.
        let worker = summary.slices.filter { $0.tid == 101 }
        #expect(worker.map(\.name) == ["Hang 310 ms", "start_thread", "work"])
        #expect(abs(worker[1].dur - 310_000 * 100 / 153) < 0.01)
        // The unreported hang is a slice of its own, without a path.
        #expect(summary.slices.filter { $0.ts == 2_000_000 }.map(\.name) == ["Hang 150 ms"])
        #expect(summary.metadata.contains { $0.name == "thread_name" && $0.tid == 101 && $0.value == "worker" })
        #expect(summary.metadata.contains { $0.name == "process_name" && $0.value == "Demo (pid 100)" })
    }

    @Test func frameStatisticsWithoutPerFrameTimesAddNoEvents() throws {
        var report = FormatFixtures.report()
        report.frames = FrameStats(name: "main", deadlineMs: 16.7, frameCount: 100, hitchCount: 3, missedFrames: 5,
                                   hitchMs: 80, hitchRatioMsPerS: 32, band: "warning", p50Ms: 5, p95Ms: 20, p99Ms: 40, maxMs: 60)
        let withFrames = try FormatChecks.trace(report)
        let without = try FormatChecks.trace(FormatFixtures.report())
        #expect(withFrames.slices.count == without.slices.count)
    }

    @Test func emptyReportHasOnlyTheProcessName() throws {
        let summary = try FormatChecks.trace(FormatFixtures.empty)
        #expect(summary.slices.isEmpty)
        #expect(summary.metadata.map(\.name) == ["process_name"])
    }

    @Test func deepPathsAreCut() throws {
        let frames = (0..<400).map { FormatFixtures.frame("level\($0)") }
        let hang = Hang(id: 1, thread: ThreadRef(tid: 1, name: "main"), startMs: 0, durationMs: 300, reported: true,
                        inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 9, sampleCoverage: 1,
                        callTree: CallTreeBuilder.build([WeightedStack(frames: frames, weight: 9)], msPerSample: 1))
        let summary = try FormatChecks.trace(FormatFixtures.report(hangs: [hang]))
        #expect(summary.slices.count == 1 + ChromeTraceFormat.maxPathDepth)
    }

    @Test func validatorRejectsSlicesThatCrossTheirParent() throws {
        let trace = #"{"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":100},"#
            + #"{"name":"b","ph":"X","pid":1,"tid":1,"ts":50,"dur":100}],"displayTimeUnit":"ms"}"#
        let reasons = try Validators.rejection("validate_chrome_trace.py", Validators.write(Data(trace.utf8), "bad.json"))
        #expect(reasons.contains("overlaps"))
    }
}

@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython))
struct PprofFormatTests {
    @Test func decodesWithProtobufAndMatchesTheFoldedStacks() throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000.5)
        let summary = try FormatChecks.pprof(FormatFixtures.report(), startTime: start)
        #expect(summary.timeNanos == 1_700_000_000_500_000_000)
        #expect(summary.period == 2_000_000)  // 500 Hz
        #expect(summary.defaultSampleType == "wall")
        // The executable is the first mapping; the frame without an image has none.
        #expect(summary.mappings == [FormatFixtures.executable, "/lib/libweird.so", "/lib/libc.so.6"])
        #expect(summary.locationCount == 11 && summary.functionCount == 11)
        #expect(summary.stacks.count == 8)
        let weird = summary.stacks.first { $0.frames.last == FormatFixtures.weirdSymbol }
        #expect(weird?.frames == ["main", "Demo.run()", FormatFixtures.weirdSymbol])
        #expect(weird?.values == [20, 40_000_000])
        #expect(weird?.labels == ["hang": .number(1), "thread": .text("main")])
        #expect(summary.stacks.last?.labels["thread"] == .text("worker"))
        #expect(summary.comments == ["hangwatch \(HangWatchVersion.string): Demo (pid 100)"])
    }

    @Test func withoutAStartTimeTimeNanosIsUnset() throws {
        #expect(try FormatChecks.pprof(FormatFixtures.report()).timeNanos == 0)
    }

    @Test func emptyReportIsAValidProfile() throws {
        let summary = try FormatChecks.pprof(FormatFixtures.empty)
        #expect(summary.stacks.isEmpty && summary.locationCount == 0)
    }

    @Test func outputIsGzipCompressed() throws {
        let big = FormatFixtures.report(hangs: (1...50).map { id in
            Hang(id: id, thread: ThreadRef(tid: 100, name: "main"), startMs: Double(id) * 1000, durationMs: 400,
                 reported: true, inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 375, sampleCoverage: 1,
                 callTree: FormatFixtures.mainTree())
        })
        let summary = try FormatChecks.pprof(big)
        #expect(summary.compressedSize * 3 < summary.rawSize, "\(summary.compressedSize) of \(summary.rawSize) bytes")
    }

    /// A sample naming a location that does not exist must be caught.
    @Test func validatorRejectsDanglingLocationIds() throws {
        // Profile{sample_type: [{}, {}], sample: [{location_id: [7], value: [1, 1]}], string_table: [""]}
        let message: [UInt8] = [0x0A, 0x00, 0x0A, 0x00, 0x12, 0x07, 0x0A, 0x01, 0x07, 0x12, 0x02, 0x01, 0x01, 0x32, 0x00]
        let raw = try Validators.write(Data(message), "dangling.pb")
        let gzip = try ProcessRunner.run("/bin/gzip", ["-n", "-f", raw.path])
        #expect(gzip.status == 0, "\(gzip.stderr)")
        let reasons = try Validators.rejection("validate_pprof.py", URL(fileURLWithPath: raw.path + ".gz"))
        #expect(reasons.contains("no location 7"))
    }
}

extension Integration {
    /// All four formats rendered from a real run's report file, as `--format` would write them.
    @Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython))
    struct FormatExports {
        @Test func realReportRendersIntoEveryFormat() throws {
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "standard"], measure: false)
            let report = run.report
            let reported = report.hangs.filter { $0.reported && $0.callTree != nil }
            #expect(reported.count == 2, "hangs: \(report.hangs.map(\.durationMs))")

            try FormatChecks.folded(report)
            let folded = try FoldedLine.parse(FoldedFormat.render(report))
            #expect(folded.contains { $0.frames.contains { $0.contains("parseLargeDocument") } })

            let speedscope = try FormatChecks.speedscope(report)
            #expect(speedscope.profiles.count == 2)

            let trace = try FormatChecks.trace(report)
            let first = try #require(reported.first)
            let hangSlice = try #require(trace.slices.first { $0.cat == "hang" && abs($0.ts - first.startMs * 1000) < 0.01 })
            // Nested slices are left-aligned in their hang.
            let path = trace.slices.filter { $0.cat == "stack" && $0.tid == hangSlice.tid && $0.ts == hangSlice.ts }
            #expect(path.contains { $0.name.contains("parseLargeDocument") }, "heaviest path: \(path.map(\.name))")

            let pprof = try FormatChecks.pprof(report, startTime: Date(timeIntervalSinceNow: -report.process.wallMs / 1000))
            #expect(pprof.mappings.first == URL(fileURLWithPath: report.process.executable).lastPathComponent)
            #expect(pprof.compressedSize < pprof.rawSize)
        }
    }
}
