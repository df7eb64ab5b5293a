// `hangwatch report FILE.jsonl` and `diff` read an event stream as a report.

extension Report {
    /// The report an event stream adds up to: each hang once, as its last
    /// event told it (the ended event when there is one, otherwise the latest
    /// in-progress one, which stays marked in progress). Hangs are renumbered
    /// in start order. The process's exit is unknown to a stream, and frame
    /// loops and launch are not streamed; notes say what the file could not
    /// tell.
    public init(events contents: HangEventLines.Contents) {
        let events = contents.events
        var latest: [HangKey: HangEvent] = [:]
        var order: [HangKey] = []
        for event in events {
            let key = HangKey(pid: event.process.pid, start: event.process.startTimeUnixNs, id: event.hang.id)
            if latest[key] == nil { order.append(key) }
            if let known = latest[key], known.phase == .ended, event.phase == .inProgress { continue }
            latest[key] = event
        }
        let kept = order.compactMap { latest[$0] }
        var hangs = kept.map(\.hang).sorted { ($0.startMs, $0.id) < ($1.startMs, $1.id) }
        for i in hangs.indices { hangs[i].id = i + 1 }

        // HangEventLines.decode throws before both events and summaries are empty.
        let intervals = contents.summaries
        var process = events.first?.process ?? intervals.first?.process
            ?? ProcessInfoRecord(pid: 0, executable: "", arguments: [], exitCode: nil, signal: nil, wallMs: 0)
        if let start = process.startTimeUnixNs,
           let last = (events.map(\.timeUnixNs) + intervals.map(\.endUnixNs)).max() {
            process.wallMs = Double(max(0, last - start)) / 1e6
        }
        var notes = ["rebuilt from \(events.count) hang events; the process's exit and launch are not in an event "
                     + "stream, frame loops only in its interval summaries (below), and its time ends at the last event"]
        notes += intervals.map(Self.describe)
        let stillRunning = hangs.filter(\.inProgress).count
        if stillRunning > 0 {
            let plural = stillRunning == 1 ? " was" : "s were"
            if let closed = intervals.last, closed.closedBy != .exit {
                // A file of a rotating stream closed by size or time: the hang
                // went on, and its end (and its count) is in the next file.
                notes.append("\(stillRunning) hang\(plural) still in progress when this file was closed by "
                             + "\(closed.closedBy.rawValue); the interval summary counts hangs that ended in it, "
                             + "and the next file holds the end")
            } else {
                notes.append("\(stillRunning) hang\(plural) still in progress at the last event (the program was "
                             + "killed, or the stream was read while it ran)")
            }
        }
        let processes = Set(kept.map { HangKey(pid: $0.process.pid, start: $0.process.startTimeUnixNs, id: 0) })
        if processes.count > 1 {
            notes.append("the stream holds hangs of \(processes.count) processes; their start times are each relative "
                         + "to their own process")
        }
        if contents.unreadableLines > 0 {
            notes.append("\(contents.unreadableLines) line\(contents.unreadableLines == 1 ? " was" : "s were") "
                         + "not a readable event and skipped (a torn last line after a crash, or damage)")
        }
        self.init(process: process, thresholds: events.first?.thresholds ?? intervals.first?.thresholds ?? Thresholds(),
                  summary: Summary(hangs: hangs),
                  hangs: hangs, frames: nil, frameLoops: [], launch: nil, notes: notes)
    }

    /// One line per file of a rotating stream: its interval and what it held.
    private static func describe(_ interval: IntervalSummary) -> String {
        let s = interval.summary
        var text = "interval of \(NumberFormat.fixed(interval.seconds, 1)) s (file closed by \(interval.closedBy.rawValue)): "
            + "\(s.hangCount) hang\(s.hangCount == 1 ? "" : "s"), \(NumberFormat.fixed(s.totalHangMs, 1)) ms in all, "
            + "\(NumberFormat.fixed(interval.hangRateSecondsPerHour, 1)) s/hour"
        for loop in interval.frameLoops {
            text += "; \(loop.name.isEmpty ? "frames" : loop.name): \(loop.frameCount) frames, "
                + "\(loop.hitchCount) hitches, hitch ratio \(NumberFormat.fixed(loop.hitchRatioMsPerS, 1)) ms/s"
        }
        return text
    }

    private struct HangKey: Hashable {
        var pid: Int
        var start: Int64?
        var id: Int
    }
}
