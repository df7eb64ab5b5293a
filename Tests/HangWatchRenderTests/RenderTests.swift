import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

/// Text and JSON renderings of hand-made reports. The JSON field names checked
/// here are the schema v1 contract: a failure means the file format changed.
@Suite struct RenderTests {
    static func frame(_ symbol: String, _ image: String = "/opt/app/RunLoopDemo") -> Frame {
        Frame(symbol: symbol, image: image)
    }

    static let longSymbol = "RunLoopDemo.Worker.crunch(numbers: [Swift.Int], into: inout Swift.Dictionary<Swift.String, "
        + "Swift.Array<Swift.Double>>) -> ()"

    static func busyTree() -> CallTreeNode? {
        var stacks = [
            WeightedStack(frames: [frame("main"), frame("RunLoopDemo.runLoop()"), frame(longSymbol)], weight: 300),
            WeightedStack(frames: [frame("main"), frame("RunLoopDemo.runLoop()"), frame("usleep", "/lib/libc.so.6")], weight: 80),
            WeightedStack(frames: [frame("main"), frame("RunLoopDemo.runLoop()"), frame("malloc", "/lib/libc.so.6")], weight: 1),
        ]
        // A 60-deep call chain: deeper than the renderer's 40-level limit.
        stacks.append(WeightedStack(frames: [frame("main")] + (0..<60).map { frame("RunLoopDemo.level\($0)() -> ()") },
                                    weight: 31))
        return CallTreeBuilder.build(stacks, msPerSample: 1)
    }

    static func report(signal: Int? = nil, exitCode: Int? = 0) -> Report {
        let hangs = [
            Hang(id: 1, thread: ThreadRef(tid: 1234, name: "main"), startMs: 1234, durationMs: 412.25, reported: true,
                 inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 412, sampleCoverage: 1, callTree: busyTree()),
            Hang(id: 2, thread: ThreadRef(tid: 1234, name: "main"), startMs: 1900.5, durationMs: 130, reported: false,
                 inProgress: false, kind: .blocked, blockedIn: "usleep", sampleCount: 0, sampleCoverage: 0, callTree: nil),
            Hang(id: 3, thread: ThreadRef(tid: 1234, name: "main"), startMs: 2100.125, durationMs: 350.75, reported: true,
                 inProgress: true, kind: .mixed, blockedIn: "poll", sampleCount: 300, sampleCoverage: 0.875,
                 callTree: CallTreeBuilder.build([WeightedStack(frames: [frame("main"), frame("poll", "/lib/libc.so.6")],
                                                                weight: 300)], msPerSample: 1)),
        ]
        return Report(process: ProcessInfoRecord(pid: 1234, executable: "/opt/app/RunLoopDemo", arguments: ["--busy"],
                                                 exitCode: exitCode, signal: signal, wallMs: 2410),
                      thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs,
                      notes: ["SIGPROF was blocked on the main thread for 12 ms, so hang #3 has fewer samples "
                              + "than its duration suggests; its coverage is below 100%."])
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    // MARK: text

    @Test func summaryLine() {
        let text = TextRenderer.render(Self.report(), width: 200)
        #expect(Self.lines(text).first == "hangwatch: 3 hangs (2 reported ≥ 250 ms), longest 412.3 ms, total 893.0 ms — "
            + "RunLoopDemo (pid 1234) exited 0 after 2.41 s")
        let killed = TextRenderer.render(Self.report(signal: 9, exitCode: nil), width: 200)
        #expect(Self.lines(killed).first?.hasSuffix("RunLoopDemo (pid 1234) killed by signal 9 (SIGKILL) after 2.41 s") == true)
    }

    @Test func noHangs() {
        let report = Report(process: ProcessInfoRecord(pid: 7, executable: "tool", arguments: [], exitCode: 0, signal: nil, wallMs: 50),
                            thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
        #expect(TextRenderer.render(report) == "hangwatch: no hangs ≥ 100 ms — tool (pid 7) exited 0 after 0.05 s\n")
    }

    @Test func hangListAndTrees() {
        let lines = Self.lines(TextRenderer.render(Self.report()))
        #expect(lines.contains("  #1  +1.234 s  412.3 ms  main (1234)   cpu                    412      100%  reported"))
        #expect(lines.contains("  #2  +1.901 s  130.0 ms  main (1234)   blocked in usleep        0        0%"))
        #expect(lines.contains("  #3  +2.100 s  350.8 ms  main (1234)   mixed, in poll         300       88%  in progress, reported"))
        #expect(lines.contains { $0.hasPrefix("Hang #1 — 412.3 ms on main (tid 1234), cpu") })
        #expect(!lines.contains { $0.hasPrefix("Hang #2") })
        #expect(lines.contains { $0.hasPrefix("Hang #3 — 350.8 ms") })
        #expect(lines.contains("    Weight       %      Self  Symbol"))
        #expect(lines.contains("  412.0 ms  100.0%    0.0 ms  main [RunLoopDemo]"))
        #expect(lines.contains("  381.0 ms   92.5%    0.0 ms    runLoop() [RunLoopDemo]"))
        #expect(lines.contains("   80.0 ms   19.4%   80.0 ms      usleep [libc.so.6]"))
        #expect(lines.contains("  300.0 ms  100.0%  300.0 ms    poll [libc.so.6]"))
        // The long symbol is shown short: no module (the image says it), no types, labels kept.
        #expect(lines.contains("  300.0 ms   72.8%  300.0 ms      Worker.crunch(numbers:into:) [RunLoopDemo]"))
        // Heaviest first: the 300-sample callee comes before usleep.
        let crunch = lines.firstIndex { $0.contains("Worker.crunch(") }
        let usleep = lines.firstIndex { $0.contains("usleep [libc.so.6]") }
        #expect(crunch != nil && usleep != nil && crunch! < usleep!)
        // Deep levels show a depth marker; levels past 40 and the 1-sample malloc are hidden.
        #expect(lines.contains { $0.hasSuffix("…40 level39() [RunLoopDemo]") })
        #expect(!lines.contains { $0.contains("…41 ") })
        #expect(!lines.contains { $0.contains("malloc") })
        #expect(lines.contains("  (21 nodes hidden: lighter than 0.5% of 412.0 ms or deeper than 40 levels)"))
        #expect(lines.contains { $0.hasPrefix("note: SIGPROF was blocked on the main thread") })
    }

    @Test(arguments: [100, 80, 60, 40, 10])
    func everyLineFitsTheWidth(width: Int) {
        let text = TextRenderer.render(Self.report(signal: 9, exitCode: nil), width: width)
        let limit = max(width, TextRenderer.minimumWidth)
        for line in Self.lines(text) {
            #expect(line.count <= limit, "\(line.count) > \(limit): \(line)")
        }
        #expect(text.hasSuffix("\n"))
    }

    @Test func deterministicAndWithoutEscapes() {
        let first = TextRenderer.render(Self.report())
        #expect(first == TextRenderer.render(Self.report()))
        #expect(!first.contains("\u{1B}"))
    }

    @Test func launchFramesAndNotesSections() throws {
        var report = Self.report()
        report.launch = Launch(durationMs: 35.5, reachedFirstWait: true, sampleCount: 35,
                               callTree: CallTreeBuilder.build([WeightedStack(frames: [Self.frame("main"), Self.frame("setUp()")],
                                                                              weight: 35)], msPerSample: 1))
        report.frames = try Self.frameStats()
        let lines = Self.lines(TextRenderer.render(report))
        #expect(lines.contains("Launch: 35.5 ms from process start to the first wait (35 samples)"))
        #expect(lines.contains("  35.0 ms  100.0%  35.0 ms    setUp() [RunLoopDemo]"))
        #expect(lines.contains("Frames of main (deadline 16.7 ms): 1200 frames, 12 hitches, 18 missed, 240.0 ms hitching"))
        #expect(lines.contains { $0.contains("hitch ratio 8.3 ms/s (warning); p50 8.1 ms, p95 15.0 ms, p99 31.0 ms, max 120.0 ms") })

        report.launch = Launch(durationMs: 2400, reachedFirstWait: false, sampleCount: 2400, callTree: nil)
        #expect(TextRenderer.render(report).contains("Launch: the watched thread never waited; 2400.0 ms is the whole run"))
    }

    // MARK: Time Profiler-style trees (real names from RunLoopDemo's reports)

    static let demo = "/work/main/.build/release/RunLoopDemo"
    static let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    static let foundation = "/opt/swift/usr/lib/swift/linux/libFoundation.so"

    /// Every frame from _start to the timer's closure, as the symbolicator names them.
    static let runLoopChain: [Frame] = [
        Frame(symbol: "_start", image: demo),
        Frame(symbol: "__libc_start_main", image: libc),
        Frame(symbol: "__libc_start_call_main", image: libc),
        Frame(symbol: "main", image: demo),
        Frame(symbol: "Foundation.RunLoop.run(mode: Foundation.RunLoop.Mode, before: FoundationEssentials.Date) -> Swift.Bool",
              image: foundation),
        Frame(symbol: "CFRunLoopRunSpecific", image: foundation),
        Frame(symbol: "__CFRunLoopRun", image: foundation),
        Frame(symbol: "__CFRunLoopDoTimer", image: foundation),
        Frame(symbol: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__", image: foundation),
        Frame(symbol: "@objc Foundation.__NSFireTimer(_: Swift.Optional<__C.CFRunLoopTimerRef>, "
              + "info: Swift.Optional<Swift.UnsafeMutableRawPointer>) -> ()", image: foundation),
        Frame(symbol: "partial apply forwarder for closure #1 @Sendable (Foundation.Timer) -> () in "
              + "RunLoopDemo.after(Swift.Double, @Sendable () -> ()) -> ()", image: demo),
        Frame(symbol: "closure #2 @Sendable () -> () in RunLoopDemo.runSequence(_: Swift.Array<RunLoopDemo.Step>, "
              + "firstDelayMs: Swift.Double, index: Swift.Int) -> ()", image: demo),
    ]

    /// The qsort scenario: glibc's merge sort recursing at several depths above the comparator.
    static func qsortTree() -> CallTreeNode? {
        let prefix = runLoopChain + [Frame(symbol: "RunLoopDemo.sortRecords() -> ()", image: demo),
                                     Frame(symbol: "qsort_r", image: libc)]
        let msort = Frame(symbol: "msort_with_tmp.part.0", image: libc)
        let compare = Frame(symbol: "RunLoopDemo.compareRecords(Swift.Optional<Swift.UnsafeRawPointer>, "
                            + "Swift.Optional<Swift.UnsafeRawPointer>) -> Swift.Int32", image: demo)
        let stacks = (1...12).map { depth in
            WeightedStack(frames: prefix + Array(repeating: msort, count: depth) + [compare], weight: 20 + depth)
        } + [WeightedStack(frames: prefix + [msort, msort], weight: 3)]
        return CallTreeBuilder.build(stacks, msPerSample: 1)
    }

    static func parseTree() -> CallTreeNode? {
        let parse = Frame(symbol: "RunLoopDemo.parseLargeDocument() -> ()", image: demo)
        let checksum = Frame(symbol: "RunLoopDemo.checksum(_: Swift.UnsafeBufferPointer<Swift.UInt8>, until: Swift.UInt64) "
                             + "-> Swift.UInt64", image: demo)
        return CallTreeBuilder.build([
            WeightedStack(frames: runLoopChain + [parse], weight: 200),
            WeightedStack(frames: runLoopChain + [parse, checksum], weight: 203),
        ], msPerSample: 1)
    }

    static func treeReport(_ trees: [CallTreeNode?]) -> Report {
        let hangs = trees.enumerated().map { index, tree in
            Hang(id: index + 1, thread: ThreadRef(tid: 7, name: "RunLoopDemo"), startMs: 166, durationMs: 420,
                 reported: true, inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: tree?.sampleCount ?? 0,
                 sampleCoverage: 0.96, callTree: tree)
        }
        return Report(process: ProcessInfoRecord(pid: 7, executable: demo, arguments: [], exitCode: 0, signal: nil,
                                                 wallMs: 2670),
                      thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs)
    }

    @Test func runLoopBoilerplateFoldsIntoOneLine() {
        let lines = Self.lines(TextRenderer.render(Self.treeReport([Self.parseTree()])))
        let tree = Array(lines.drop { !$0.hasPrefix("Hang #1") }.dropFirst())
        #expect(tree == [
            "    Weight       %      Self  Symbol",
            "  403.0 ms  100.0%    0.0 ms  ⋯ 11 frames: _start → … → main → RunLoop.run(mode:before:) → …",
            "  403.0 ms  100.0%    0.0 ms  closure #2 in runSequence(_:firstDelayMs:index:) [RunLoopDemo]",
            "  403.0 ms  100.0%  200.0 ms    parseLargeDocument() [RunLoopDemo]",
            "  203.0 ms   50.4%  203.0 ms      checksum(_:until:) [RunLoopDemo]",
            "",
        ])
    }

    @Test func recursionCollapsesAndTheCallerOfTheHotFunctionStaysVisible() {
        let lines = Self.lines(TextRenderer.render(Self.treeReport([Self.qsortTree()])))
        let tree = Array(lines.drop { !$0.hasPrefix("Hang #1") }.dropFirst())
        // 12 merge-sort depths are one row; sortRecords(), which called qsort, ends the folded line.
        #expect(tree == [
            "    Weight       %      Self  Symbol",
            "  321.0 ms  100.0%    0.0 ms  ⋯ 13 frames: _start → … → main → … → sortRecords()",
            "  321.0 ms  100.0%    0.0 ms  qsort_r [libc.so.6]",
            "  321.0 ms  100.0%    3.0 ms    msort_with_tmp.part.0 [libc.so.6]",
            "  318.0 ms   99.1%  318.0 ms      compareRecords(_:_:) [RunLoopDemo]",
            "",
        ])
    }

    @Test func wideTerminalsListTheWholeFoldedChain() {
        let text = TextRenderer.render(Self.treeReport([Self.parseTree()]), width: 400)
        #expect(text.contains("⋯ 11 frames: _start → __libc_start_main → __libc_start_call_main → main → "
            + "RunLoop.run(mode:before:) → CFRunLoopRunSpecific → __CFRunLoopRun → __CFRunLoopDoTimer → "
            + "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__ → @objc __NSFireTimer(_:info:) → "
            + "partial apply for closure #1 in after(_:_:)\n"))
    }

    @Test(arguments: [100, 80, 60, 40])
    func foldedTreesFitTheWidth(width: Int) {
        let text = TextRenderer.render(Self.treeReport([Self.parseTree(), Self.qsortTree()]), width: width)
        for line in Self.lines(text) {
            #expect(line.count <= width, "\(line.count) > \(width): \(line)")
        }
        #expect(text.contains("⋯ 11 fram"))
        // From 60 columns on, the comparator's name is whole; at 40 only its end is left.
        #expect(text.contains(width >= 60 ? "compareRecords(" : "…ords…"))
    }

    @Test func jsonKeepsFullNamesAndTheWholeChain() throws {
        let report = Self.treeReport([Self.qsortTree()])
        let decoded = try JSONReport.decode(JSONReport.encode(report))
        #expect(decoded == report)
        let tree = try #require(decoded.hangs.first?.callTree)
        #expect(tree.symbol == "_start")
        #expect(tree.depth == Self.runLoopChain.count + 2 + 12 + 1)
        #expect(try Self.json(report).contains("\"closure #2 @Sendable () -> () in RunLoopDemo.runSequence("))
    }

    // MARK: JSON

    /// `FrameStats` has no public memberwise init, so tests get one from JSON.
    static func frameStats() throws -> FrameStats {
        let json = #"{"name": "main", "deadlineMs": 16.667, "frameCount": 1200, "hitchCount": 12, "missedFrames": 18, "hitchMs": 240,"#
            + #" "hitchRatioMsPerS": 8.25, "band": "warning", "p50Ms": 8.125, "p95Ms": 15, "p99Ms": 31, "maxMs": 120, "histogram": []}"#
        return try JSONDecoder().decode(FrameStats.self, from: Data(json.utf8))
    }

    static func json(_ report: Report) throws -> String {
        String(decoding: try JSONReport.encode(report), as: UTF8.self)
    }

    @Test func roundTrips() throws {
        var report = Self.report(signal: 9, exitCode: nil)
        report.launch = Launch(durationMs: 35.5, reachedFirstWait: false, sampleCount: 35, callTree: nil)
        report.frames = try Self.frameStats()
        report.thresholds.frameMs = 16.667
        #expect(try JSONReport.decode(JSONReport.encode(report)) == report)
        #expect(try JSONReport.decode(JSONReport.encode(Self.report())) == Self.report())
    }

    @Test func optionalFieldsAreExplicitNulls() throws {
        let text = try Self.json(Self.report())
        for field in ["signal", "frames", "launch", "frameMs", "blockedIn", "callTree"] {
            #expect(text.contains("\"\(field)\" : null"), "\(field) should be written as null")
        }
        #expect(text.contains("\"exitCode\" : 0"))
        #expect(try Self.json(Self.report(signal: 9, exitCode: nil)).contains("\"exitCode\" : null"))
        #expect(text.contains("\"executable\" : \"/opt/app/RunLoopDemo\""))
    }

    @Test func doublesAreRoundedToThreeDecimals() throws {
        var report = Self.report()
        report.process.wallMs = 2410.123456789
        report.hangs[0].sampleCoverage = 0.1 + 0.2
        let text = try Self.json(report)
        #expect(text.contains("\"wallMs\" : 2410.123"))
        #expect(text.contains("\"sampleCoverage\" : 0.3"))
        #expect(!text.contains("0.30000000000000004"))
    }

    @Test func schemaFieldNames() throws {
        var report = Self.report()
        report.frames = try Self.frameStats()
        report.launch = Launch(durationMs: 1, reachedFirstWait: true, sampleCount: 1, callTree: nil)
        let object = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(report)) as? [String: Any])
        func keys(_ value: Any?) -> Set<String> { Set((value as? [String: Any])?.keys.map { $0 } ?? []) }

        #expect(keys(object) == ["schemaVersion", "process", "thresholds", "summary", "hangs", "frames", "frameLoops",
                                 "launch", "notes"])
        #expect(object["schemaVersion"] as? Int == 5)
        #expect(keys(object["process"]) == ["pid", "executable", "arguments", "exitCode", "signal", "wallMs",
                                            "cpuUserMs", "cpuSystemMs", "peakRssKb", "startTimeUnixNs"])
        #expect(keys(object["thresholds"]) == ["hangMs", "reportMs", "sampleHz", "frameMs"])
        #expect(keys(object["summary"]) == ["hangCount", "reportedHangCount", "totalHangMs", "longestHangMs"])
        let hang = (object["hangs"] as? [Any])?.first
        #expect(keys(hang) == ["id", "thread", "startMs", "durationMs", "reported", "inProgress", "kind", "blockedIn",
                               "sampleCount", "sampleCoverage", "callTree", "cpuMs", "runnableMs", "lockOwner",
                               "runningThreads", "poolThreads", "poolJobWaitMs", "cause", "stoppedMs", "throttle"])
        #expect(keys((hang as? [String: Any])?["thread"]) == ["tid", "name", "role"])
        let node = (hang as? [String: Any])?["callTree"]
        #expect(keys(node) == ["symbol", "image", "weightMs", "selfMs", "sampleCount", "children", "source",
                               "waitingMs"])
        #expect(keys(((node as? [String: Any])?["children"] as? [Any])?.first)
                == ["symbol", "image", "weightMs", "selfMs", "sampleCount", "children", "source", "waitingMs"])
        #expect(keys(object["launch"]) == ["durationMs", "reachedFirstWait", "sampleCount", "callTree", "parked"])
        #expect(keys(object["frames"]) == ["name", "deadlineMs", "frameCount", "hitchCount", "missedFrames", "hitchMs",
                                           "hitchRatioMsPerS", "band", "p50Ms", "p95Ms", "p99Ms", "maxMs", "histogram"])
    }

    @Test func veryDeepTreesAreCutSoTheFileStaysReadable() throws {
        let deep = WeightedStack(frames: (0..<300).map { Self.frame("f\($0)") }, weight: 1)
        var report = Self.report()
        report.hangs[0].callTree = CallTreeBuilder.build([deep], msPerSample: 1)
        let decoded = try JSONReport.decode(JSONReport.encode(report))
        #expect(decoded.hangs[0].callTree?.depth == JSONReport.maxTreeDepth)
        #expect(decoded.notes.last?.contains("cut") == true)
    }

    // MARK: reading files

    static func decodeError(_ text: String) -> ReportFileError? {
        do {
            _ = try JSONReport.decode(Data(text.utf8))
            return nil
        } catch let error as ReportFileError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test func garbageAndTruncatedFilesAreMalformed() throws {
        let valid = try Self.json(Self.report())
        for text in ["", "   \n", "hello", "{", "{\"schemaVersion\": 1,", String(valid.prefix(valid.count / 2))] {
            guard case .malformedJSON = Self.decodeError(text) else {
                Issue.record("expected malformedJSON for \(text.prefix(40))")
                continue
            }
        }
        #expect(Self.decodeError("[1, 2]") == .notAReport)
    }

    @Test func schemaProblemsNameTheField() throws {
        #expect(Self.decodeError(#"{"schemaVersion": 6}"#) == .unsupportedSchemaVersion(found: 6, supported: 5))
        #expect(Self.decodeError(#"{"process": {}}"#) == .missingField(path: "schemaVersion"))
        #expect(Self.decodeError(#"{"schemaVersion": 1}"#) == .missingField(path: "process"))

        let valid = try Self.json(Self.report())
        #expect(Self.decodeError(valid.replacingOccurrences(of: "\"pid\" : 1234,", with: ""))
                == .missingField(path: "process.pid"))
        #expect(Self.decodeError(valid.replacingOccurrences(of: "\"tid\" : 1234", with: "\"tid\" : null"))
                == .missingField(path: "hangs[0].thread.tid"))
        guard case .invalidValue(let path, _) = Self.decodeError(valid.replacingOccurrences(of: "\"cpu\"", with: "\"slow\"")) else {
            Issue.record("an unknown hang kind should be an invalid value")
            return
        }
        #expect(path == "hangs[0].kind")
        // Absent optional fields are accepted: older or hand-written files may omit them.
        let withoutNulls = valid.replacingOccurrences(of: "\"launch\" : null,", with: "")
        #expect(try JSONReport.decode(Data(withoutNulls.utf8)) == Self.report())
    }

    @Test func deepNestingIsRejectedNotCrashed() {
        #expect(Self.decodeError(String(repeating: "[", count: 100_000)) == .tooDeeplyNested(limit: JSONReport.maxNesting))
        let nested = #"{"schemaVersion": 1, "x": "#  + String(repeating: "{\"a\":", count: 600) + "1"
            + String(repeating: "}", count: 600) + "}"
        #expect(Self.decodeError(nested) == .tooDeeplyNested(limit: JSONReport.maxNesting))
        // Brackets inside strings do not count.
        #expect(Self.decodeError(#"{"schemaVersion": 6, "s": ""# + String(repeating: "[", count: 1000) + "\"}")
                == .unsupportedSchemaVersion(found: 6, supported: 5))
    }

    /// Byte-level corruption of a valid file must end in a clean error or a
    /// report that renders, never in a trap.
    @Test func corruptedFilesNeverCrash() throws {
        var report = Self.report()
        report.frames = try Self.frameStats()
        let valid = try [UInt8](JSONReport.encode(report))
        var generator = SplitMix(seed: 42)
        let replacements = Array("{}[]\",:0123456789.eE-+ntrufals\\ x".utf8)
        var accepted = 0, refused = 0
        for round in 0..<300 {
            var bytes = valid
            for _ in 0..<(1 + round % 4) {
                let at = Int(generator.next() % UInt64(bytes.count))
                bytes[at] = replacements[Int(generator.next() % UInt64(replacements.count))]
            }
            do {
                let decoded = try JSONReport.decode(Data(bytes))
                accepted += 1
                #expect(!TextRenderer.render(decoded).isEmpty, "round \(round)")
                _ = decoded.hangs.compactMap { $0.callTree?.inverted() }
            } catch is ReportFileError {
                refused += 1  // expected for most corruptions; any other error fails the test
            }
        }
        // Both outcomes happen: the counts show the loop reached the reader and the renderer.
        #expect(accepted + refused == 300)
        #expect(refused > 0 && accepted > 0, "accepted \(accepted), refused \(refused)")
    }

    @Test func hostileNumbersStillRender() throws {
        var text = try Self.json(Self.report())
        text = text.replacingOccurrences(of: "\"weightMs\" : 412", with: "\"weightMs\" : 1e300")
        text = text.replacingOccurrences(of: "\"sampleCount\" : 412", with: "\"sampleCount\" : 9223372036854775807")
        text = text.replacingOccurrences(of: "\"durationMs\" : 130", with: "\"durationMs\" : -1e308")
        let report = try JSONReport.decode(Data(text.utf8))
        let rendered = TextRenderer.render(report)
        #expect(rendered.contains("#2"))
        _ = report.hangs.compactMap { $0.callTree?.inverted() }
    }
}
