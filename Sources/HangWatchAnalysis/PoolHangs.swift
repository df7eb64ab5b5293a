import HangWatchCapture
import HangWatchModel

/// Hangs of Swift Concurrency's whole cooperative pool, derived from its job
/// hangs (docs/COOPERATIVE-POOL.md).
///
/// The rule: a pool queue is busy while every one of its threads is inside a
/// job (running it, or blocked in it); the agent cannot see every job waiting
/// for a thread without paying on every enqueue, so "work is waiting" is not
/// required. It sees the ones enqueued once the watchdog found the queue full
/// (`poolJobWaitMs`, a lower bound of the oldest waiting job's wait). Such a spell lies inside each of those threads' current jobs, so
/// a spell of `--hang-ms` or more means each of them is itself a job hang,
/// already logged with its samples: the spell is where `width` or more job
/// hangs of one queue overlap, from the latest start to the earliest end.
package struct PoolHangs {
    /// A job hang and the busy period it was built from.
    struct Job {
        var hang: Hang
        var period: BusyPeriod
        var endNs: UInt64
    }

    /// One spell: when it began and ended, and the jobs that filled it.
    package struct Spell: Equatable {
        package var startNs: UInt64
        package var endNs: UInt64
        package var jobs: [Int] // indices into the intervals given
        package init(startNs: UInt64, endNs: UInt64, jobs: [Int]) {
            self.startNs = startNs
            self.endNs = endNs
            self.jobs = jobs
        }
    }

    /// The spells of at least `minimumNs` during which `width` or more of
    /// `intervals` overlap. An interval ending where another begins frees its
    /// thread first: the pool was not full at that instant.
    package static func spells(of intervals: [(start: UInt64, end: UInt64)], width: Int, minimumNs: UInt64) -> [Spell] {
        guard width > 0 else { return [] }
        var events: [(time: UInt64, delta: Int)] = []
        for interval in intervals where interval.end > interval.start {
            events.append((interval.start, 1))
            events.append((interval.end, -1))
        }
        events.sort { ($0.time, $0.delta) < ($1.time, $1.delta) }
        var spells: [Spell] = []
        var running = 0
        var startedAt: UInt64?
        for event in events {
            running += event.delta
            if running >= width, startedAt == nil { startedAt = event.time }
            if running < width, let start = startedAt {
                startedAt = nil
                guard event.time - start >= minimumNs else { continue }
                let members = intervals.indices.filter { intervals[$0].start < event.time && intervals[$0].end > start }
                spells.append(Spell(startNs: start, endNs: event.time, jobs: members))
            }
        }
        return spells
    }

    var config: CaptureConfig
    var msPerSample: Double

    /// The pool hangs of `jobs` (ids left 0: the caller numbers every hang).
    func hangs(jobs: [Job], run: CapturedRun, stacks: StackResolver, processStartNs: UInt64) -> [Hang] {
        keyedHangs(jobs: jobs, run: run, stacks: stacks, processStartNs: processStartNs).map(\.hang)
    }

    /// A pool hang's identity while a capture is read: its queue and start.
    struct SpellKey: Hashable {
        var queue: UInt32
        var startNs: UInt64
    }

    /// The same, each with its key; with `endingBefore`, only the spells that
    /// ended before it (a later end may still move: a job is still running).
    func keyedHangs(jobs: [Job], run: CapturedRun, stacks: StackResolver, processStartNs: UInt64,
                    endingBefore: UInt64? = nil) -> [(key: SpellKey, hang: Hang)] {
        var found: [(key: SpellKey, hang: Hang)] = []
        for (queue, width) in run.poolWidths.sorted(by: { $0.key < $1.key }) {
            let ofQueue = jobs.filter { $0.period.poolQueue == queue }
            let intervals = ofQueue.map { (start: $0.period.startNs, end: $0.endNs) }
            let minimumNs = UInt64(config.hangMs * 1e6)
            for spell in Self.spells(of: intervals, width: width, minimumNs: minimumNs) {
                if let limit = endingBefore, spell.endNs >= limit { continue }
                found.append((SpellKey(queue: queue, startNs: spell.startNs),
                              hang(of: spell, queue: queue, jobs: spell.jobs.map { ofQueue[$0] }, width: width,
                                   run: run, stacks: stacks, processStartNs: processStartNs)))
            }
        }
        return found
    }

    /// A thread's share of its job's wall time on a CPU or waiting for one (as
    /// a hang's kind counts it): its clocks where read, else its kind.
    static func cpuShare(_ hang: Hang) -> Double? {
        if let cpu = hang.cpuMs, hang.durationMs > 0 { return min(1, (cpu + (hang.runnableMs ?? 0)) / hang.durationMs) }
        switch hang.kind {
        case .cpu: return 1
        case .blocked: return 0
        case .mixed: return 0.5
        case .unknown: return nil
        }
    }

    /// How far a heartbeat stamp may be from CLOCK_MONOTONIC either way (the
    /// engine's HW_STAMP_MAX_ERROR_NS): the bound below allows for it.
    static let stampErrorNs: UInt64 = 20_000

    /// How long a job enqueued during `spell` on `queue` waited for a thread,
    /// at least: from the first one the agent noted (enqueued after the
    /// watchdog saw every thread in a long job) to the spell's end, before
    /// which no thread of the queue was free. A note counts only when the
    /// spell had begun by the stamp taken before its enqueue, and it is
    /// measured from the stamp taken after, less the stamps' error. Nil when
    /// none was noted.
    package static func jobWaitMs(in spell: Spell, queue: UInt32, waiting: [CapturedWaitingJob]) -> Double? {
        let first = waiting.lazy
            .filter { $0.poolQueue == queue && $0.enqueuedFromNs >= spell.startNs + stampErrorNs }
            .map { $0.enqueuedByNs + stampErrorNs }
            .filter { $0 < spell.endNs }
            .min()
        return first.map { ReportBuilder.spanMs(from: $0, to: spell.endNs) }
    }

    private func hang(of spell: Spell, queue: UInt32, jobs: [Job], width: Int, run: CapturedRun,
                      stacks: StackResolver, processStartNs: UInt64) -> Hang {
        let durationMs = ReportBuilder.spanMs(from: spell.startNs, to: spell.endNs)
        let reported = durationMs >= config.reportMs
        let shares = jobs.compactMap { Self.cpuShare($0.hang) }
        let kind: HangKind
        if shares.isEmpty {
            kind = .unknown
        } else {
            let mean = shares.reduce(0, +) / Double(shares.count)
            kind = mean >= HangStateAnalysis.cpuShare ? .cpu : mean <= HangStateAnalysis.blockedShare ? .blocked : .mixed
        }
        let threads = jobs.map { job -> PoolThread in
            let running = (Self.cpuShare(job.hang) ?? 0) >= 0.5
            return PoolThread(tid: job.hang.thread.tid, name: job.hang.thread.name,
                              state: running ? "running" : "blocked",
                              blockedIn: running ? nil : job.hang.blockedIn, jobHangId: job.hang.id,
                              cpuMs: job.hang.cpuMs, callTree: reported ? job.hang.callTree : nil)
        }
        let blockedCalls = threads.compactMap(\.blockedIn)
        let blockedIn = kind == .cpu ? nil
            : Dictionary(grouping: blockedCalls, by: { $0 }).max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key
        let samples = jobs.flatMap { job in
            run.samples[BusyKey(tid: job.period.tid, seq: job.period.seq, generation: job.period.generation)] ?? []
        }
        let tree = reported ? CallTreeBuilder.build(samples.map(stacks.resolve), msPerSample: msPerSample,
                                                    tracksWaiting: true) : nil
        let coverage = jobs.isEmpty ? 0 : jobs.map(\.hang.sampleCoverage).reduce(0, +) / Double(jobs.count)
        let inProgress = jobs.contains { $0.period.endNs == nil && $0.endNs == spell.endNs }
        return Hang(
            id: 0,
            thread: ThreadRef(tid: 0, name: "cooperative pool (\(width) threads)", role: Hang.cooperativePoolRole),
            startMs: Double(Int64(bitPattern: spell.startNs) - Int64(bitPattern: processStartNs)) / 1e6,
            durationMs: durationMs, reported: reported, inProgress: inProgress, kind: kind, blockedIn: blockedIn,
            sampleCount: jobs.reduce(0) { $0 + $1.hang.sampleCount }, sampleCoverage: coverage,
            callTree: tree, blockedSymbol: nil, poolThreads: threads,
            poolJobWaitMs: Self.jobWaitMs(in: spell, queue: queue, waiting: run.poolJobsWaiting))
    }
}
