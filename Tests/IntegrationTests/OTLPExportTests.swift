import Foundation
import HangWatch
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Issue 13: each hang as an OTLP log record, decoded by a real receiver
    /// (Tests/validators/otlp_receiver.py, the opentelemetry-proto package).
    @Suite(.serialized) struct OTLPExport {
        /// A receiver on 127.0.0.1; stopped when the test ends.
        final class Receiver {
            let process = Process()
            let records: URL
            let port: Int

            init(_ scratch: URL, extra: [String] = []) throws {
                let python = try #require(Validators.python3, "python3 is needed for the OTLP receiver")
                let portFile = scratch.appendingPathComponent("otlp.port")
                records = scratch.appendingPathComponent("otlp.jsonl")
                process.executableURL = URL(fileURLWithPath: python)
                process.arguments = [Validators.script("otlp_receiver.py"), portFile.path, records.path] + extra
                // Its own output, so it never holds the test runner's pipes open.
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                let deadline = Date().addingTimeInterval(20)
                var port: Int?
                while port == nil && Date() < deadline && process.isRunning {
                    port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
                    if port == nil { usleep(20_000) }
                }
                self.port = try #require(port, "the receiver did not start (is opentelemetry-proto installed?)")
            }

            deinit { stop() }

            /// SIGKILL: the receiver may have inherited an ignored SIGTERM from the test runner.
            func stop() {
                guard process.isRunning else { return }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }

            var url: String { "http://127.0.0.1:\(port)" }

            /// Each line the receiver wrote: a decoded record, or {"refused": n}.
            func lines() throws -> [[String: Any]] {
                let text = (try? String(contentsOf: records, encoding: .utf8)) ?? ""
                return try text.split(separator: "\n").map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                }
            }
        }

        @Test func eachHangArrivesAsALogRecordWithItsDurationAndFunction() throws {
            let scratch = try TestPaths.scratch()
            let receiver = try Receiver(scratch)
            defer { receiver.stop() }
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, hangwatchArgs: ["--otlp-endpoint", receiver.url],
                                           scratch: scratch)
            #expect(run.result.status == 0)
            let all = try receiver.lines()
            // An in-progress record for each reported hang as it ran, then one per hang as it ended.
            let records = all.filter { ($0["attributes"] as? [String: Any])?["hangwatch.hang.in_progress"] as? Bool == false }
            #expect(records.count == run.report.hangs.count, "\(records)")
            #expect(all.count - records.count == run.report.hangs.filter(\.reported).count)
            let start = try #require(run.report.process.startTimeUnixNs)
            for (record, hang) in zip(records, run.report.hangs) {
                let attributes = try #require(record["attributes"] as? [String: Any])
                #expect(record["path"] as? String == "/v1/logs")
                #expect(record["contentType"] as? String == "application/x-protobuf")
                #expect(record["eventName"] as? String == "hangwatch.hang")
                #expect(record["severity"] as? Int == 13)
                // The report file rounds to µs; the record carries the full value.
                #expect(abs((attributes["hangwatch.hang.duration_ms"] as? Double ?? 0) - hang.durationMs) < 0.001)
                #expect(attributes["hangwatch.hang.kind"] as? String == hang.kind.rawValue)
                #expect(attributes["thread.id"] as? Int == hang.thread.tid)
                #expect(attributes["process.pid"] as? Int == run.report.process.pid)
                #expect(attributes["process.executable.name"] as? String == "RunLoopDemo")
                // The record is dated at the hang's start.
                let time = try #require(record["timeUnixNano"] as? Int)
                #expect(abs(time - (Int(start) + Int(hang.startMs * 1e6))) < 1000, "\(time)")
                // code.function.name: the demo's own function the hang spent its time in, never libc.
                if hang.reported {
                    let name = try #require(attributes["code.function.name"] as? String)
                    // parseLargeDocument's time is split between its tokenize (about 70 %) and
                    // checksum calls; either may come out on top, both are the demo's own.
                    #expect(["parseLargeDocument", "tokenize", "checksum", "renderThumbnails"].contains { name.contains($0) },
                            "\(name)")
                }
            }
            let frames = records.compactMap { ($0["attributes"] as? [String: Any])?["hangwatch.hang.heaviest_frames"] as? [String] }
            for name in ["parseLargeDocument", "renderThumbnails"] {
                #expect(frames.contains { $0.contains { $0.contains(name) } }, "\(name) in \(frames)")
            }
            #expect(!run.report.notes.contains { $0.contains("could not be sent") })
        }

        /// Issue 30: `attach` streams a running service's hangs as `run` does, through
        /// the same capture session: each hang to the receiver and to the event file.
        @Test func anAttachedServiceStreamsItsHangsToTheReceiver() throws {
            let scratch = try TestPaths.scratch()
            let receiver = try Receiver(scratch)
            defer { receiver.stop() }
            let pidFile = scratch.appendingPathComponent("pid").path
            let eventsPath = scratch.appendingPathComponent("hangs.jsonl").path
            let program = try AttachedProgram.start(TestPaths.runLoopDemo, ["--scenario", "service", "--seconds", "4",
                                                                             "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let attach = try AttachReport.attach(program.pid, ["--duration", "30s", "--otlp-endpoint", receiver.url,
                                                               "--events", eventsPath], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0)
            let hangs = attach.report.hangs
            // One request a second hangs the loop: about four in four seconds.
            #expect(hangs.count >= 3, "hangs: \(hangs.map(\.durationMs))")
            let records = try receiver.lines().filter {
                ($0["attributes"] as? [String: Any])?["hangwatch.hang.in_progress"] as? Bool == false
            }
            #expect(records.count == hangs.count, "\(records.count) records, \(hangs.count) hangs")
            for (record, hang) in zip(records, hangs) {
                let attributes = try #require(record["attributes"] as? [String: Any])
                #expect(abs((attributes["hangwatch.hang.duration_ms"] as? Double ?? 0) - hang.durationMs) < 0.001)
                #expect(attributes["process.pid"] as? Int == Int(program.pid))
                #expect(attributes["thread.id"] as? Int == hang.thread.tid)
            }
            let events = try HangEventLines.decode(try #require(FileManager.default.contents(atPath: eventsPath))).events
            let ended = events.filter { $0.phase == .ended }
            #expect(ended.count == hangs.count, "\(ended.map(\.hang.durationMs))")
            for (event, hang) in zip(ended, hangs) { #expect(abs(event.hang.durationMs - hang.durationMs) < 0.001) }
            #expect(!attach.report.notes.contains { $0.contains("could not be sent") })
        }

        @Test func theLibrarySendsTheSameRecords() throws {
            let scratch = try TestPaths.scratch()
            let receiver = try Receiver(scratch)
            defer { receiver.stop() }
            let report = scratch.appendingPathComponent("library.json").path
            let result = try ProcessRunner.run(TestPaths.runLoopDemo, ["--library", report],
                                               environment: ["HANGWATCH_OTLP_ENDPOINT": receiver.url])
            #expect(result.status == 0, "\(result.stderr)")
            let library = try JSONReport.decode(try #require(FileManager.default.contents(atPath: report)))
            let records = try receiver.lines().filter {
                ($0["attributes"] as? [String: Any])?["hangwatch.hang.in_progress"] as? Bool == false
            }
            #expect(records.count == library.hangs.count, "\(records.count) records, \(library.hangs.count) hangs")
            let durations = records.compactMap { ($0["attributes"] as? [String: Any])?["hangwatch.hang.duration_ms"] as? Double }
            for hang in library.hangs {
                #expect(durations.contains { abs($0 - hang.durationMs) < 0.001 }, "\(hang.durationMs) not sent: \(durations)")
            }
        }

        /// The library with nobody listening: the exporter's records are dropped and counted,
        /// and at exit it gets at most 2 s (the exit is 0–3 s longer than without an endpoint).
        @Test func theLibraryGivesADownEndpointTwoSecondsAtExit() throws {
            @Sendable func run(_ environment: [String: String]) throws -> (seconds: Double, status: Int32, report: Report) {
                let scratch = try TestPaths.scratch()
                let report = scratch.appendingPathComponent("library.json").path
                let started = Date()
                let result = try ProcessRunner.run(TestPaths.runLoopDemo, ["--library", report],
                                                   environment: environment, timeout: 60)
                guard let data = FileManager.default.contents(atPath: report) else {
                    throw TestFailure("no library report; status \(result.status): \(result.stderr)")
                }
                return (Date().timeIntervalSince(started), result.status, try JSONReport.decode(data))
            }
            let closed = try TestPaths.scratch()
            let receiver = try Receiver(closed)
            let port = receiver.port + 1 // nobody listens there
            receiver.stop()
            // Side by side: the demo is busy under half its time, and the two runs are compared
            // with each other, on the same loaded machine.
            let (free, down) = try sideBySide({ try run([:]) },
                                              { try run(["HANGWATCH_OTLP_ENDPOINT": "http://127.0.0.1:\(port)"]) })
            #expect(free.status == 0 && down.status == 0)
            let extra = down.seconds - free.seconds
            #expect(extra <= 3, "a down endpoint made the exit \(extra) s longer")
            #expect(down.report.hangs.count == free.report.hangs.count)
            #expect(down.report.notes.contains { $0.contains("could not be sent") }, "\(down.report.notes)")
        }

        @Test func aFailingEndpointIsRetriedAndADownOneIsDroppedAndCounted() throws {
            // 500 to the first two posts: both hangs still arrive, after retries.
            let scratch = try TestPaths.scratch()
            let receiver = try Receiver(scratch, extra: ["--fail-first", "2"])
            defer { receiver.stop() }
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "blocked"],
                                           hangwatchArgs: ["--otlp-endpoint", receiver.url], scratch: scratch)
            let lines = try receiver.lines()
            #expect(lines.filter { $0["refused"] != nil }.count == 2)
            // The first post is refused, retried 0.25 s later (refused again), then 0.5 s after that
            // (received): the gaps on the receiver's clock, with room for a loaded machine.
            let times = lines.compactMap { $0["receivedAt"] as? Double }
            if times.count >= 3 {
                let (first, second) = (times[1] - times[0], times[2] - times[1])
                #expect(first >= 0.24 && first < 0.6, "first retry after \(first) s")
                #expect(second >= 0.49 && second < 0.9, "second retry after \(second) s")
            } else {
                Issue.record("\(lines.count) posts logged")
            }
            // One record per hang as it ended, and one more per reported hang while it ran.
            let expected = run.report.hangs.count + run.report.hangs.filter(\.reported).count
            #expect(lines.filter { $0["refused"] == nil }.count == expected, "\(lines)")
            #expect(!run.report.notes.contains { $0.contains("could not be sent") }, "\(run.report.notes)")

            // Nobody listens: the hangs are dropped after the retries, and the report says so.
            let closed = try TestPaths.scratch()
            let started = Date()
            let down = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "blocked"],
                                            hangwatchArgs: ["--otlp-endpoint", "http://127.0.0.1:\(receiver.port + 1)"],
                                            scratch: closed)
            #expect(down.result.status == 0)
            #expect(down.report.hangs.count == 2)
            let records = down.report.hangs.count + down.report.hangs.filter(\.reported).count
            #expect(down.report.notes.contains { $0.contains("\(records) of \(records) hang records could not be sent") },
                    "\(down.report.notes)")
            // The program was not slowed: its blocked waits took their own time.
            for name in ["waitForDisk", "waitForSocket"] {
                let work = try #require(down.work(name).first)
                let hang = try #require(down.hang(startingNear: work))
                #expect(abs(hang.durationMs - work.durationMs) <= 5)
            }
            // "At exit, unsent records get at most 5 s": the time hangwatch took beyond the
            // program's own life (its wallMs) is that bound, plus 1.5 s for start-up,
            // symbolication and the report on a loaded machine.
            let beyondProgram = Date().timeIntervalSince(started) - down.report.process.wallMs / 1000
            #expect(beyondProgram <= 6.5, "hangwatch took \(beyondProgram) s after the program")
        }
    }
}
