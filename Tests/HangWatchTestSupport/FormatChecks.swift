import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import Testing

// Exchange formats (folded, speedscope, Chrome trace, pprof) checked by real
// consumers: the Python validators in Tests/validators decode each file with
// jsonschema / the protobuf runtime and report what they read back.

/// Runs a validator script from Tests/validators and decodes the summary it prints.
package enum Validators {
    /// python3 from PATH; nil skips the validator-backed suites.
    package static let python3: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    package static let missingPython: Comment = "python3 is not installed: the format validators in Tests/validators cannot run"

    package static func script(_ name: String) -> String {
        TestPaths.packageRoot.appendingPathComponent("Tests/validators/\(name)").path
    }

    package static func run(_ name: String, _ file: URL) throws -> ProcessResult {
        guard let python3 else { throw TestFailure(missingPython.rawValue) }
        return try ProcessRunner.run(python3, [script(name), file.path], timeout: 120)
    }

    /// The summary of a file the validator accepts; a rejection fails with the validator's reasons.
    package static func check<Summary: Decodable>(_ name: String, _ file: URL, as _: Summary.Type) throws -> Summary {
        let result = try run(name, file)
        guard result.status == 0 else {
            throw TestFailure("\(name) rejected \(file.lastPathComponent) (status \(result.status)): \(result.stderr)")
        }
        return try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
    }

    /// The validator's reasons for rejecting a file it must reject.
    package static func rejection(_ name: String, _ file: URL) throws -> String {
        let result = try run(name, file)
        guard result.status == 1 else {
            throw TestFailure("\(name) should have rejected \(file.lastPathComponent) with status 1, got \(result.status): "
                              + result.stdout + result.stderr)
        }
        return result.stderr
    }

    package static func write(_ data: Data, _ name: String) throws -> URL {
        let url = try TestPaths.scratch().appendingPathComponent(name)
        try data.write(to: url)
        return url
    }
}

package struct SpeedscopeSummary: Decodable {
    package struct Profile: Decodable {
        package var name: String
        package var unit: String
        package var startValue: Double
        package var endValue: Double
        package var totalWeight: Double
        package var stacks: [[String]]
    }
    package var frameCount: Int
    package var profiles: [Profile]
}

package struct TraceSummary: Decodable {
    package struct Metadata: Decodable {
        package var name: String
        package var pid: Int
        package var tid: Int
        package var value: String
    }
    package struct Slice: Decodable {
        package var name: String
        package var cat: String
        package var pid: Int
        package var tid: Int
        package var ts: Double
        package var dur: Double
        package var depth: Int
    }
    package var displayTimeUnit: String?
    package var metadata: [Metadata]
    package var slices: [Slice]
}

package struct PprofSummary: Decodable {
    package struct Stack: Decodable {
        package var frames: [String]
        package var values: [Int64]
        package var labels: [String: LabelValue]
    }
    package enum LabelValue: Decodable, Equatable {
        case number(Int64), text(String)
        package init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int64.self) { self = .number(n) } else { self = .text(try c.decode(String.self)) }
        }
    }
    package var sampleTypes: [[String]]
    package var periodType: [String]
    package var period: Int64
    package var timeNanos: Int64
    package var durationNanos: Int64
    package var defaultSampleType: String
    package var comments: [String]
    package var mappings: [String]
    package var mappingsHaveFunctions: Bool
    package var locationCount: Int
    package var functionCount: Int
    package var stringCount: Int
    package var stacks: [Stack]
    package var compressedSize: Int
    package var rawSize: Int
}

/// One parsed folded line.
package struct FoldedLine: Equatable {
    package var frames: [String]
    package var count: Int

    /// Parses folded text the way flamegraph.pl does: the count follows the last space.
    package static func parse(_ text: String) throws -> [FoldedLine] {
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
package enum FormatFixtures {
    package static let executable = "/opt/app/Demo"
    package static let weirdSymbol = "weird;name\nline2"

    package static func frame(_ symbol: String, _ image: String = executable) -> Frame { Frame(symbol: symbol, image: image) }

    /// main 5 self; main→run→parse 50 self, →tokenize 200, →checksum 100; main→run→weird 20. 375 samples.
    package static func mainTree() -> CallTreeNode? {
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
    package static func workerTree() -> CallTreeNode? {
        CallTreeBuilder.build([
            WeightedStack(frames: [], weight: 3),
            WeightedStack(frames: [frame("start_thread", "/lib/libc.so.6"), frame("work")], weight: 100),
            WeightedStack(frames: [frame("clone", "/lib/libc.so.6"), frame("mystery", "")], weight: 50),
        ], msPerSample: 2)
    }

    package static func report(hangs: [Hang]? = nil) -> Report {
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

    package static let empty = Report(process: ProcessInfoRecord(pid: 7, executable: "/bin/tool", arguments: [], exitCode: 0,
                                                         signal: nil, wallMs: 40),
                              thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
}

/// Checks every format against the report it came from; shared by the unit and integration tests.
package enum FormatChecks {
    /// Folded counts per hang add up to the hang's samples, and every line is distinct.
    package static func folded(_ report: Report) throws {
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
    package static func foldedStacks(_ report: Report) throws -> [String: Int] {
        let ids = Dictionary(report.hangs.map { (FoldedFormat.hangFrame($0), $0.id) }) { first, _ in first }
        var stacks: [String: Int] = [:]
        for line in try FoldedLine.parse(FoldedFormat.render(report)) {
            let id = try #require(ids[line.frames[0]])
            stacks["\(id):" + line.frames.dropFirst().joined(separator: ";"), default: 0] += line.count
        }
        return stacks
    }

    package static func speedscope(_ report: Report) throws -> SpeedscopeSummary {
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

    package static func trace(_ report: Report) throws -> TraceSummary {
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

    package static func pprof(_ report: Report, startTime: Date? = nil) throws -> PprofSummary {
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
