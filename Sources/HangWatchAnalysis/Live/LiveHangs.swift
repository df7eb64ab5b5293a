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
    /// watchdog logs for its last ticks (it logs a tick or more after the
    /// heartbeat logged the end, and its stride grows to 16 sample periods in
    /// a long hang) are in it, as they are in the report: 32 sample periods,
    /// at least 50 ms.
    package let settleNs: UInt64

    private let builder: ReportBuilder
    /// The watched program, as the events name it.
    package let process: ProcessInfoRecord
    private let processStartNs: UInt64
    private let symbolicator = Symbolicator()
    private var modulesAdded = 0
    /// Hangs not yet told as ended, with the id each was given (0: not told yet).
    private var open: [BusyKey: Int] = [:]
    private var toldInProgress: Set<BusyKey> = []
    /// Per thread slot and image, the latest busy period told as ended: a record
    /// of an older one drained late never makes a second ended event. Bounded
    /// by the number of threads, not by uptime.
    private var endedUpTo: [SlotKey: UInt64] = [:]
    private var nextId = 1
    /// With `remembersClosed` (a rotating stream, which later drops what it
    /// wrote out): the keys of the ended events made so far, in the order made,
    /// and the keys of periods that closed without an event (shorter than the
    /// hang threshold, or ended by their thread's exit).
    package var remembersClosed = false
    private var endedKeys: [BusyKey] = []
    private var closedSilently: [BusyKey] = []
    /// Job hangs told as ended lately, for the pool hangs they make (the
    /// latest `recentJobsKept`), and the pool hangs told so far (bounded too).
    private var recentJobs: [PoolHangs.Job] = []
    private var toldSpells: [PoolHangs.SpellKey] = []
    private static let recentJobsKept = 256

    private struct SlotKey: Hashable {
        var tid: Int32
        var generation: UInt32
    }

    /// `process` names the watched program (its `startTimeUnixNs` dates the
    /// events); `processStartNs` is its start on the monotonic clock. Turns on
    /// `collector`'s list of updated busy periods, which this reads.
    package init(config: CaptureConfig, process: ProcessInfoRecord, processStartNs: UInt64,
                 collector: CaptureCollector) {
        builder = ReportBuilder(config: config)
        self.process = process
        self.processStartNs = processStartNs
        settleNs = max(50_000_000, UInt64(32 * 1e9 / config.sampleHz))
        collector.tracksUpdates = true
    }

    /// Whether a hang is still to be told as ended (it runs, or has not
    /// settled): its reader must keep draining at its usual interval.
    package var hasUntoldHangs: Bool { !open.isEmpty }

    /// The events due now, oldest hang first.
    package func events(from collector: CaptureCollector, nowNs: UInt64) -> [HangEvent] {
        events(from: collector, nowNs: nowNs, final: false)
    }

    /// With `final`, every ended hang is told without waiting to settle (the
    /// log has been read to its end) and nothing is told in progress here.
    private func events(from collector: CaptureCollector, nowNs: UInt64, final: Bool) -> [HangEvent] {
        let run = collector.run
        for key in collector.takeUpdatedPeriods() where open[key] == nil {
            guard let period = run.busyPeriods[key], !period.isLaunch else { continue }
            let slot = SlotKey(tid: key.tid, generation: key.generation)
            if let told = endedUpTo[slot], key.seq <= told { continue }
            open[key] = 0 // numbered when first told, so ids follow the order of events
        }
        guard !open.isEmpty else { return [] }
        while modulesAdded < run.modules.count {
            symbolicator.addModule(run.modules[modulesAdded])
            modulesAdded += 1
        }
        let stacks = StackResolver(run: run, symbolicator: symbolicator)
        let due = openPeriods(in: run)

        var events: [HangEvent] = []
        for (key, period) in due {
            if let end = period.endNs {
                guard final || nowNs >= end &+ settleNs else { continue }
                if let hang = hang(key, period, nowNs: end, run: run, stacks: stacks) {
                    events.append(event(.ended, hang))
                    if hang.thread.role == Hang.jobRole {
                        recentJobs.append(PoolHangs.Job(hang: hang, period: period, endNs: end))
                        if recentJobs.count > Self.recentJobsKept { recentJobs.removeFirst() }
                    }
                    if remembersClosed { endedKeys.append(key) }
                } else if remembersClosed {
                    closedSilently.append(key)
                }
                open[key] = nil
                toldInProgress.remove(key)
                let slot = SlotKey(tid: key.tid, generation: key.generation)
                endedUpTo[slot] = max(endedUpTo[slot] ?? 0, key.seq)
            } else if !final, !toldInProgress.contains(key),
                      Double(nowNs &- period.startNs) / 1e6 >= builder.config.reportMs,
                      let hang = hang(key, period, nowNs: nowNs, run: run, stacks: stacks) {
                events.append(event(.inProgress, hang))
                toldInProgress.insert(key)
            }
        }
        return events + poolEvents(run: run, stacks: stacks, nowNs: nowNs, final: final)
    }

    /// Pool hangs whose every job has been told: ended events, after their jobs'.
    /// A spell ending before the earliest job still open (running, or not
    /// told yet) is final: that job began after it. Later ones wait.
    private func poolEvents(run: CapturedRun, stacks: StackResolver, nowNs: UInt64, final: Bool) -> [HangEvent] {
        guard !run.poolWidths.isEmpty, !recentJobs.isEmpty else { return [] }
        let firstOpen = openPeriods(in: run).filter { $0.1.poolQueue != 0 }.map(\.1.startNs).min()
        let limit = firstOpen.map { min($0, nowNs) } ?? (final ? nil : nowNs)
        let pool = PoolHangs(config: builder.config, msPerSample: 1000 / builder.config.sampleHz)
        var events: [HangEvent] = []
        for (key, hang) in pool.keyedHangs(jobs: recentJobs, run: run, stacks: stacks,
                                           processStartNs: processStartNs, endingBefore: limit)
        where !toldSpells.contains(key) {
            var numbered = hang
            numbered.id = nextId
            nextId += 1
            toldSpells.append(key)
            if toldSpells.count > Self.recentJobsKept { toldSpells.removeFirst() }
            events.append(event(.ended, numbered))
        }
        return events
    }

    /// The last events, when the program has ended at `endNs` (or, in the
    /// library, is exiting): every ended hang not told yet, and each hang
    /// still open, told in progress with its length up to `endNs`.
    package func finalEvents(from collector: CaptureCollector, endNs: UInt64) -> [HangEvent] {
        var events = self.events(from: collector, nowNs: endNs, final: true)
        let run = collector.run
        let stacks = StackResolver(run: run, symbolicator: symbolicator)
        for (key, period) in openPeriods(in: run) {
            if let hang = hang(key, period, nowNs: max(endNs, period.startNs), run: run, stacks: stacks) {
                events.append(event(.inProgress, hang))
            }
            open[key] = nil
        }
        return events
    }

    /// The keys of the first `endedEvents` ended events not taken yet, and
    /// of every period that closed without an event: all are over and written
    /// out, so the collector may forget them (see `remembersClosed`).
    package func takeClosed(endedEvents: Int) -> [BusyKey] {
        let n = min(endedEvents, endedKeys.count)
        defer {
            endedKeys.removeFirst(n)
            closedSilently.removeAll(keepingCapacity: true)
        }
        return Array(endedKeys.prefix(n)) + closedSilently
    }

    /// The thresholds in force, as events carry them.
    package var thresholds: Thresholds {
        Thresholds(hangMs: builder.config.hangMs, reportMs: builder.config.reportMs,
                   sampleHz: builder.config.sampleHz, frameMs: builder.config.frameMs)
    }

    /// Frame statistics of the frames the collector holds, per loop, as the report computes them.
    package func frameStats(of collector: CaptureCollector) -> [FrameStats] {
        builder.frameStats(run: collector.run)
    }

    /// The hangs not yet told as ended, oldest first.
    private func openPeriods(in run: CapturedRun) -> [(BusyKey, BusyPeriod)] {
        open.keys.compactMap { key in run.busyPeriods[key].map { (key, $0) } }
            .sorted { ($0.1.startNs, $0.1.tid) < ($1.1.startNs, $1.1.tid) }
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
        return HangEvent(phase: phase, timeUnixNs: SystemClock.unixNs(), process: process, thresholds: thresholds,
                         hang: hang)
    }
}
