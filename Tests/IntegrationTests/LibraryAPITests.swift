import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchTestSupport
import Testing

extension Integration {
    /// The library's API beyond `start()`, each against the program's own clock
    /// (Demos/LibraryAPIDemo): `LoopHeartbeat` on hand-written loops, several
    /// named `FrameMonitor`s at once, `report()` / `writeReport(to:format:)`
    /// while the program runs, and the HANGWATCH_* variables the library reads
    /// when nothing is configured in code.
    @Suite struct LibraryAPI {
        /// A run of LibraryAPIDemo's `env` scenario, started by HANGWATCH_* alone.
        private struct EnvironmentRun {
            var result: ProcessResult
            var measured: [MeasuredWork]
            var reportPath: String
            /// The most CPU time the VM lost on one CPU while the program ran (`StolenTime`).
            var stolenMs: Double

            /// A loop's busy periods, as the program measured them, in the order they ran.
            func work(_ name: String) -> [MeasuredWork] { measured.filter { $0.name == name } }

            func jsonReport() throws -> Report {
                guard let data = FileManager.default.contents(atPath: reportPath) else {
                    throw TestFailure("no report at \(reportPath); status \(result.status), stderr: \(result.stderr)")
                }
                return try JSONReport.decode(data)
            }
        }

        /// Every variable this suite sets, cleared unless a test sets it: the test
        /// process may run with some of them (HANGWATCH_SAMPLER=signal in the
        /// sanitized phase), and an empty value is the same as unset to the library.
        private static let cleared = ["HANGWATCH_HANG_MS", "HANGWATCH_REPORT_MS", "HANGWATCH_SAMPLE_HZ",
                                      "HANGWATCH_FRAME_MS", "HANGWATCH_THREADS", "HANGWATCH_REPORT", "HANGWATCH_FORMAT",
                                      "HANGWATCH_SAMPLER", "HANGWATCH_EVENTS", "HANGWATCH_ROTATE", "HANGWATCH_KEEP",
                                      "HANGWATCH_OTLP_ENDPOINT"]

        /// Runs the `env` scenario with `environment` (and a report path in `scratch`
        /// unless the environment names one).
        private func runFromEnvironment(_ environment: [String: String], reportName: String = "report.json") throws
            -> EnvironmentRun {
            let scratch = try TestPaths.scratch()
            let measurePath = scratch.appendingPathComponent("measure.txt").path
            let reportPath = scratch.appendingPathComponent(reportName).path
            var env = Dictionary(uniqueKeysWithValues: Self.cleared.map { ($0, "") })
            env["HANGWATCH_REPORT"] = reportPath
            env.merge(environment) { $1 }
            let stealBefore = StolenTime.perCPU()
            let result = try ProcessRunner.run(TestPaths.libraryAPIDemo, ["--scenario", "env", "--measure", measurePath],
                                               environment: env)
            let stolenMs = StolenTime.maxMs(from: stealBefore, to: StolenTime.perCPU())
            #expect(result.status == 0, "\(result.stderr)")
            return EnvironmentRun(result: result, measured: MeasuredWork.parse(file: measurePath), reportPath: reportPath,
                                  stolenMs: stolenMs)
        }

        /// The env scenario's loops: the measure-file name of each one's work, and how
        /// the report names its thread ("main" is the main thread, whose name is the process's).
        private static let environmentLoops = [("main", "mainLoopWork"), ("net-loop", "netLoopWork"),
                                               ("disk-loop", "diskLoopWork")]

        /// How a test names `hang`'s thread: "main" for the main thread, else its name.
        private func loopName(_ hang: Hang, in report: Report) -> String {
            hang.thread.tid == report.process.pid ? "main" : hang.thread.name
        }

        /// One loop's hangs must be exactly the busy periods the program measured at the
        /// hang threshold (100 ms) or more, in order, each within 5 ms of the program's
        /// duration, widened by `stolenMs`, the time the VM took from a CPU meanwhile
        /// (between the program's clock reading and its loop's heartbeat it lengthens
        /// the hang). A period the program measured within 1 ms of the threshold may be a
        /// hang or not (the loop's own few microseconds around the work decide).
        private func expectHangs(_ hangs: [Hang], are measured: [MeasuredWork], _ loop: String, stolenMs: Double,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
            let possible = measured.filter { $0.durationMs >= 99 }
            var next = 0
            var matched = Set<Int>()
            for hang in hangs.sorted(by: { $0.startMs < $1.startMs }) {
                guard let i = possible.indices.dropFirst(next).first(where: {
                    abs(possible[$0].durationMs - hang.durationMs) <= 5 + stolenMs
                }) else {
                    let why = "\(loop): a \(hang.durationMs) ms hang matches no busy period the program measured "
                        + "(\(possible.map(\.durationMs)); \(stolenMs) ms stolen)"
                    Issue.record(Comment(rawValue: why), sourceLocation: sourceLocation)
                    continue
                }
                matched.insert(i)
                next = i + 1
            }
            let missed = possible.indices.filter { !matched.contains($0) && possible[$0].durationMs >= 101 }
                .map { possible[$0].durationMs }
            #expect(missed.isEmpty, "\(loop): no hang for the program's \(missed) ms (hangs \(hangs.map(\.durationMs)))",
                    sourceLocation: sourceLocation)
        }

        /// How many of `measured` are hangs for certain (≥ 101 ms) and at most (≥ 99 ms).
        private func hangRange(_ measured: [MeasuredWork]) -> ClosedRange<Int> {
            measured.filter { $0.durationMs >= 101 }.count...measured.filter { $0.durationMs >= 99 }.count
        }

        /// A markdown report's Metrics row `| name | value | … |`: its value cell.
        private func metric(_ name: String, in markdown: String) -> String? {
            MarkdownText.lines(MarkdownText.section(markdown, "Metrics"))
                .map { $0.split(separator: "|", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) } }
                .first { $0.count > 2 && $0[1] == name }?[2]
        }

        /// "300.2 ms" → 300.2.
        private func milliseconds(_ text: String?) -> Double? {
            text.flatMap { Double($0.replacingOccurrences(of: " ms", with: "")) }
        }

        /// Hand-written loops marked with `LoopHeartbeat`: the main thread with
        /// `willWait()` / `didWake()` around `usleep`, "io-loop" with `waiting { poll }`.
        /// Each busy period the program measured at ≥ 100 ms is a hang of its loop's
        /// thread with the same duration (±5 ms), in order; the idle waits (250–350 ms)
        /// and the shorter busy periods are not hangs.
        @Test func loopHeartbeatTurnsEachLoopsBusyPeriodsIntoHangs() throws {
            let run = try HangwatchRun.library(TestPaths.libraryAPIDemo, ["--scenario", "heartbeat"])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            #expect(!run.result.stderr.contains("not watched"), "\(run.result.stderr)")
            for (loop, work, role) in [("main", "mainLoopWork", "main-thread"), ("io-loop", "ioLoopWork", "loop")] {
                let measured = run.work(work)
                // Two designed; a loaded machine can stretch a short one past 100 ms, and then
                // the program measures that too, and it must be a hang like the others.
                #expect(measured.filter { $0.durationMs >= 101 }.count >= 2,
                        "\(work): the program measured \(measured.map(\.durationMs))")
                let hangs = run.report.hangs.filter { loopName($0, in: run.report) == loop }
                expectHangs(hangs, are: measured, loop, stolenMs: run.stolenMs)
                #expect(hangs.allSatisfy { $0.thread.role == role }, "\(hangs.map(\.thread))")
            }
            // Every hang is one of the two loops' (none on another thread, none for an idle wait).
            #expect(run.report.hangs.allSatisfy { ["main", "io-loop"].contains(loopName($0, in: run.report)) },
                    "\(run.report.hangs.map(\.thread))")
            // Hangs of 250 ms or more get a call tree: the main thread's 280 ms one runs
            // through the scenario's loop into the work it timed.
            #expect(run.report.hangs.allSatisfy { $0.reported == ($0.durationMs >= 250) })
            let longest = try #require(run.report.hangs.filter { loopName($0, in: run.report) == "main" }
                .max { $0.durationMs < $1.durationMs })
            let path = try #require(longest.callTree, "\(longest.durationMs) ms").heaviestPathSymbols
            #expect(path.contains { $0.contains("heartbeatScenario") } && path.contains { $0.contains("busyWork") },
                    "\(path)")
        }

        /// Three named `FrameMonitor`s at once ("render" on the main thread, "audio"
        /// and "physics" on threads of their own): one `frameLoops` entry each, with
        /// its name and deadline, exactly the frames the program ran, and the hitches
        /// the program measured (a frame within 1 ms of the deadline may count either way).
        /// With a frame deadline from HANGWATCH_FRAME_MS too, a monitor's frames are
        /// still counted once, under its own name, not again under its thread's.
        @Test(arguments: ["", "16.667"])
        func severalNamedFrameMonitorsOnTheirOwnThreads(frameMs: String) throws {
            let run = try HangwatchRun.library(TestPaths.libraryAPIDemo, ["--scenario", "frames"],
                                               environment: ["HANGWATCH_FRAME_MS": frameMs])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let loops = run.report.frameLoops
            #expect(loops.map(\.name).sorted() == ["audio", "physics", "render"], "\(loops.map(\.name))")
            for (name, deadline, frames, designedSlow) in [("render", 16.667, 90, 3), ("audio", 5.0, 200, 3),
                                                           ("physics", 10.0, 120, 2)] {
                let stats = try #require(loops.first { $0.name == name }, "no frame loop \(name)")
                let measured = run.work("frame-\(name)")
                #expect(measured.count == frames, "\(name): the program ran \(measured.count) frames")
                #expect(stats.frameCount == measured.count, "\(name): \(stats.frameCount) frames")
                #expect(stats.deadlineMs == deadline)
                let clear = measured.filter { abs($0.durationMs - deadline) > 1 }
                let over = clear.filter { $0.durationMs > deadline }.count
                let ambiguous = measured.count - clear.count
                #expect(over >= designedSlow, "\(name): the slow frames did not run slow")
                #expect(stats.hitchCount >= over && stats.hitchCount <= over + ambiguous,
                        "\(name): \(stats.hitchCount) hitches, the program measured \(over) (+\(ambiguous) within 1 ms)")
                let longest = measured.map(\.durationMs).max() ?? 0
                #expect(abs(stats.maxMs - longest) <= 1, "\(name): max \(stats.maxMs) vs \(longest)")
            }
        }

        /// `report()` and `writeReport(to:format:)` from another thread while the
        /// program runs: after the first hang, the Report, the markdown file and the
        /// JSON file hold that hang and no other; after the second, both; the report
        /// at exit all three. Durations against the program's clock (±5 ms).
        @Test func reportsOnDemandHoldTheHangsSoFar() throws {
            let out = try TestPaths.scratch()
            let run = try HangwatchRun.library(TestPaths.libraryAPIDemo, ["--scenario", "on-demand", "--out", out.path])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let work = try ["firstRequest", "secondRequest", "thirdRequest"].map { name in
                try #require(run.work(name).first, "the program did not measure \(name)")
            }
            for k in 1...2 {
                let sofar = work.prefix(k).map(\.durationMs)
                // The Report value the call returned, as the program wrote it down.
                let line = try #require(run.work("report-\(k)").first?.fields, "no report-\(k) line")
                let returned = line.count == 3 ? line[2].split(separator: ",").compactMap { Double($0) } : []
                #expect(line.count == 3 && Int(line[1]) == k && returned.count == k, "report-\(k): \(line)")
                for (hang, program) in zip(returned, sofar) {
                    #expect(abs(hang - program) <= 5, "report-\(k): \(hang) ms vs program \(program) ms")
                }
                // The JSON file: a report of the running process with the same hangs.
                let jsonPath = out.appendingPathComponent("report-\(k).json").path
                let jsonData = try #require(FileManager.default.contents(atPath: jsonPath))
                let json = try JSONReport.decode(jsonData)
                #expect(json.process.exitCode == nil && json.process.signal == nil, "written while the program runs")
                #expect(json.hangs.count == k, "report-\(k).json: \(json.hangs.map(\.durationMs))")
                for (hang, program) in zip(json.hangs, sofar) {
                    #expect(abs(hang.durationMs - program) <= 5, "report-\(k).json: \(hang.durationMs) vs \(program)")
                }
                let first = try #require(json.hangs.first?.callTree, "the 300 ms hang has a call tree")
                #expect(first.heaviestPathSymbols.contains { $0.contains("onDemandScenario") },
                        "\(first.heaviestPathSymbols)")
                // The markdown file: markdown, with the hang count and the longest hang so far.
                let markdown = try String(contentsOf: out.appendingPathComponent("report-\(k).md"), encoding: .utf8)
                #expect(markdown.hasPrefix("# Hang report: LibraryAPIDemo\n"), "\(markdown.prefix(80))")
                #expect(metric("Hangs", in: markdown) == "\(k)", "\(MarkdownText.section(markdown, "Metrics"))")
                let longest = try #require(milliseconds(metric("Longest hang", in: markdown)))
                #expect(abs(longest - (sofar.max() ?? 0)) <= 5, "longest \(longest) vs \(sofar)")
            }
            #expect(run.report.hangs.count == 3, "at exit: \(run.report.hangs.map(\.durationMs))")
            for (hang, program) in zip(run.report.hangs, work) {
                #expect(abs(hang.durationMs - program.durationMs) <= 5 + run.stolenMs, "\(program.name): \(hang.durationMs)")
            }
        }

        /// HANGWATCH_THREADS with `HangWatcher.start()` and nothing in code: a loop
        /// whose thread is not listed (`main` for the main thread) is not watched,
        /// a listed one is, with its stall's duration (±5 ms); unset, all three are.
        @Test(arguments: [("", ["main", "net-loop", "disk-loop"]), ("net-*", ["net-loop"]),
                          ("main,disk-loop", ["main", "disk-loop"])])
        func threadsVariableChoosesTheWatchedLoops(threads: String, watched: [String]) throws {
            let run = try runFromEnvironment(["HANGWATCH_THREADS": threads, "HANGWATCH_FORMAT": "json"])
            let report = try run.jsonReport()
            for (loop, work) in Self.environmentLoops {
                let measured = run.work(work)
                #expect(measured.contains { $0.durationMs >= 101 },
                        "\(loop) did not stall: \(measured.map(\.durationMs))")
                let hangs = report.hangs.filter { loopName($0, in: report) == loop }
                if watched.contains(loop) {
                    expectHangs(hangs, are: measured, "HANGWATCH_THREADS=\(threads), \(loop)", stolenMs: run.stolenMs)
                } else {
                    #expect(hangs.map(\.durationMs) == [], "HANGWATCH_THREADS=\(threads): \(loop) is watched")
                }
            }
            let names = report.hangs.map { loopName($0, in: report) }
            #expect(names.allSatisfy { Self.environmentLoops.map(\.0).contains($0) }, "hangs on \(names)")
        }

        /// HANGWATCH_REPORT and HANGWATCH_FORMAT: the report is written at exit to that
        /// path in that format (markdown here; JSON in the test above), or to stderr.
        @Test func reportAndFormatVariablesWriteTheReportAtExit() throws {
            let md = try runFromEnvironment(["HANGWATCH_FORMAT": "markdown"], reportName: "report.md")
            let markdown = try String(contentsOfFile: md.reportPath, encoding: .utf8)
            #expect(markdown.hasPrefix("# Hang report: LibraryAPIDemo\n"), "\(markdown.prefix(80))")
            let count = try #require(metric("Hangs", in: markdown).flatMap { Int($0) }, "\(markdown)")
            #expect(hangRange(md.measured).contains(count),
                    "\(count) hangs; the program measured \(md.measured.map(\.durationMs))")
            let longest = md.measured.map(\.durationMs).max() ?? 0
            let written = try #require(milliseconds(metric("Longest hang", in: markdown)))
            #expect(abs(written - longest) <= 5, "longest \(written) vs program \(longest)")

            let text = try runFromEnvironment(["HANGWATCH_REPORT": "stderr", "HANGWATCH_FORMAT": "text"])
            let summary = try #require(text.result.stderr.split(separator: "\n").first { $0.hasPrefix("hangwatch: ") },
                                       "stderr: \(text.result.stderr)")
            let said = summary.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            #expect(said.map(hangRange(text.measured).contains) == true,
                    "\(summary); the program measured \(text.measured.map(\.durationMs))")
            #expect(!FileManager.default.fileExists(atPath: text.reportPath))
        }

        /// HANGWATCH_FRAME_MS: every watched loop's busy periods are frames with that
        /// deadline, one `frameLoops` entry per loop with exactly the busy periods the
        /// program ran, and the hitches it measured.
        @Test func frameVariableMeasuresTheLoopsFrames() throws {
            let run = try runFromEnvironment(["HANGWATCH_FRAME_MS": "50", "HANGWATCH_FORMAT": "json"])
            let report = try run.jsonReport()
            #expect(report.thresholds.frameMs == 50)
            #expect(report.frameLoops.count == 3, "frame loops: \(report.frameLoops.map(\.name))")
            // A loop's frames are named after its thread; the main thread's name is the process's.
            for (work, thread) in [("mainLoopWork", "LibraryAPIDemo"), ("netLoopWork", "net-loop"),
                                   ("diskLoopWork", "disk-loop")] {
                let stats = try #require(report.frameLoops.first { $0.name == thread }, "no frame loop \(thread)")
                let measured = run.work(work)
                #expect(stats.frameCount == measured.count,
                        "\(thread): \(stats.frameCount) frames, program \(measured.count)")
                #expect(stats.deadlineMs == 50)
                let clear = measured.filter { abs($0.durationMs - 50) > 1 }
                let over = clear.filter { $0.durationMs > 50 }.count
                let ambiguous = measured.count - clear.count
                #expect(stats.hitchCount >= over && stats.hitchCount <= over + ambiguous,
                        "\(thread): \(stats.hitchCount) hitches, the program measured \(over) (+\(ambiguous))")
            }
        }

        /// HANGWATCH_SAMPLER: `signal` samples running threads with SIGPROF, so the
        /// loop that blocks SIGPROF ("disk-loop") gets no CPU samples and the report
        /// says so; `kernel` needs no signal and samples its 260 ms stall all the same.
        @Test(arguments: ["signal", "kernel"])
        func samplerVariableChoosesHowRunningThreadsAreSampled(sampler: String) throws {
            let run = try runFromEnvironment(["HANGWATCH_SAMPLER": sampler, "HANGWATCH_FORMAT": "json"])
            let report = try run.jsonReport()
            let hang = try #require(report.hangs.first { $0.thread.name == "disk-loop" })
            expectHangs(report.hangs.filter { $0.thread.name == "disk-loop" }, are: run.work("diskLoopWork"),
                        "disk-loop, \(sampler) sampler", stolenMs: run.stolenMs)
            let said = report.notes.contains { $0.contains("blocks SIGPROF") }
            // Where perf_event_open is refused (perf_event_paranoid 3, a seccomp filter), `kernel`
            // falls back to SIGPROF and the report says so: then the signal sampler's outcome holds.
            let fellBack = report.notes.contains { $0.contains("sampled with SIGPROF, not by the kernel") }
            if sampler == "signal" || fellBack {
                #expect(said && hang.sampleCount < 30, "notes: \(report.notes), \(hang.sampleCount) samples")
            } else {
                #expect(!said && hang.sampleCount > 100, "notes: \(report.notes), \(hang.sampleCount) samples")
            }
        }
    }
}
