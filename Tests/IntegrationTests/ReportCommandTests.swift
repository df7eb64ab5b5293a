import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// Runs the real `hangwatch` binary.
func hangwatch(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
    guard let stdin else { return try ProcessRunner.run(TestPaths.hangwatch, args, timeout: 60) }
    // ProcessRunner gives the child /dev/null as stdin; a shell pipes the text in instead.
    let scratch = try TestPaths.scratch()
    let input = scratch.appendingPathComponent("stdin.json")
    try Data(stdin.utf8).write(to: input)
    let quoted = ([TestPaths.hangwatch] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    return try ProcessRunner.run("/bin/sh", ["-c", quoted.joined(separator: " ") + " < '\(input.path)'"], timeout: 60)
}

extension Integration {
    /// `hangwatch report` on reports of real demo runs.
    @Suite struct ReportCommand {
        @Test func reRendersTheSavedReportExactly() throws {
            let file = try DemoReports.file(DemoReports.standard)
            let saved = try JSONReport.decode(Data(contentsOf: URL(fileURLWithPath: file)))
            let text = try hangwatch(["report", file])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stderr.isEmpty)
            #expect(text.stdout == TextRenderer.render(saved))
            let json = try hangwatch(["report", file, "--format", "json"])
            #expect(try JSONReport.decode(Data(json.stdout.utf8)) == saved)
            let fromStdin = try hangwatch(["report", "-", "--format=json"], stdin: String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self))
            #expect(try JSONReport.decode(Data(fromStdin.stdout.utf8)) == saved)
        }

        @Test func hangSelectionFilters() throws {
            let run = try DemoReports.standard.get()
            let file = try DemoReports.file(DemoReports.standard)
            let pid = String(run.report.process.pid)
            func filtered(_ args: [String]) throws -> Report {
                let r = try hangwatch(["report", file, "--format", "json"] + args)
                #expect(r.status == 0, "\(args): \(r.stderr)")
                return try JSONReport.decode(Data(r.stdout.utf8))
            }
            let long = try filtered(["--min-ms", "200"])
            #expect(long.hangs.count == 2, "\(long.hangs.map(\.durationMs))")
            #expect(long.summary.hangCount == 2)
            #expect(long.notes.last?.contains("--min-ms 200") == true)

            let top = try filtered(["--top", "1"])
            #expect(top.hangs.map(\.id) == [run.report.hangs.max { $0.durationMs < $1.durationMs }?.id])
            #expect(top.hangs.first?.callTree?.first(containing: "parseLargeDocument") != nil)

            #expect(try filtered(["--thread", pid]).hangs.count == run.report.hangs.count)
            #expect(try filtered(["--thread", "no-such-thread"]).hangs.isEmpty)

            let focus = try filtered(["--focus", "tokenize"])
            #expect(focus.hangs.count == 1)
            #expect(focus.hangs.first?.callTree?.symbol.contains("tokenize") == true)
            let summary = try hangwatch(["report", file, "--focus", "renderThumbnails"]).stdout
            #expect(summary.hasPrefix("hangwatch: 1 hang (1 reported"), "\(summary.prefix(120))")
        }

        @Test func hideSystemAndInvertedOnAQsortHang() throws {
            let file = try DemoReports.file(DemoReports.qsort)
            let r = try hangwatch(["report", file, "--hide-system", "--format", "json"])
            #expect(r.status == 0, "\(r.stderr)")
            let tree = try #require(JSONReport.decode(Data(r.stdout.utf8)).hangs.first?.callTree)
            // The outermost frame of each stack has no caller to fold into, so it
            // stays; under a synthetic <all> root (a stack the unwinder could not
            // follow to main) those outermost frames are the root's children.
            let outermost = CallTreeBuilder.isSyntheticRoot(tree) ? tree.children : [tree]
            var pending = outermost.flatMap(\.children)
            while let node = pending.popLast() {
                #expect(!SystemImages.contains(node.image), "\(node.symbol) [\(node.image)] should be folded")
                pending += node.children
            }
            // glibc's qsort disappears and the comparator sits directly under the function that sorts.
            let sort = try #require(tree.first(containing: "sortRecords"))
            #expect(sort.children.contains { $0.symbol.contains("compareRecords") })
            #expect(!tree.allSymbols.contains { $0.contains("qsort") })

            let inverted = try hangwatch(["report", file, "--hide-system", "--inverted", "--format", "json"])
            let bottomUp = try #require(JSONReport.decode(Data(inverted.stdout.utf8)).hangs.first?.callTree)
            // One leaf function gives a single root; several hang under the synthetic <all>.
            let roots = CallTreeBuilder.isSyntheticRoot(bottomUp) ? bottomUp.children : [bottomUp]
            let heaviestLeaf = try #require(roots.first)
            #expect(heaviestLeaf.symbol.contains("compareRecords"), "bottom-up roots: \(roots.map(\.symbol))")
            #expect(heaviestLeaf.children.first?.symbol.contains("sortRecords") == true, "its caller comes next")
        }

        /// `hangwatch run` reaps with wait4: CPU time and peak memory are the program's own.
        @Test func runRecordsTheProgramsCpuTimeAndPeakMemory() throws {
            let run = try DemoReports.qsort.get()
            let process = run.report.process
            let user = try #require(process.cpuUserMs)
            let system = try #require(process.cpuSystemMs)
            let rss = try #require(process.peakRssKb)
            // The sort computes for ~350 ms of wall time. On a busy 2-core machine the program
            // gets only part of a core, so the lower bound leaves room for that.
            let sort = try #require(run.work("sortRecords").first)
            #expect(user + system >= 0.25 * sort.durationMs, "cpu \(user) + \(system) ms for a \(sort.durationMs) ms sort")
            #expect(user + system <= process.wallMs * 2.05, "one process, at most both cores")
            // The blocked demo sleeps and polls for 530 ms instead: far less CPU than wall time.
            let blocked = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "blocked"])
            let waited = blocked.work("waitForDisk").map(\.durationMs).reduce(0, +)
                + blocked.work("waitForSocket").map(\.durationMs).reduce(0, +)
            let blockedCpu = try #require(blocked.report.process.cpuUserMs) + #require(blocked.report.process.cpuSystemMs)
            #expect(waited > 400)
            #expect(blockedCpu < 0.5 * waited, "\(blockedCpu) ms of CPU while waiting \(waited) ms")
            // A Swift program with Foundation loaded: several MiB, far below a GiB.
            #expect(rss > 4 * 1024 && rss < 1024 * 1024, "peak RSS \(rss) KiB")
            let markdown = try hangwatch(["report", DemoReports.file(DemoReports.qsort), "--format", "markdown"]).stdout
            #expect(markdown.contains("peak RSS"))
        }

        @Test func badFilesGetOneLineAndADocumentedStatus() throws {
            let valid = try String(contentsOfFile: DemoReports.file(DemoReports.standard), encoding: .utf8)
            let scratch = try TestPaths.scratch()
            func status(_ contents: String?, _ extra: [String] = []) throws -> ProcessResult {
                let path = scratch.appendingPathComponent("input-\(UUID().uuidString).json").path
                if let contents { try Data(contents.utf8).write(to: URL(fileURLWithPath: path)) }
                return try hangwatch(["report", path] + extra)
            }
            let cases: [(String?, Int32, String)] = [
                (nil, 66, "No such file"),
                (String(valid.prefix(valid.count / 2)), 65, "truncated"),
                ("", 65, "empty"),
                ("\u{0}\u{1}binary", 65, "not a valid JSON"),
                ("[1, 2, 3]", 65, "not a hangwatch report"),
                (#"{"schemaVersion": 99}"#, 65, "schemaVersion 99"),
                (valid.replacingOccurrences(of: "\"pid\" :", with: "\"pidx\" :"), 65, "process.pid"),
                (valid.replacingOccurrences(of: "\"kind\" : \"cpu\"", with: "\"kind\" : 7"), 65, "kind"),
                (String(repeating: "[", count: 50_000), 65, "nested"),
            ]
            for (contents, expected, words) in cases {
                let r = try status(contents)
                #expect(r.status == expected, "\(contents?.prefix(30) ?? "missing"): status \(r.status), \(r.stderr)")
                #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
                #expect(r.stderr.contains(words), "\(r.stderr)")
                #expect(r.stdout.isEmpty)
            }
            let directory = try hangwatch(["report", scratch.path])
            #expect(directory.status == 66)
            #expect(directory.stderr.contains("directory"))
            let unwritable = try hangwatch(["report", DemoReports.file(DemoReports.standard), "-o", "/nonexistent-dir/out.md"])
            #expect(unwritable.status == 73)
            #expect(unwritable.stderr.split(separator: "\n").count == 1)
        }

        @Test func badCommandLinesAreUsageErrors() throws {
            let file = try DemoReports.file(DemoReports.standard)
            let cases: [([String], String)] = [
                (["report"], "no report file"),
                (["report", file, file], "one report file"),
                (["report", file, "--top", "0"], "--top"),
                (["report", file, "--top", "two"], "two"),
                (["report", file, "--min-ms", "-1"], "--min-ms"),
                (["report", file, "--focus"], "--focus"),
                (["report", file, "--focus", ""], "--focus"),
                (["report", file, "--format", "xml"], "xml"),
                (["report", file, "--inverted=yes"], "--inverted"),
                (["report", file, "--bogus"], "--bogus"),
                (["diff", file], "two report files"),
                (["diff", file, file, "--format", "html"], "html"),
                (["diff", "-", "-"], "standard input"),
            ]
            for (args, word) in cases {
                let r = try hangwatch(args)
                #expect(r.status == 2, "\(args.dropFirst(2)): status \(r.status)")
                #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
                #expect(r.stderr.contains(word), "\(args): \(r.stderr)")
            }
            for command in ["report", "diff"] {
                let help = try hangwatch([command, "--help"])
                #expect(help.status == 0)
                #expect(help.stdout.contains("Exit status"))
            }
            #expect(try hangwatch(["--help"]).stdout.contains("hangwatch diff BEFORE.json AFTER.json"))
        }
    }
}
