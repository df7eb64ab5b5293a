import Foundation
import HangWatch
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Issue 13: each hang as it happens, in a JSON-lines stream and through
    /// the library's callback.
    @Suite struct HangEvents {
        /// The stream's lines, parsed by the same reader `hangwatch report` uses.
        private func events(_ path: String) throws -> [HangEvent] {
            let data = try #require(FileManager.default.contents(atPath: path), "no event file at \(path)")
            return try HangEventLines.decode(data).events
        }

        @Test func everyHangIsStreamedAsTheReportHoldsIt() throws {
            let scratch = try TestPaths.scratch()
            let stream = scratch.appendingPathComponent("events.jsonl").path
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, hangwatchArgs: ["--events", stream], scratch: scratch)
            #expect(run.result.status == 0)
            let events = try events(stream)
            let ended = events.filter { $0.phase == .ended }
            // One ended event per hang of the report, the same hang: start, duration, kind, samples.
            #expect(ended.count == run.report.hangs.count, "\(ended.map(\.hang.durationMs)) vs \(run.report.hangs.map(\.durationMs))")
            for (event, hang) in zip(ended, run.report.hangs) {
                #expect(event.hang.startMs == hang.startMs)
                #expect(event.hang.durationMs == hang.durationMs)
                #expect(event.hang.kind == hang.kind)
                // The event is told once the last samples settled; on a loaded machine a
                // watchdog tick may still land after that, so allow a few.
                #expect(abs(event.hang.sampleCount - hang.sampleCount) <= max(3, hang.sampleCount / 50),
                        "\(event.hang.sampleCount) vs \(hang.sampleCount)")
                #expect(event.hang.callTree?.heaviestPathSymbols == hang.callTree?.heaviestPathSymbols)
                #expect(!event.hang.inProgress)
                // "About 50 ms after it ends": the settle (50 ms at 1 kHz), then the next 10 ms drain
                // and the symbolication; 150 ms covers a loaded machine.
                if let start = event.hangStartUnixNs {
                    let afterEndMs = Double(event.timeUnixNs - start) / 1e6 - hang.durationMs
                    #expect(afterEndMs >= 50 && afterEndMs <= 150, "hang \(hang.id) told \(afterEndMs) ms after its end")
                }
            }
            // Ids number hangs in the order they are first told: one thread here, so start order.
            #expect(ended.map(\.hang.id) == Array(1...ended.count))
            // Each reported hang was told while it ran, before it ended, with the same id.
            for hang in ended.map(\.hang).filter(\.reported) {
                let lines = events.filter { $0.hang.id == hang.id }
                #expect(lines.map(\.phase) == [.inProgress, .ended], "hang \(hang.id): \(lines.map(\.phase))")
                let early = try #require(lines.first)
                #expect(early.hang.inProgress)
                #expect(early.hang.durationMs >= run.report.thresholds.reportMs)
                #expect(early.hang.durationMs < hang.durationMs)
                // Told while it ran: after it crossed the report threshold, before it ended.
                let start = try #require(early.hangStartUnixNs)
                #expect(early.timeUnixNs >= start + Int64(run.report.thresholds.reportMs * 1e6))
                #expect(early.timeUnixNs < start + Int64(hang.durationMs * 1e6))
            }
            // Wall-clock times: the stream and the report agree on when the process started.
            let start = try #require(run.report.process.startTimeUnixNs)
            #expect(ended.allSatisfy { $0.process.startTimeUnixNs == start })
            #expect(abs(Double(start) / 1e9 - Date().timeIntervalSince1970) < 120)

            // `hangwatch report` rebuilds the report from the stream.
            let rebuilt = try ProcessRunner.run(TestPaths.hangwatch, ["report", stream, "--format", "json"])
            #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
            let report = try JSONReport.decode(Data(rebuilt.stdout.utf8))
            #expect(report.hangs.map(\.durationMs) == run.report.hangs.map(\.durationMs))
            #expect(report.hangs.map(\.startMs) == run.report.hangs.map(\.startMs))
        }

        @Test func aKilledProgramLeavesEveryEndedHangAndTheOneInProgress() throws {
            let scratch = try TestPaths.scratch()
            let stream = scratch.appendingPathComponent("events.jsonl").path
            let pidFile = scratch.appendingPathComponent("pid").path
            // The kill scenario: a 150 ms stall first (a hang that ends), then a 10 s spin.
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "kill", "--pid-file", pidFile],
                                           hangwatchArgs: ["--events", stream], measure: false,
                                           scratch: scratch) { _ in
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: pidFile + ".hang") && Date() < deadline { usleep(10_000) }
                usleep(600_000)
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    kill(pid, SIGKILL)
                }
            }
            #expect(run.result.status == 137)
            let events = try events(stream)
            let endedIds = Set(events.filter { $0.phase == .ended }.map(\.hang.id))
            let reportEnded = run.report.hangs.filter { !$0.inProgress }
            #expect(endedIds.count == reportEnded.count, "ended in stream \(endedIds), in report \(reportEnded.map(\.durationMs))")
            let spin = try #require(run.report.hangs.last)
            #expect(spin.inProgress)
            let told = events.filter { $0.phase == .inProgress && $0.hang.startMs == spin.startMs }
            // Told when it crossed the threshold, and once more with its length at the kill.
            #expect(told.count == 2, "\(told.map(\.hang.durationMs))")
            #expect(told.last?.hang.durationMs == spin.durationMs)
            #expect(told.last?.hang.callTree?.allSymbols.contains { $0.contains("spinForever") } == true)
        }

        /// A callback that blocks for good (here in open() of a FIFO nobody reads) holds back
        /// only later callbacks: the program's hangs are measured as ever, the report has them
        /// all, and at exit hangwatch waits for the callback 1 s, not for ever.
        @Test func aBlockedCallbackHoldsBackOnlyLaterCallbacksAndExitWaitsOneSecond() throws {
            func run(onHang path: String, _ scratch: URL) throws -> (seconds: Double, report: Report, work: [MeasuredWork]) {
                let report = scratch.appendingPathComponent("library.json").path
                let measure = scratch.appendingPathComponent("measure.txt").path
                let started = Date()
                let result = try ProcessRunner.run(TestPaths.runLoopDemo,
                                                   ["--library", report, "--on-hang", path, "--measure", measure],
                                                   timeout: 60)
                #expect(result.status == 0, "\(result.stderr)")
                let decoded = try JSONReport.decode(try #require(FileManager.default.contents(atPath: report)))
                return (Date().timeIntervalSince(started), decoded, MeasuredWork.parse(file: measure))
            }
            let freeScratch = try TestPaths.scratch(), blockedScratch = try TestPaths.scratch()
            let free = try run(onHang: freeScratch.appendingPathComponent("hangs.log").path, freeScratch)
            let fifo = blockedScratch.appendingPathComponent("nobody-reads.fifo").path
            #expect(mkfifo(fifo, 0o644) == 0)
            let blocked = try run(onHang: fifo, blockedScratch)
            let extra = blocked.seconds - free.seconds
            #expect(extra >= 0.8 && extra <= 1.8, "a blocked callback made the exit \(extra) s longer")
            // hangwatch's own wait at exit is no hang of the program's, and the report says it waited.
            #expect(blocked.report.hangs.count == free.report.hangs.count,
                    "\(blocked.report.hangs.map(\.durationMs)) vs \(free.report.hangs.map(\.durationMs))")
            #expect(blocked.report.notes.contains { $0.contains("onHang callback had not returned at exit") },
                    "\(blocked.report.notes)")
            for work in blocked.work.filter({ $0.durationMs >= 100 }) {
                #expect(blocked.report.hangs.contains { abs($0.durationMs - work.durationMs) <= 5 },
                        "\(work.name) \(work.durationMs) ms; hangs \(blocked.report.hangs.map(\.durationMs))")
            }
        }

        @Test(arguments: ["RunLoopDemo", "DispatchMainDemo"])
        func theLibraryCallbackRunsOncePerHangOffTheHungThread(demo: String) throws {
            let scratch = try TestPaths.scratch()
            let log = scratch.appendingPathComponent("on-hang.txt").path
            let program = demo == "RunLoopDemo" ? TestPaths.runLoopDemo : TestPaths.dispatchMainDemo
            let run = try HangwatchRun.library(program, ["--on-hang", log])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let text = try String(contentsOfFile: log, encoding: .utf8)
            // hang <id> <durationMs> <hungTid> <callbackTid> <onMainThread>
            let lines = text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(lines.count == run.report.hangs.count, "callback: \(text) report: \(run.report.hangs.map(\.durationMs))")
            #expect(Set(lines.compactMap { Int($0[1]) }).count == lines.count, "each hang once: \(text)")
            for fields in lines {
                #expect(fields.count == 6)
                #expect(fields[3] != fields[4], "the callback ran on the hung thread: \(fields)")
                #expect(fields[5] == "0", "the callback ran on the main thread: \(fields)")
                let duration = try #require(Double(fields[2]))
                #expect(run.report.hangs.contains { abs($0.durationMs - duration) < 0.01 }, "\(duration) not in the report")
            }
        }
    }
}
