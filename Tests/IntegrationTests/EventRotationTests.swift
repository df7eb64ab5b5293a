import Foundation
import HangWatch
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Issue 13: a rotating event stream (`--rotate`, `--keep`) whose files
    /// each end with their interval's summary, and whose summaries add up.
    @Suite struct EventRotation {
        /// One file of a stream: its size, hang events and summary lines.
        private struct StreamFile {
            var path: String
            var size: Int
            var events: [HangEvent]
            var summaries: [IntervalSummary]
            var lastLineIsSummary: Bool
        }

        /// `base` and its rotated siblings (`NAME.k.EXT`), newest first: the current file, then .1, .2, ...
        private func files(_ base: String) throws -> [StreamFile] {
            var paths = [base]
            var k = 1
            while FileManager.default.fileExists(atPath: RotatingName.name(base, k)) {
                paths.append(RotatingName.name(base, k))
                k += 1
            }
            return try paths.map { path in
                let data = try #require(FileManager.default.contents(atPath: path), "no file \(path)")
                let contents = try HangEventLines.decode(data)
                let last = data.split(separator: 0x0A).last.map { Data($0) } ?? Data()
                return StreamFile(path: path, size: data.count, events: contents.events, summaries: contents.summaries,
                                  lastLineIsSummary: String(decoding: last, as: UTF8.self).contains("\"event\":\"summary\""))
            }
        }

        /// A run of the service demo under hangwatch, and the stream it wrote.
        private struct StreamRun {
            var run: HangwatchRun
            var stream: String
            var pair: (HangwatchRun, String) { (run, stream) }
        }

        /// The service demo under `hangwatch run --events STREAM hangwatchArgs`, in a scratch
        /// directory of its own; `prepare` runs first, given the stream's path.
        private static func serviceRun(seconds: Int, _ hangwatchArgs: [String],
                                       prepare: (String) throws -> Void = { _ in },
                                       whileRunning: ((String) -> Void)? = nil) throws -> StreamRun {
            let scratch = try TestPaths.scratch()
            let stream = scratch.appendingPathComponent("hangs.jsonl").path
            try prepare(stream)
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "service", "--seconds", "\(seconds)"],
                                           hangwatchArgs: ["--events", stream] + hangwatchArgs, scratch: scratch,
                                           whileRunning: whileRunning.map { act in { _ in act(stream) } })
            return StreamRun(run: run, stream: stream)
        }

        /// The suite's runs of the service demo. They are idle most of the time (one
        /// request of 160-420 ms a second), so they run three at a time from the first
        /// test that reads one (about two thirds of a core of requests between them):
        /// the suite takes the longest lane's time (15 s), not the sum (39 s).
        private struct ServiceRuns {
            let bySize, byTime, liveFileDeleted, afterAnEarlierRun, blockedRotation: InBackground<StreamRun>
            let library: InBackground<LibraryRun>

            init() {
                bySize = InBackground { try EventRotation.serviceRun(seconds: 10, ["--rotate", "16K", "--keep", "20"]) }
                byTime = InBackground { try EventRotation.serviceRun(seconds: 7, ["--rotate", "2s", "--keep", "2"]) }
                liveFileDeleted = InBackground {
                    try EventRotation.serviceRun(seconds: 8, ["--rotate", "3s", "--keep", "5"]) { _ in } whileRunning: { stream in
                        // After the first rotation (3 s), delete the live file once.
                        usleep(4_200_000)
                        unlink(stream)
                    }
                }
                // Each lane's second run starts when its first one is done, whatever its outcome.
                let lanes = (bySize, byTime, liveFileDeleted)
                afterAnEarlierRun = InBackground {
                    _ = try? lanes.0.get()
                    return try EventRotation.serviceRun(seconds: 2, ["--rotate", "1h"]) { stream in
                        try EventRotation.earlierLine.write(toFile: stream, atomically: true, encoding: .utf8)
                    }
                }
                blockedRotation = InBackground {
                    _ = try? lanes.1.get()
                    // NAME.1.jsonl is a directory that `--keep 1` cannot delete.
                    return try EventRotation.serviceRun(seconds: 5, ["--rotate", "2s", "--keep", "1"]) { stream in
                        try FileManager.default.createDirectory(atPath: RotatingName.name(stream, 1) + "/inside",
                                                                withIntermediateDirectories: true)
                    }
                }
                library = InBackground {
                    _ = try? lanes.2.get()
                    return try EventRotation.libraryRun()
                }
            }
        }
        private static let runs = ServiceRuns()

        /// One of the suite's runs, once every run is over: the first test to ask
        /// waits for all six (15 s), so no run of the suite outlives its tests
        /// (a filtered `swift test`, or the machine lock another suite waits for).
        private static func finished<Value>(_ lane: KeyPath<ServiceRuns, InBackground<Value>>) throws -> Value {
            let runs = Self.runs
            for wait in [runs.bySize.wait, runs.byTime.wait, runs.liveFileDeleted.wait, runs.afterAnEarlierRun.wait,
                         runs.blockedRotation.wait, runs.library.wait] { wait() }
            return try runs[keyPath: lane].get()
        }
        private static let earlierLine = "an earlier run's line\n"

        @Test func filesRotateAtTheSizeAskedAndTheirSummariesAddUp() throws {
            let (run, stream) = try Self.finished(\.bySize).pair
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let files = try files(stream)
            // Ten requests of 160–420 ms, about 2.5 KB per reported hang: several files.
            #expect(files.count >= 3, "\(files.map(\.size))")
            for file in files {
                #expect(file.size <= 16 * 1024, "\(file.path): \(file.size) bytes")
                #expect(file.summaries.count == 1 && file.lastLineIsSummary, "\(file.path) must end with one summary")
            }
            let summaries = files.compactMap(\.summaries.first)
            #expect(summaries.dropFirst().allSatisfy { $0.closedBy == .size })
            #expect(summaries.first?.closedBy == .exit)

            // The files' intervals follow each other without gap or overlap (oldest file last).
            let oldestFirst = Array(summaries.reversed())
            for (a, b) in zip(oldestFirst, oldestFirst.dropFirst()) { #expect(a.endUnixNs == b.startUnixNs) }

            // Summaries add up: to the hang lines, to the program's own work, to the durations.
            let ended = files.flatMap(\.events).filter { $0.phase == .ended }
            let requests = run.measured
            #expect(requests.count >= 9, "\(requests.map(\.name))")
            #expect(summaries.reduce(0) { $0 + $1.summary.hangCount } == ended.count)
            #expect(ended.count == requests.count, "\(ended.map(\.hang.durationMs)) vs \(requests.map(\.durationMs))")
            #expect(summaries.reduce(0) { $0 + $1.summary.reportedHangCount } == ended.filter(\.hang.reported).count)
            let summedMs = summaries.reduce(0) { $0 + $1.summary.totalHangMs }
            #expect(abs(summedMs - ended.reduce(0) { $0 + $1.hang.durationMs }) < 0.01 * Double(summaries.count))
            #expect(abs(summedMs - requests.reduce(0) { $0 + $1.durationMs }) < 5 * Double(requests.count))
            // Each file's own summary counts its own hang lines.
            for file in files {
                #expect(file.summaries.first?.summary.hangCount == file.events.filter { $0.phase == .ended }.count,
                        "\(file.path)")
            }

            // The report at exit covers the last interval, as the current file's summary does.
            let current = try #require(summaries.first)
            #expect(run.report.summary.hangCount == current.summary.hangCount)
            #expect(abs(run.report.summary.totalHangMs - current.summary.totalHangMs) < 0.01 * Double(max(1, current.summary.hangCount)))
            #expect(run.report.notes.contains { $0.contains("closed \(files.count - 1) interval")
                && $0.contains("(\(files.count - 1) rotated into") }, "\(run.report.notes)")

            // A rotated file reads as a report, its interval in the notes.
            let older = try ProcessRunner.run(TestPaths.hangwatch, ["report", files[1].path, "--format", "json"])
            #expect(older.status == 0, "\(older.stderr)")
            let rebuilt = try JSONReport.decode(Data(older.stdout.utf8))
            // The summary counts hangs that ended in the interval; a hang told in
            // progress just before the file closed is in the report too, marked so.
            let endedInFile = Set(files[1].events.filter { $0.phase == .ended }.map(\.hang.id))
            let runningAtClose = Set(files[1].events.map(\.hang.id)).subtracting(endedInFile).count
            #expect(rebuilt.hangs.filter { !$0.inProgress }.count == files[1].summaries.first?.summary.hangCount)
            #expect(rebuilt.hangs.filter(\.inProgress).count == runningAtClose)
            #expect(runningAtClose == 0 || rebuilt.notes.contains { $0.contains("still in progress when this file was closed by size") },
                    "\(rebuilt.notes)")
            #expect(rebuilt.notes.contains { $0.contains("file closed by size") }, "\(rebuilt.notes)")
        }

        @Test func keepDeletesTheOldestFilesAndIntervalsCloseOnTime() throws {
            let (run, stream) = try Self.finished(\.byTime).pair
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let files = try files(stream)
            // Three rotations in 7 s (at 2, 4 and 6 s), of which two closed files are kept.
            #expect(files.count == 3, "\(files.map(\.path))")
            #expect(!FileManager.default.fileExists(atPath: RotatingName.name(stream, 3)))
            let summaries = files.compactMap(\.summaries.first)
            for closed in summaries.dropFirst() {
                #expect(closed.closedBy == .interval)
                // Checked at every drain (10 ms apart with live events): closed within a few drains of 2 s.
                #expect(closed.seconds >= 2.0 && closed.seconds < 2.3, "\(closed.seconds) s")
            }
            // Newest first: the kept files hold later hangs than the older ones.
            let firstIds = files.map { $0.events.first?.hang.id ?? .max }
            #expect(firstIds[0] > firstIds[1] && firstIds[1] > firstIds[2], "\(firstIds)")
            // The deleted files' hangs are the earliest ones: ids 1... are gone, the rest are all there.
            let kept = Set(files.flatMap(\.events).filter { $0.phase == .ended }.map(\.hang.id))
            let lastId = try #require(kept.max())
            #expect(kept == Set((lastId - kept.count + 1)...lastId), "\(kept.sorted())")
            #expect(kept.count < run.measured.count)
        }

        /// The service demo watching itself with the library, rotating by time.
        private struct LibraryRun {
            var result: ProcessResult
            var stream, reportPath, measurePath: String
        }

        private static func libraryRun() throws -> LibraryRun {
            let scratch = try TestPaths.scratch()
            let stream = scratch.appendingPathComponent("lib.jsonl").path
            let reportPath = scratch.appendingPathComponent("library.json").path
            let measurePath = scratch.appendingPathComponent("measure.txt").path
            let result = try ProcessRunner.run(TestPaths.runLoopDemo,
                                               ["--scenario", "service", "--seconds", "7", "--library", reportPath,
                                                "--measure", measurePath],
                                               environment: ["HANGWATCH_EVENTS": stream, "HANGWATCH_ROTATE": "3s",
                                                             "HANGWATCH_KEEP": "5"], timeout: 60)
            return LibraryRun(result: result, stream: stream, reportPath: reportPath, measurePath: measurePath)
        }

        @Test func theLibraryRotatesAndSummarizesToo() throws {
            let library = try Self.finished(\.library)
            let (result, stream, reportPath, measurePath) = (library.result, library.stream, library.reportPath,
                                                             library.measurePath)
            #expect(result.status == 0, "\(result.stderr)")
            let files = try files(stream)
            #expect(files.count >= 2, "\(files.map(\.path))")
            for file in files { #expect(file.summaries.count == 1 && file.lastLineIsSummary, "\(file.path)") }
            let summaries = files.compactMap(\.summaries.first)
            let measured = MeasuredWork.parse(file: measurePath)
            #expect(summaries.reduce(0) { $0 + $1.summary.hangCount } == measured.count)
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: reportPath)))
            #expect(report.summary.hangCount == summaries.first?.summary.hangCount)
            #expect(report.notes.contains { $0.contains("event stream closed") }, "\(report.notes)")
        }

        /// A file left by an earlier run moves into the chain untouched; a rotation that cannot
        /// move the files (here `NAME.1.jsonl` is a directory) loses no line: the lines go on to
        /// the open file, each failed attempt still closes its interval with a summary, and the
        /// report says the rotation failed.
        @Test func anEarlierRunsFileAndAFailedRotationLoseNothing() throws {
            let (kept, stream) = try Self.finished(\.afterAnEarlierRun).pair
            #expect(kept.result.status == 0, "\(kept.result.stderr)")
            #expect(try String(contentsOfFile: RotatingName.name(stream, 1), encoding: .utf8) == Self.earlierLine)
            let fresh = try HangEventLines.decode(try #require(FileManager.default.contents(atPath: stream)))
            #expect(fresh.summaries.count == 1 && fresh.unreadableLines == 0, "the earlier line stays out of the new file")
            #expect(fresh.events.filter { $0.phase == .ended }.count == kept.measured.count)

            // Now NAME.1.jsonl is a directory that `--keep 1` cannot delete.
            let (run, path) = try Self.finished(\.blockedRotation).pair
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: path))
            let contents = try HangEventLines.decode(data)
            // Every hang is in the one file, and the intervals' summaries still add up to them.
            let ended = contents.events.filter { $0.phase == .ended }
            #expect(ended.count == run.measured.count, "\(ended.count) lines for \(run.measured.count) requests")
            #expect(contents.summaries.count >= 2, "\(contents.summaries.map(\.closedBy))")
            #expect(contents.summaries.reduce(0) { $0 + $1.summary.hangCount } == ended.count)
            #expect(run.report.notes.contains { $0.contains("rotation") && $0.contains("failed") }, "\(run.report.notes)")
        }

        /// The live file deleted under hangwatch (a cleanup job, an outside rotation): the path
        /// is opened anew at the next line, the files already in the chain stay, and the
        /// report says what happened.
        @Test func aDeletedLiveFileIsOpenedAnewAndTheChainKept() throws {
            let (run, stream) = try Self.finished(\.liveFileDeleted).pair
            #expect(run.result.status == 0, "\(run.result.stderr)")
            #expect(run.report.notes.contains { $0.contains("deleted or moved away 1 time") }, "\(run.report.notes)")
            let files = try files(stream)
            // The first interval's file was rotated before the deletion and is still there.
            #expect(files.count >= 2, "\(files.map(\.path))")
            let oldest = try #require(files.last)
            #expect(oldest.summaries.count == 1 && oldest.lastLineIsSummary)
            #expect(oldest.events.contains { $0.hang.id == 1 }, "the first hangs are kept")
            // Lines after the deletion were written: the current file ends with the exit summary.
            #expect(files[0].summaries.last?.closedBy == .exit && files[0].lastLineIsSummary)
            #expect(files[0].events.contains { $0.phase == .ended })
        }

        @Test(arguments: [
            (["--rotate", "10"], "a unit is required"),
            (["--rotate", "100"], "a unit is required"),
            (["--rotate", "1K"], "at least 4K"),
            (["--rotate", "0s"], "at least 1s"),
            (["--keep", "3"], "--keep needs --rotate"),
        ])
        func badRotationsAreOneClearLine(args: [String], message: String) throws {
            let scratch = try TestPaths.scratch()
            let stream = scratch.appendingPathComponent("h.jsonl").path
            let eventsArgs = args.first == "--keep" ? [] : ["--events", stream]
            let r = try ProcessRunner.run(TestPaths.hangwatch, ["run"] + eventsArgs + args + ["--", "/bin/true"])
            #expect(r.status == 2)
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && r.stderr.contains(message), "\(r.stderr)")
            let noEvents = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--rotate", "1M", "--", "/bin/true"])
            #expect(noEvents.status == 2 && noEvents.stderr.contains("--events"), "\(noEvents.stderr)")
        }
    }
}

/// The rotated file names, as `hangwatch` makes them (`hangs.jsonl` → `hangs.2.jsonl`).
private enum RotatingName {
    static func name(_ path: String, _ k: Int) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        return ext.isEmpty ? "\(path).\(k)" : url.deletingPathExtension().path + ".\(k).\(ext)"
    }
}
