import Glibc
import HangWatchCapture
import HangWatchModel
import HangWatchSymbols

/// Facts about the profiled process that the sample log does not hold.
package struct ProcessFacts: Sendable {
    package var pid: Int
    package var executable: String
    package var arguments: [String]
    package var exitCode: Int?
    package var signal: Int?
    /// CLOCK_MONOTONIC ns at process start (just before exec).
    package var startNs: UInt64
    /// CLOCK_MONOTONIC ns when the process was seen to end.
    package var endNs: UInt64
    /// `startNs` on the wall clock (ns since the Unix epoch), when known.
    package var startUnixNs: Int64?
    package init(pid: Int, executable: String, arguments: [String], exitCode: Int?, signal: Int?,
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
package struct ReportBuilder {
    package var config: CaptureConfig
    /// Looks up function sources when `config.sourceLines` is set; when nil,
    /// one using the llvm-symbolizer found in PATH is made for the report.
    package var sourceLines: SourceLineResolver?
    package init(config: CaptureConfig, sourceLines: SourceLineResolver? = nil) {
        self.config = config
        self.sourceLines = sourceLines
    }

    package func build(run: CapturedRun, process: ProcessFacts, extraNotes: [String] = []) -> Report {
        let symbolicator = Symbolicator()
        for module in run.modules { symbolicator.addModule(module) }
        var stacks = StackResolver(run: run, symbolicator: symbolicator)
        stacks.prepareSymbols()
        let endNs = run.exitTimeNs ?? process.endNs
        let msPerSample = 1000 / config.sampleHz

        let periods = run.busyPeriods.values.sorted { ($0.startNs, $0.tid) < ($1.startNs, $1.tid) }
        func periodEnd(_ period: BusyPeriod) -> UInt64 { period.endNs ?? max(endNs, period.startNs) }
        func periodMs(_ period: BusyPeriod) -> Double { Self.spanMs(from: period.startNs, to: periodEnd(period)) }
        func periodSamples(_ period: BusyPeriod) -> [CapturedSample] {
            run.samples[BusyKey(tid: period.tid, seq: period.seq, generation: period.generation)] ?? []
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
        var jobs: [PoolHangs.Job] = []
        var launch: Launch?
        for period in periods where !period.endedByThreadExit {
            let samples = periodSamples(period)
            let end = periodEnd(period)
            if period.isLaunch {
                launch = self.launch(of: period, samples: samples, end: end, run: run, stacks: stacks,
                                     processStartNs: process.startNs)
                continue
            }
            if let hang = hang(of: period, id: hangs.count + 1, endNs: end, run: run, stacks: stacks,
                               processStartNs: process.startNs) {
                hangs.append(hang)
                if hang.thread.role == Hang.jobRole { jobs.append(PoolHangs.Job(hang: hang, period: period, endNs: end)) }
            }
        }
        let pool = PoolHangs(config: config, msPerSample: msPerSample)
        hangs = Self.numbered(hangs + pool.hangs(jobs: jobs, run: run, stacks: stacks, processStartNs: process.startNs))
        let frameLoops = frameStats(run: run)
        let notes = extraNotes + symbolicator.notes + sourceNotes + Self.describe(run: run)
        return Report(
            process: ProcessInfoRecord(pid: process.pid, executable: process.executable,
                                       arguments: process.arguments, exitCode: process.exitCode,
                                       signal: process.signal,
                                       wallMs: Double(process.endNs &- process.startNs) / 1e6,
                                       startTimeUnixNs: process.startUnixNs),
            thresholds: Thresholds(hangMs: config.hangMs, reportMs: config.reportMs,
                                   sampleHz: config.sampleHz, frameMs: config.frameMs),
            summary: Summary(hangs: hangs),
            hangs: hangs,
            frames: frameLoops.first,
            frameLoops: frameLoops,
            launch: launch,
            notes: notes)
    }

    /// The launch: from process start to the watched thread's first loop wait,
    /// or, when it parked outside any loop and was still parked when the log
    /// ended (a server's main thread waiting for its loops to close), to the
    /// park. The park's own samples (the watchdog sampled it for the hang
    /// threshold before calling it parked) name where it parked and stay out
    /// of the tree; its latest sample is the park's stack.
    func launch(of period: BusyPeriod, samples: [CapturedSample], end: UInt64, run: CapturedRun,
                stacks: StackResolver, processStartNs: UInt64) -> Launch {
        let msPerSample = 1000 / config.sampleHz
        let park = period.endNs == nil
            ? run.launchParks.last { $0.osTid == period.osTid && $0.endNs == nil && $0.startNs >= period.startNs }
            : nil
        var kept = samples
        var parked: LaunchPark?
        var launchEnd = end
        if let park {
            launchEnd = max(park.startNs, period.startNs)
            let last = samples.indices.max { samples[$0].timeNs < samples[$1].timeNs }
            let parkSample = last.flatMap { samples[$0].timeNs >= park.startNs ? samples[$0] : nil }
            if let last, parkSample != nil { kept.remove(at: last) }
            parked = LaunchPark(atMs: Double(Int64(launchEnd) - Int64(processStartNs)) / 1e6,
                                blockedIn: parkSample.map { $0.call.name },
                                calledFrom: parkSample.flatMap { HangStateAnalysis.callingFrame(stacks.resolve($0)) })
        }
        // Launch counts from process start, not from when the engine came up.
        let launchMs = Double(launchEnd &- min(processStartNs, period.startNs)) / 1e6
        let tree = launchMs >= config.reportMs
            ? CallTreeBuilder.build(kept.map(stacks.resolve), msPerSample: msPerSample, tracksWaiting: true)
            : nil
        return Launch(durationMs: launchMs, reachedFirstWait: period.endNs != nil,
                      sampleCount: kept.reduce(0) { $0 + $1.weight }, callTree: tree, parked: parked)
    }

    /// The hang a busy period makes, or nil when it is shorter than the hang
    /// threshold, is the launch, or ended because its thread exited. A period
    /// still open is measured up to `endNs` and marked in progress. Shared by
    /// the report and the live event stream, so both say the same thing.
    func hang(of period: BusyPeriod, id: Int, endNs: UInt64, run: CapturedRun, stacks: StackResolver,
              processStartNs: UInt64) -> Hang? {
        guard !period.isLaunch, !period.endedByThreadExit else { return nil }
        let end = period.endNs ?? max(endNs, period.startNs)
        let durationMs = Self.spanMs(from: period.startNs, to: end)
        guard durationMs >= config.hangMs else { return nil }
        let msPerSample = 1000 / config.sampleHz
        let key = BusyKey(tid: period.tid, seq: period.seq, generation: period.generation)
        let samples = run.samples[key] ?? []
        let wantsTree = durationMs >= config.reportMs
        let tree = wantsTree ? CallTreeBuilder.build(samples.map(stacks.resolve), msPerSample: msPerSample,
                                                     tracksWaiting: true) : nil
        let weight = samples.reduce(0) { $0 + $1.weight }
        let states = HangStateAnalysis(key: key, durationMs: durationMs, samples: samples, run: run, stacks: stacks,
                                       msPerSample: msPerSample, wantsTree: wantsTree)
        let causes = HangCauseAnalysis(key: key, period: period, endNs: end, durationMs: durationMs,
                                       inProgress: period.endNs == nil, states: states, run: run, stacks: stacks,
                                       msPerSample: msPerSample, wantsTree: wantsTree)
        let thread = run.threads[period.osTid]
        let role = period.isMainQueue ? ThreadRole.mainQueue : (thread?.role ?? .mainThread)
        return Hang(
            id: id,
            thread: ThreadRef(tid: Int(period.osTid), name: thread?.name ?? "", role: role.reportName),
            startMs: Double(Int64(period.startNs) - Int64(processStartNs)) / 1e6,
            durationMs: durationMs,
            reported: wantsTree,
            inProgress: period.endNs == nil,
            kind: states.kind,
            blockedIn: states.blockedIn,
            sampleCount: weight,
            sampleCoverage: min(1, Double(weight) * msPerSample / max(durationMs, 1e-9)),
            callTree: tree,
            cpuMs: states.cpuMs, runnableMs: states.runnableMs, blockedSymbol: states.blockedSymbol,
            lockOwner: states.lockOwner, runningThreads: states.runningThreads,
            cause: causes.cause, stoppedMs: causes.stoppedMs, throttle: causes.throttle)
    }

    /// `hangs` in start order (a pool hang before the jobs that filled it when
    /// they start together), numbered from 1, the pool threads' job ids following.
    package static func numbered(_ hangs: [Hang]) -> [Hang] {
        let ordered = hangs.enumerated().sorted {
            let pool0 = $0.element.thread.role == Hang.cooperativePoolRole
            let pool1 = $1.element.thread.role == Hang.cooperativePoolRole
            return ($0.element.startMs, pool0 ? 0 : 1, $0.offset) < ($1.element.startMs, pool1 ? 0 : 1, $1.offset)
        }.map(\.element)
        var newId: [Int: Int] = [:]
        for (index, hang) in ordered.enumerated() where hang.thread.role != Hang.cooperativePoolRole {
            newId[hang.id] = index + 1
        }
        return ordered.enumerated().map { index, hang in
            var hang = hang
            hang.id = index + 1
            hang.poolThreads = hang.poolThreads?.map { thread in
                var thread = thread
                thread.jobHangId = newId[thread.jobHangId] ?? thread.jobHangId
                return thread
            }
            return hang
        }
    }

    /// Milliseconds from `start` to `end`, 0 when `end` is earlier: the log's
    /// times come from two clocks (the heartbeat's TSC stamps, the watchdog's
    /// clock_gettime) a few µs apart, and from a file that may be damaged.
    static func spanMs(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e6 : 0
    }

    /// One FrameStats per loop that logged frames, main thread first.
    func frameStats(run: CapturedRun) -> [FrameStats] {
        guard config.frameMs != nil else { return [] } // each tally holds the deadline it counted against
        return run.frames.keys.sorted { (abs($0), $0) < (abs($1), $1) }.compactMap { id in
            guard let tally = run.frames[id], tally.frameCount > 0 else { return nil }
            let intervalMs = Self.spanMs(from: tally.firstStartNs, to: tally.lastEndNs)
            let name = run.threads[id]?.name ?? "thread \(id)"
            return FrameStatistics.compute(name: name, tally: tally, intervalMs: intervalMs)
        }
    }

    /// What a sampler note tells the reader, if anything: why running threads
    /// were sampled with signals, or that the kernel sampled user time only.
    static func samplerNote(_ sampler: CaptureNote.RunningSampler) -> String? {
        let reason: String
        switch sampler {
        case .kernel(let userTimeOnly):
            guard userTimeOnly else { return nil }
            return "running threads were sampled by the kernel in user time only (perf_event_paranoid): "
                + "CPU time inside system calls got no samples"
        case .unknown: return nil
        case .signal(.seccomp):
            reason = "a seccomp filter is on, and one may kill for perf_event_open, so it was not tried"
        case .signal(.ringUnmapped):
            reason = "the kernel sampler's ring could not be mapped: the locked-memory allowance was spent"
        case .signal(.perfEventOpen(let errno)):
            reason = "perf_event_open: " + String(cString: strerror(errno))
        }
        return "running threads were sampled with SIGPROF, not by the kernel (\(reason)): "
            + "a sample that races into a call such as sigtimedwait can end it early"
    }

    /// Notes about the evidence itself: what the engine could not sample.
    package static func describe(run: CapturedRun) -> [String] {
        var notes: [String] = []
        var seen = Set<String>()
        for note in run.notes {
            let text: String
            switch note.kind {
            case .signalBlocked:
                text = "thread \(note.tid) blocks SIGPROF: its CPU samples are missing, only blocked waits were sampled"
            case .signalReplaced:
                text = "the program installed its own SIGPROF handler; hangwatch chains to it"
            case .poolUnwatched(let why):
                switch why {
                case .swiftJobAPI:
                    text = "this libdispatch hands Swift jobs over with dispatch_async_swift_job: the cooperative pool was not watched"
                case .tooManyQueues:
                    text = "the program used more cooperative-pool priorities than hangwatch tells apart: jobs of the others were not watched"
                case .notRedirected:
                    text = "no loaded image imports the dispatch calls that hand jobs to the cooperative pool "
                        + "(a Swift runtime linked in statically): the library did not watch the pool"
                case .slotsFull, .unknown:
                    text = "some cooperative-pool threads got no watch slot (the table was full): their jobs were not watched"
                }
            case .inProcess(let asked, let done):
                guard asked.contains(.waits), !done.contains(.waits) else { continue }
                text = "no loaded image imports an event-loop wait the library can wrap: threads the list names are "
                    + "watched only where the program marks their loop (LoopHeartbeat, FrameMonitor)"
            case .sigprofIgnored:
                text = "the program ignores SIGPROF, and so does the kernel for it: while it does, the SIGPROF sampler "
                    + "cannot sample running threads (the kernel's sampler is not affected)"
            case .seccompStopped(let afterNs):
                let ms = afterNs / 1_000_000, frac = String(ms % 1000)
                let seconds = "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
                text = "a seccomp filter the program installed on every thread (SECCOMP_FILTER_FLAG_TSYNC) binds "
                    + "hangwatch's watchdog too, noticed at +\(seconds) s: sampling stopped then, since such a filter "
                    + "may kill for the calls it makes (/proc opens, process_vm_readv, perf_event_open); "
                    + "later hangs are timed but have no samples"
            case .samplesMissed(let count):
                text = "thread \(note.tid): sampling signals went unanswered (\(count) in one hang)"
            case .sampler(let sampler):
                guard let said = samplerNote(sampler) else { continue }
                text = said
            case .kernelSamplesLost(let count):
                text = "thread \(note.tid): the kernel lost \(count) samples in one hang (its ring filled before the watchdog read it)"
            case .stateUnreadable:
                text = "thread \(note.tid): /proc gave only its state (a privilege drop, or a thread on its way out): blocked ticks have no stack, and no signal was sent while its state was unsure"
            case .unknown: continue
            }
            if seen.insert(text).inserted { notes.append(text) }
        }
        if run.droppedSamples > 0 {
            notes.append("\(run.droppedSamples) samples were dropped because the sample log was full")
        }
        let droppedControl = run.droppedRecords &- run.droppedSamples
        if droppedControl > 0 {
            notes.append("\(droppedControl) hang, thread or module records were dropped because the sample log was full "
                         + "even in the room kept for them: hang boundaries may be missing")
        }
        if run.abandonedRecords > 0 {
            notes.append("\(run.abandonedRecords) records were skipped because the thread writing them never finished them "
                         + "(it was ended by another thread's exec, or left a signal handler by longjmp)")
        }
        if run.unattributedRecords > 0 {
            notes.append("\(run.unattributedRecords) records did not come from a watched thread of the program and were ignored")
        }
        return notes
    }
}
