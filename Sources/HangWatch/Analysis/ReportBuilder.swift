import CHangWatchEngine

/// Facts about the profiled process that the sample log does not hold.
public struct ProcessFacts: Sendable {
    public var pid: Int
    public var executable: String
    public var arguments: [String]
    public var exitCode: Int?
    public var signal: Int?
    /// CLOCK_MONOTONIC ns at process start (just before exec).
    public var startNs: UInt64
    /// CLOCK_MONOTONIC ns when the process was seen to end.
    public var endNs: UInt64
    public init(pid: Int, executable: String, arguments: [String], exitCode: Int?, signal: Int?,
                startNs: UInt64, endNs: UInt64) {
        self.pid = pid
        self.executable = executable
        self.arguments = arguments
        self.exitCode = exitCode
        self.signal = signal
        self.startNs = startNs
        self.endNs = endNs
    }
}

/// Builds the report: durations from the heartbeat's own timestamps, evidence
/// from the samples, names from the symbolicator, trees from the builder.
public struct ReportBuilder {
    public var config: CaptureConfig
    /// Looks up function sources when `config.sourceLines` is set; when nil,
    /// one using the llvm-symbolizer found in PATH is made for the report.
    public var sourceLines: SourceLineResolver?
    public init(config: CaptureConfig, sourceLines: SourceLineResolver? = nil) {
        self.config = config
        self.sourceLines = sourceLines
    }

    public func build(run: CapturedRun, process: ProcessFacts, extraNotes: [String] = []) -> Report {
        let symbolicator = Symbolicator()
        for module in run.modules { symbolicator.addModule(module) }
        var stacks = StackResolver(run: run, symbolicator: symbolicator)
        let endNs = run.exitTimeNs ?? process.endNs
        let msPerSample = 1000 / config.sampleHz

        let periods = run.busyPeriods.values.sorted { ($0.startNs, $0.tid) < ($1.startNs, $1.tid) }
        func periodEnd(_ period: BusyPeriod) -> UInt64 { period.endNs ?? max(endNs, period.startNs) }
        func periodMs(_ period: BusyPeriod) -> Double { Double(periodEnd(period) - period.startNs) / 1e6 }
        func periodSamples(_ period: BusyPeriod) -> [CapturedSample] {
            run.samples[BusyKey(tid: period.tid, seq: period.seq)] ?? []
        }

        var sourceNotes: [String] = []
        if config.sourceLines {
            // Only trees that are shown get sources, and all of them in one
            // symbolizer run: collect every function first, then build stacks.
            let resolver = sourceLines ?? SourceLineResolver()
            let shown = periods.filter { periodMs($0) >= config.reportMs }.flatMap(periodSamples)
            stacks.sources = resolver.sources(for: stacks.functionStarts(in: shown))
            sourceNotes = resolver.notes
        }

        var hangs: [Hang] = []
        var launch: Launch?
        for period in periods {
            let samples = periodSamples(period)
            let end = periodEnd(period)
            let durationMs = periodMs(period)
            let wantsTree = durationMs >= config.reportMs
            let tree = wantsTree ? CallTreeBuilder.build(samples.map(stacks.resolve), msPerSample: msPerSample) : nil
            let weight = samples.reduce(0) { $0 + $1.weight }
            if period.isLaunch {
                // Launch counts from process start, not from when the engine came up.
                let launchMs = Double(end &- min(process.startNs, period.startNs)) / 1e6
                launch = Launch(durationMs: launchMs, reachedFirstWait: period.endNs != nil,
                                sampleCount: weight, callTree: tree)
                continue
            }
            guard durationMs >= config.hangMs else { continue }
            let blocked = BlockedProfile(samples: samples)
            let thread = run.threads[period.osTid]
            let role = period.tid == HW_MAIN_QUEUE_ID ? UInt32(HW_ROLE_MAIN_QUEUE) : (thread?.role ?? 0)
            hangs.append(Hang(
                id: hangs.count + 1,
                thread: ThreadRef(tid: Int(period.osTid), name: thread?.name ?? "", role: Self.roleName(role)),
                startMs: Double(Int64(period.startNs) - Int64(process.startNs)) / 1e6,
                durationMs: durationMs,
                reported: wantsTree,
                inProgress: period.endNs == nil,
                kind: blocked.kind,
                blockedIn: blocked.mainCall,
                sampleCount: weight,
                sampleCoverage: min(1, Double(weight) * msPerSample / max(durationMs, 1e-9)),
                callTree: tree))
        }
        let frameLoops = frameStats(run: run)
        let notes = extraNotes + symbolicator.notes + sourceNotes + Self.describe(run: run)
        return Report(
            process: ProcessInfoRecord(pid: process.pid, executable: process.executable,
                                       arguments: process.arguments, exitCode: process.exitCode,
                                       signal: process.signal,
                                       wallMs: Double(process.endNs &- process.startNs) / 1e6),
            thresholds: Thresholds(hangMs: config.hangMs, reportMs: config.reportMs,
                                   sampleHz: config.sampleHz, frameMs: config.frameMs),
            summary: Summary(hangs: hangs),
            hangs: hangs,
            frames: frameLoops.first,
            frameLoops: frameLoops,
            launch: launch,
            notes: notes)
    }

    /// One FrameStats per loop that logged frames, main thread first.
    func frameStats(run: CapturedRun) -> [FrameStats] {
        guard let deadline = config.frameMs else { return [] }
        return run.frames.keys.sorted { (abs($0), $0) < (abs($1), $1) }.compactMap { id in
            guard let frames = run.frames[id], let first = frames.first, let last = frames.last else { return nil }
            let intervalMs = Double(last.startNs + last.durationNs - first.startNs) / 1e6
            let name = run.threads[id]?.name ?? "thread \(id)"
            return FrameStatistics.compute(name: name, deadlineMs: deadline,
                                           durationsMs: frames.map { Double($0.durationNs) / 1e6 },
                                           intervalMs: intervalMs)
        }
    }

    static func roleName(_ role: UInt32) -> String {
        switch role {
        case 1: return "main-queue"
        case 2: return "loop"
        default: return "main-thread"
        }
    }

    /// Notes about the evidence itself: what the engine could not sample.
    static func describe(run: CapturedRun) -> [String] {
        var notes: [String] = []
        var seen = Set<String>()
        for note in run.notes {
            let text: String
            switch note.code {
            case 1: text = "thread \(note.tid) blocks SIGPROF: its CPU samples are missing, only blocked waits were sampled"
            case 2: text = "the program installed its own SIGPROF handler; hangwatch chains to it"
            case 3: text = "thread \(note.tid): sampling signals went unanswered (\(note.value) in one hang)"
            default: continue
            }
            if seen.insert(text).inserted { notes.append(text) }
        }
        if run.droppedRecords > 0 {
            notes.append("\(run.droppedRecords) records were dropped because the sample log was full")
        }
        return notes
    }
}

/// How much of a hang was spent blocked, and in which call mostly.
struct BlockedProfile {
    let kind: HangKind
    let mainCall: String?

    init(samples: [CapturedSample]) {
        var blockedWeight = 0, total = 0
        var byCall: [String: Int] = [:]
        for s in samples {
            total += s.weight
            if s.source != .signal {
                blockedWeight += s.weight
                byCall[CallNames.name(of: s.call), default: 0] += s.weight
            }
        }
        let fraction = total == 0 ? 0 : Double(blockedWeight) / Double(total)
        kind = fraction >= 0.9 ? .blocked : (fraction <= 0.1 ? .cpu : .mixed)
        mainCall = kind == .cpu ? nil : byCall.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
