import HangWatchCapture
import HangWatchModel
import HangWatchSymbols

/// Turns a capture that is still being read into hang events as they happen:
/// an in-progress event once a running hang reaches the report threshold, and
/// an ended event once it is over. Hangs are built by the same code as the
/// report (`ReportBuilder.hang(of:)`), so an event says what the report will.
///
/// Single-threaded, like the collector it reads: call `events(from:nowNs:)`
/// after each drain, on the reader's thread.
package final class LiveHangs {
    /// An ended hang is told this long after its end, so the samples the
    /// watchdog logs for its last ticks (a tick or two after the heartbeat
    /// logged the end) are in it, as they are in the report.
    package static let settleNs: UInt64 = 50_000_000

    private let builder: ReportBuilder
    private let process: ProcessInfoRecord
    private let processStartNs: UInt64
    private let symbolicator = Symbolicator()
    private var modulesAdded = 0
    /// Hangs not yet told as ended, with the id each was given.
    private var open: [BusyKey: Int] = [:]
    private var toldInProgress: Set<BusyKey> = []
    private var nextId = 1

    /// `process` names the watched program (its `startTimeUnixNs` dates the
    /// events); `processStartNs` is its start on the monotonic clock.
    package init(config: CaptureConfig, process: ProcessInfoRecord, processStartNs: UInt64) {
        builder = ReportBuilder(config: config)
        self.process = process
        self.processStartNs = processStartNs
    }

    /// The events due now, oldest hang first. Turns on the collector's
    /// update list on first use.
    package func events(from collector: CaptureCollector, nowNs: UInt64) -> [HangEvent] {
        collector.tracksUpdates = true
        let run = collector.run
        for key in collector.takeUpdatedPeriods() where open[key] == nil {
            guard let period = run.busyPeriods[key], !period.isLaunch else { continue }
            open[key] = 0 // numbered when first told, so ids follow the order of events
        }
        guard !open.isEmpty else { return [] }
        while modulesAdded < run.modules.count {
            symbolicator.addModule(run.modules[modulesAdded])
            modulesAdded += 1
        }
        let stacks = StackResolver(run: run, symbolicator: symbolicator)
        let due = open.keys.compactMap { key -> (BusyKey, BusyPeriod)? in
            guard let period = run.busyPeriods[key] else { return nil }
            return (key, period)
        }.sorted { ($0.1.startNs, $0.1.tid) < ($1.1.startNs, $1.1.tid) }

        var events: [HangEvent] = []
        for (key, period) in due {
            if let end = period.endNs {
                guard nowNs >= end &+ Self.settleNs else { continue }
                if let hang = hang(key, period, nowNs: nowNs, run: run, stacks: stacks) {
                    events.append(event(.ended, hang))
                }
                open[key] = nil
                toldInProgress.remove(key)
            } else if !toldInProgress.contains(key),
                      Double(nowNs &- period.startNs) / 1e6 >= builder.config.reportMs,
                      let hang = hang(key, period, nowNs: nowNs, run: run, stacks: stacks) {
                events.append(event(.inProgress, hang))
                toldInProgress.insert(key)
            }
        }
        return events
    }

    /// The last events, when the program has ended at `endNs`: every ended
    /// hang not told yet, and each hang still open, told in progress with its
    /// length up to the end (the program died inside it).
    package func finalEvents(from collector: CaptureCollector, endNs: UInt64) -> [HangEvent] {
        var events = self.events(from: collector, nowNs: UInt64.max / 2)
        let run = collector.run
        let stacks = StackResolver(run: run, symbolicator: symbolicator)
        let stillOpen = open.keys.compactMap { key in run.busyPeriods[key].map { (key, $0) } }
            .sorted { ($0.1.startNs, $0.1.tid) < ($1.1.startNs, $1.1.tid) }
        for (key, period) in stillOpen {
            if let hang = hang(key, period, nowNs: max(endNs, period.startNs), run: run, stacks: stacks) {
                events.append(event(.inProgress, hang))
            }
            open[key] = nil
        }
        return events
    }

    private func hang(_ key: BusyKey, _ period: BusyPeriod, nowNs: UInt64, run: CapturedRun,
                      stacks: StackResolver) -> Hang? {
        let id = open[key].flatMap { $0 == 0 ? nil : $0 } ?? nextId
        guard let hang = builder.hang(of: period, id: id, endNs: nowNs, run: run, stacks: stacks,
                                      processStartNs: processStartNs) else { return nil }
        if id == nextId { nextId += 1 }
        open[key] = id
        return hang
    }

    private func event(_ phase: HangEvent.Phase, _ hang: Hang) -> HangEvent {
        var process = process
        process.wallMs = hang.startMs + hang.durationMs
        return HangEvent(phase: phase, timeUnixNs: SystemClock.unixNs(), process: process,
                         thresholds: Thresholds(hangMs: builder.config.hangMs, reportMs: builder.config.reportMs,
                                                sampleHz: builder.config.sampleHz, frameMs: builder.config.frameMs),
                         hang: hang)
    }
}
