import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

// Exchange formats (folded, speedscope, Chrome trace, pprof) checked by real
// consumers: the Python validators in Tests/validators decode each file with
// jsonschema / the protobuf runtime and report what they read back.


@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython), .exclusiveMachine)
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

@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython), .exclusiveMachine)
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

@Suite(.enabled(if: Validators.python3 != nil, Validators.missingPython), .exclusiveMachine)
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
            let run = try DemoReports.standard.get()
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

            // The run's report knows when the process started: time_nanos comes from it.
            let pprof = try FormatChecks.pprof(report)
            let start = try #require(report.process.startTimeUnixNs)
            #expect(pprof.timeNanos == start)
            #expect(abs(Double(pprof.timeNanos) / 1e9 - Date().timeIntervalSince1970) < 300)
            #expect(pprof.mappings.first == URL(fileURLWithPath: report.process.executable).lastPathComponent)
            #expect(pprof.compressedSize < pprof.rawSize)
        }
    }
}
