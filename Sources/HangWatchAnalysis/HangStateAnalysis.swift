import HangWatchCapture
import HangWatchModel

/// What a hung thread was doing, from its own CPU clock rather than from
/// where its samples landed: a thread parked in a futex for 400 ms and one
/// spinning in it leave the same leaf. Also names the call it blocked in,
/// the program's frame that made it and, for a lock, the owner.
package struct HangStateAnalysis {
    /// `cpu` when the thread ran (or was runnable) ≥ 80 % of the measured
    /// window, `blocked` when ≤ 20 %, `mixed` between.
    var kind: HangKind
    var cpuMs: Double?
    var runnableMs: Double?
    var blockedIn: String?
    var blockedSymbol: String?
    var lockOwner: LockOwner?
    var runningThreads: [RunningThread] = []

    /// Shares at or above this are a CPU hang, at or below `blockedShare` a blocked one.
    static let cpuShare = 0.8
    static let blockedShare = 0.2
    /// A CPU window shorter than this says too little (clock granularity,
    /// one tick): the sample-based kind is used instead.
    static let minimumWindowNs: UInt64 = 5_000_000
    /// Threads that used less CPU than this during an ownerless wait are not listed.
    static let minimumRunningMs = 1.0

    init(key: BusyKey, durationMs: Double, samples: [CapturedSample], run: CapturedRun,
         stacks: StackResolver, msPerSample: Double, wantsTree: Bool) {
        let fallback = BlockedProfile(samples: samples)
        kind = fallback.kind
        blockedIn = fallback.mainCall
        if let read = Self.measure(run.threadStates.cpu[key] ?? []) {
            let complete = Self.ticksComplete(of: key.tid, in: run)
            let measured = Self.checked(read, ticks: fallback, ticksComplete: complete)
            cpuMs = measured.cpuShare * durationMs
            runnableMs = measured.runqShare.map { $0 * durationMs }
            kind = Self.kind(measured, ticks: fallback, ticksComplete: complete,
                             blockedTicksComplete: Self.ticksComplete(of: key.tid, in: run, runningLossesToo: false))
            blockedIn = kind == .cpu ? nil : Self.mainCall(samples)
        }
        guard kind != .cpu, let call = blockedIn else { return }
        let blockedStacks = samples.filter { $0.source != .signal && $0.call.name == call }
            .sorted { $0.weight > $1.weight }.map(stacks.resolve)
        blockedSymbol = blockedStacks.first.flatMap(Self.callingFrame)
        guard call == "futex" else { return }
        let joining = blockedStacks.contains { $0.frames.contains { $0.symbol.contains("join") } }
        lockOwner = Self.owner(key: key, run: run, stacks: stacks, msPerSample: msPerSample,
                               joining: joining, wantsTree: wantsTree)
        if lockOwner == nil {
            runningThreads = (run.threadStates.ranDuring[key]?.threads ?? [])
                .map { RunningThread(tid: Int($0.tid), name: $0.name, cpuMs: Double($0.cpuNs) / 1e6) }
                .filter { $0.cpuMs >= Self.minimumRunningMs }
                .prefix(5).map { $0 }
        }
    }

    package struct Shares {
        package var cpuShare: Double
        package var runqShare: Double?
        package init(cpuShare: Double, runqShare: Double?) {
            self.cpuShare = cpuShare
            self.runqShare = runqShare
        }
    }

    /// Sampling ticks below which the ticks do not check the shares (see `checked` and `kind`).
    static let minimumTicks = 50

    /// Whether the ticks can check the shares: complete (see `ticksComplete(of:in:)`) and enough of them.
    static func ticksTell(_ ticks: BlockedProfile, complete: Bool) -> Bool {
        complete && ticks.ticks >= minimumTicks
    }

    /// The shares with the run-queue time the ticks contradict taken out. A
    /// thread the ticks found blocked was not waiting for a CPU then, yet
    /// schedstat can say a thread parked in pthread_join was runnable all
    /// along (seen once; BENCHMARKS.md, "Figures behind code comments"),
    /// which would make the wait a `cpu` hang. Runnable time leaves no sample of
    /// either kind (the task clock stands still, and the watchdog sees state R),
    /// so the run-queue share can be at most the share of ticks that did not
    /// find the thread blocked.
    package static func checked(_ measured: Shares, ticks: BlockedProfile, ticksComplete: Bool) -> Shares {
        guard let runq = measured.runqShare, ticksTell(ticks, complete: ticksComplete) else { return measured }
        let notBlocked = 1 - Double(ticks.blockedTicks) / Double(ticks.ticks)
        return Shares(cpuShare: measured.cpuShare, runqShare: min(runq, notBlocked))
    }

    /// The kind from the measured shares. Runnable time is time the thread
    /// wanted a CPU: it counts as running. Time the kernel counts neither
    /// running nor runnable is sleep, or, in a virtual machine, time the
    /// hypervisor gave the virtual CPU to someone else (steal, which Linux
    /// takes out of a thread's run time and tells per CPU only; see
    /// BENCHMARKS.md for the bursts seen). Sleep shows in
    /// the ticks, which find the thread blocked at about one a millisecond;
    /// steal does not, since the thread never left the running state. So a
    /// share that says `mixed` while the ticks (complete, at least
    /// `minimumTicks`) found the thread asleep too seldom for a `mixed` hang
    /// (under 1 - `cpuShare` of them) is CPU work, part of it stolen. One
    /// tick asleep in a CPU hang is not rare (a page fault waiting on the
    /// disk or the memory map's lock is a blocked state), so without this
    /// check a CPU hang on a VM that loses CPU time reads as `mixed`.
    ///
    /// `blockedTicksComplete` (default: `ticksComplete`) says whether every
    /// tick that found the thread asleep is there, though ticks that found it
    /// running may be lost (the kernel's ring read too late, as a watchdog
    /// short of CPU time is: running samples only ever go there). Then the
    /// share of ticks asleep is an upper bound, and one under a fifth still
    /// says CPU work (the same stolen-time case, with the watchdog itself short of CPU).
    package static func kind(_ measured: Shares, ticks: BlockedProfile, ticksComplete: Bool,
                             blockedTicksComplete: Bool? = nil) -> HangKind {
        let active = measured.cpuShare + (measured.runqShare ?? 0)
        if active >= cpuShare { return .cpu }
        if active <= blockedShare { return .blocked }
        guard ticksTell(ticks, complete: blockedTicksComplete ?? ticksComplete) else { return .mixed }
        return Double(ticks.blockedTicks) < Double(ticks.ticks) * (1 - cpuShare) ? .cpu : .mixed
    }

    /// Whether the ticks can be trusted to show sleep: none of the thread's was
    /// left unsampled (its state unreadable, or stopped or traced), and no
    /// sample was lost (a full ring, the kernel's ring read too late). Without
    /// `runningLossesToo`, the kernel's lost samples (all of a running thread)
    /// do not count: the ticks asleep are all there.
    static func ticksComplete(of tid: Int32, in run: CapturedRun, runningLossesToo: Bool = true) -> Bool {
        run.droppedRecords == 0 && run.abandonedRecords == 0
            && !run.notes.contains { $0.tid == tid && $0.kind.losesTicks(countingRunningOnly: runningLossesToo) }
    }

    /// CPU (and run-queue) share of wall time over the windows the readings cover.
    package static func measure(_ windows: [CPUWindow]) -> Shares? {
        let span = windows.reduce(UInt64(0)) { $0 + $1.spanNs }
        guard span >= minimumWindowNs else { return nil }
        let cpu = windows.reduce(UInt64(0)) { $0 + $1.cpuNs }
        let runqs = windows.map(\.runqNs)
        let runq: UInt64? = runqs.contains(where: { $0 == nil }) ? nil : runqs.reduce(0) { $0 + ($1 ?? 0) }
        let cpuShare = min(1, Double(cpu) / Double(span))
        return Shares(cpuShare: cpuShare, runqShare: runq.map { min(1 - cpuShare, Double($0) / Double(span)) })
    }

    /// The call blocked samples were in most (ties by name).
    static func mainCall(_ samples: [CapturedSample]) -> String? {
        var byCall: [String: Int] = [:]
        for s in samples where s.source != .signal { byCall[s.call.name, default: 0] += s.weight }
        return byCall.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// The innermost frame of the program's own code (not libc, the Swift
    /// runtime, Foundation, libdispatch or the agent); else the innermost
    /// frame that is not the wait itself.
    static func callingFrame(_ stack: WeightedStack) -> String? {
        let frames = stack.frames.filter { !$0.image.isEmpty }
        if let own = frames.last(where: { !SystemImages.contains($0.image) }) { return own.symbol }
        return frames.dropLast().last?.symbol
    }

    /// The owner of the lock, when the engine named one the evidence supports:
    /// a PI futex or a pthread mutex always; a futex word that is a thread id
    /// only when the waiter's stack is in a join (anything else could be a
    /// counter that happens to equal a tid).
    static func owner(key: BusyKey, run: CapturedRun, stacks: StackResolver, msPerSample: Double,
                      joining: Bool, wantsTree: Bool) -> LockOwner? {
        let candidates = (run.threadStates.locks[key] ?? []).filter { wait in
            guard wait.ownerTid > 0 else { return false }
            switch wait.evidence {
            case .priorityInheritance, .pthreadMutex: return true
            case .wordIsThread: return joining
            case .none: return false
            }
        }
        let samplesByOwner = run.threadStates.ownerSamples[key] ?? [:]
        func weight(_ tid: Int32) -> Int { (samplesByOwner[tid] ?? []).reduce(0) { $0 + $1.weight } }
        // Several owners in turn (a lock handed on): the one sampled most.
        guard let chosen = candidates.max(by: { (weight($0.ownerTid), $1.timeNs) < (weight($1.ownerTid), $0.timeNs) })
        else { return nil }
        let samples = samplesByOwner[chosen.ownerTid] ?? []
        let tree = wantsTree ? CallTreeBuilder.build(samples.map(stacks.resolve), msPerSample: msPerSample,
                                                     tracksWaiting: true) : nil
        let name = chosen.ownerName.isEmpty ? (run.threads[chosen.ownerTid]?.name ?? "") : chosen.ownerName
        return LockOwner(tid: Int(chosen.ownerTid), name: name, evidence: evidenceName(chosen.evidence), callTree: tree)
    }

    static func evidenceName(_ evidence: LockOwnerEvidence) -> String {
        switch evidence {
        case .priorityInheritance: return "pi-futex"
        case .pthreadMutex: return "mutex"
        case .wordIsThread: return "join"
        case .none: return "none"
        }
    }
}
