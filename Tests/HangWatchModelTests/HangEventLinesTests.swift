import Foundation
import HangWatchModel
import Testing

/// The event stream's codec and the report it rebuilds (issue 13).
@Suite struct HangEventLinesTests {
    private func event(_ phase: HangEvent.Phase, id: Int, startMs: Double, durationMs: Double,
                       pid: Int = 7) -> HangEvent {
        let hang = Hang(id: id, thread: ThreadRef(tid: pid, name: "main"), startMs: startMs, durationMs: durationMs,
                        reported: durationMs >= 250, inProgress: phase == .inProgress, kind: .cpu, blockedIn: nil,
                        sampleCount: Int(durationMs), sampleCoverage: 1,
                        callTree: CallTreeNode(symbol: "work()", image: "App", weightMs: durationMs, selfMs: durationMs,
                                                sampleCount: Int(durationMs), children: []))
        return HangEvent(phase: phase, timeUnixNs: 1_800_000_000_000_000_000 + Int64((startMs + durationMs) * 1e6),
                         process: ProcessInfoRecord(pid: pid, executable: "/opt/App", arguments: [], exitCode: nil,
                                                    signal: nil, wallMs: 0,
                                                    startTimeUnixNs: 1_800_000_000_000_000_000),
                         thresholds: Thresholds(), hang: hang)
    }

    private func stream(_ events: [HangEvent]) throws -> Data {
        try events.reduce(into: Data()) { $0.append(try HangEventLines.encode($1)) }
    }

    @Test func eachEventIsOneLineThatReadsBack() throws {
        let original = event(.ended, id: 3, startMs: 120.5, durationMs: 300.25)
        let line = try HangEventLines.encode(original)
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false, "one line, whatever the tree")
        let read = try HangEventLines.decode(line)
        #expect(read.events == [original])
        #expect(read.unreadableLines == 0)
        #expect(HangEventLines.looksLikeEvents(line))
        #expect(original.hangStartUnixNs == 1_800_000_000_120_500_000)
    }

    @Test func aTornLastLineIsCountedNotFatal() throws {
        var data = try stream([event(.ended, id: 1, startMs: 10, durationMs: 150),
                               event(.inProgress, id: 2, startMs: 400, durationMs: 260)])
        let torn = try HangEventLines.encode(event(.ended, id: 2, startMs: 400, durationMs: 900))
        data.append(torn.prefix(torn.count / 2))
        let read = try HangEventLines.decode(data)
        #expect(read.events.count == 2)
        #expect(read.unreadableLines == 1)
        let report = Report(events: read)
        #expect(report.hangs.count == 2)
        #expect(report.hangs.last?.inProgress == true, "the torn ended line is lost; the in-progress one stands")
        #expect(report.notes.contains { $0.contains("1 line was not a readable event") })
        #expect(report.notes.contains { $0.contains("still in progress") })
    }

    @Test func theReportKeepsEachHangOnceAsItsLastEventToldIt() throws {
        let data = try stream([event(.inProgress, id: 1, startMs: 100, durationMs: 250),
                               event(.ended, id: 1, startMs: 100, durationMs: 420),
                               event(.ended, id: 2, startMs: 900, durationMs: 150),
                               // a late in-progress line never undoes an ended one
                               event(.inProgress, id: 1, startMs: 100, durationMs: 300)])
        let report = Report(events: try HangEventLines.decode(data))
        #expect(report.hangs.map(\.durationMs) == [420, 150])
        #expect(report.hangs.map(\.id) == [1, 2])
        #expect(report.hangs.allSatisfy { !$0.inProgress })
        #expect(report.summary.hangCount == 2)
        #expect(report.summary.longestHangMs == 420)
        #expect(report.process.startTimeUnixNs == 1_800_000_000_000_000_000)
        #expect(report.process.wallMs == 1050)
    }

    @Test func streamsThatAreNotEventsAreRefused() throws {
        #expect(throws: ReportFileError.self) { try HangEventLines.decode(Data("{\"schema\":\"other\"}\n".utf8)) }
        #expect(throws: ReportFileError.self) { try HangEventLines.decode(Data("\n\n".utf8)) }
        #expect(!HangEventLines.looksLikeEvents(Data("{\"schemaVersion\":2}".utf8)))
        var future = String(decoding: try HangEventLines.encode(event(.ended, id: 1, startMs: 1, durationMs: 200)),
                            as: UTF8.self)
        future = future.replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":9")
        #expect(throws: ReportFileError.self) { try HangEventLines.decode(Data(future.utf8)) }
    }

    /// A rotated file's closing line reads back whole, and a file holding only
    /// a summary (an interval without hangs) still reads as a report.
    @Test func anIntervalSummaryReadsBackAndAloneMakesAReport() throws {
        let process = event(.ended, id: 1, startMs: 0, durationMs: 100).process
        let frames = FrameStats(name: "render", deadlineMs: 16.7, frameCount: 3600, hitchCount: 12, missedFrames: 15,
                                hitchMs: 240, hitchRatioMsPerS: 4, band: "good", p50Ms: 8, p95Ms: 14, p99Ms: 30,
                                maxMs: 90, histogram: [])
        let interval = IntervalSummary(startUnixNs: 1_800_000_000_000_000_000, endUnixNs: 1_800_000_060_000_000_000,
                                       closedBy: .interval, process: process, thresholds: Thresholds(),
                                       summary: Summary(hangCount: 3, reportedHangCount: 1, totalHangMs: 720,
                                                        longestHangMs: 400),
                                       frameLoops: [frames])
        #expect(interval.seconds == 60)
        #expect(abs(interval.hangRateSecondsPerHour - 43.2) < 1e-9, "0.72 s in a minute is 43.2 s/hour")
        let line = try HangEventLines.encode(interval)
        #expect(line.last == 0x0A && !line.dropLast().contains(0x0A))
        let alone = try HangEventLines.decode(line)
        #expect(alone.summaries == [interval])
        #expect(alone.events.isEmpty)
        let report = Report(events: alone)
        #expect(report.hangs.isEmpty)
        #expect(report.process.pid == process.pid)
        #expect(report.notes.contains { $0.contains("3 hangs, 720.0 ms in all, 43.2 s/hour") && $0.contains("render: 3600 frames, 12 hitches") },
                "\(report.notes)")
        // Beside hang lines, in any order, it is read too.
        let mixed = try stream([event(.ended, id: 1, startMs: 10, durationMs: 200)]) + line
        let both = try HangEventLines.decode(mixed)
        #expect(both.events.count == 1 && both.summaries.count == 1 && both.unreadableLines == 0)
    }

    /// A file a rotation closed while a hang went on: the hang is in its report,
    /// in progress, and the note says the next file holds its end (not that
    /// the program was killed).
    @Test func aHangRunningWhenItsFileClosedIsNotCalledKilled() throws {
        let running = event(.inProgress, id: 2, startMs: 500, durationMs: 260)
        let closed = IntervalSummary(startUnixNs: 1_800_000_000_000_000_000, endUnixNs: 1_800_000_000_800_000_000,
                                     closedBy: .size, process: running.process, thresholds: Thresholds(),
                                     summary: Summary(hangCount: 1, reportedHangCount: 0, totalHangMs: 150,
                                                      longestHangMs: 150),
                                     frameLoops: [])
        let data = try stream([event(.ended, id: 1, startMs: 10, durationMs: 150), running])
            + HangEventLines.encode(closed)
        let report = Report(events: try HangEventLines.decode(data))
        #expect(report.hangs.filter { !$0.inProgress }.count == closed.summary.hangCount)
        #expect(report.hangs.filter(\.inProgress).count == 1)
        #expect(report.notes.contains { $0.contains("1 hang was still in progress when this file was closed by size") },
                "\(report.notes)")
        #expect(!report.notes.contains { $0.contains("killed") })
    }
}
