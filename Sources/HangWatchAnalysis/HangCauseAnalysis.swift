import HangWatchCapture
import HangWatchModel

/// Why a hang lasted when the thread's own work does not say: a lock cycle,
/// the process stopped, the cgroup's CPU limit, or no free CPU. Read from the
/// records the watchdog wrote beside the samples (lock owners and the chain
/// past them, stopped spans, the cgroup's cpu.stat, the thread's run-queue time).
package struct HangCauseAnalysis {
    var cause: HangCause?
    var stoppedMs: Double?
    var throttle: CPUThrottle?

    /// A share of the hang at or above this is "most of it".
    package static let mostShare = 0.5

    /// The figures a verdict is drawn from, apart from the deadlock's chain.
    package struct Figures: Sendable, Equatable {
        package var durationMs: Double
        package var stoppedMs: Double?
        package var throttledMs: Double?
        package var runnableMs: Double?
        /// The thread's own CPU time in the hang, when measured.
        package var cpuMs: Double?
        package init(durationMs: Double, stoppedMs: Double?, throttledMs: Double?, runnableMs: Double?,
                     cpuMs: Double? = nil) {
            self.durationMs = durationMs
            self.cpuMs = cpuMs
            self.stoppedMs = stoppedMs
            self.throttledMs = throttledMs
            self.runnableMs = runnableMs
        }
    }

    /// The kind the figures make, in order of certainty: stopped time is the
    /// process's own (nothing ran), throttled time the group's, run-queue
    /// time the thread's; throttled threads count as runnable too, so the
    /// cgroup's figure goes first. A CPU limit stretches a thread's work, so
    /// throttling is weighed against the time the thread was off its CPU:
    /// a hang whose delay beyond its own CPU time is mostly throttled time
    /// is `throttled` (a limited group's hangs are mostly time off the CPU,
    /// and most of that throttled; BENCHMARKS.md has an example).
    package static func verdict(_ f: Figures) -> HangCause.Kind? {
        guard f.durationMs > 0 else { return nil }
        func most(_ ms: Double?, of whole: Double) -> Bool { (ms ?? 0) > 0 && (ms ?? 0) >= whole * mostShare }
        if most(f.stoppedMs, of: f.durationMs) { return .stopped }
        let offCPU = f.cpuMs.map { max(0, f.durationMs - $0) } ?? f.durationMs
        if most(f.throttledMs, of: offCPU) { return .throttled }
        if most(f.runnableMs, of: f.durationMs) { return .starvedOfCPU }
        return nil
    }

    init(key: BusyKey, period: BusyPeriod, endNs: UInt64, durationMs: Double, inProgress: Bool,
         states: HangStateAnalysis, run: CapturedRun, stacks: StackResolver, msPerSample: Double, wantsTree: Bool) {
        stoppedMs = Self.stoppedMs(run.threadStates.stops, generation: key.generation, from: period.startNs, to: endNs)
        let limit = run.threadStates.cpuLimits[key]
        if let limit, limit.version != 0 {
            throttle = CPUThrottle(throttledMs: Double(limit.throttledNs) / 1e6, throttledPeriods: Int(limit.throttledPeriods),
                                   quotaMs: limit.quotaUs.map { Double($0) / 1000 }, periodMs: Double(limit.periodUs) / 1000,
                                   cgroupVersion: Int(limit.version))
        }
        // A deadlock never ends: a hang that did end was not one, whatever a snapshot said.
        if inProgress, let threads = Self.deadlock(key: key, osTid: period.osTid, states: states, run: run,
                                                   stacks: stacks, msPerSample: msPerSample, wantsTree: wantsTree) {
            cause = HangCause(kind: .deadlock, threads: threads)
            return
        }
        let figures = Figures(durationMs: durationMs, stoppedMs: stoppedMs,
                              throttledMs: throttle.map { min($0.throttledMs, durationMs) }, runnableMs: states.runnableMs,
                              cpuMs: states.cpuMs)
        switch Self.verdict(figures) {
        case .stopped: cause = HangCause(kind: .stopped, ms: stoppedMs)
        case .throttled: cause = HangCause(kind: .throttled, ms: throttle?.throttledMs)
        case .starvedOfCPU:
            cause = HangCause(kind: .starvedOfCPU, ms: states.runnableMs, loadAverage: limit?.loadAverage,
                              runnableTasks: limit?.runnableTasks, cpus: limit.flatMap { $0.cpus > 0 ? $0.cpus : nil })
        case .deadlock, nil: cause = nil
        }
    }

    /// Stopped time inside [from, to]: each span's stopped time in proportion
    /// to its overlap; nil when no stop overlaps (none happened, or nothing
    /// measured: attach has no watchdog inside the process).
    package static func stoppedMs(_ stops: [CapturedStop], generation: UInt32, from: UInt64, to: UInt64) -> Double? {
        var total = 0.0
        for stop in stops where stop.generation == generation && stop.toNs > from && stop.fromNs < to {
            let span = Double(stop.toNs - stop.fromNs)
            let overlap = Double(min(stop.toNs, to) - max(stop.fromNs, from))
            total += span > 0 ? Double(stop.stoppedNs) * overlap / span : 0
        }
        return total > 0 ? total / 1e6 : nil
    }

    /// The current link of every thread the records name for this busy period:
    /// the hung thread's own lock record (as `HangStateAnalysis.owner` trusts
    /// it) and the links past its owner written since.
    static func links(key: BusyKey, osTid: Int32, joining: Bool, run: CapturedRun,
                      joiningThreads: Set<Int32>) -> [Int32: WaitChain.Link] {
        var links: [Int32: WaitChain.Link] = [:]
        guard let own = run.threadStates.locks[key]?.last else { return links }
        func trusted(_ wait: CapturedLockWait, joining: Bool) -> Bool {
            switch wait.evidence {
            case .priorityInheritance, .pthreadMutex: return wait.ownerTid > 0
            case .wordIsThread: return joining && wait.ownerTid > 0
            case .none: return false
            }
        }
        if trusted(own, joining: joining) {
            links[osTid] = WaitChain.Link(waiter: osTid, owner: own.ownerTid, evidence: own.evidence, ownerName: own.ownerName)
        }
        for link in run.threadStates.waitLinks[key] ?? [] where link.wait.timeNs >= own.timeNs && link.waiter != osTid {
            links[link.waiter] = trusted(link.wait, joining: joiningThreads.contains(link.waiter))
                ? WaitChain.Link(waiter: link.waiter, owner: link.wait.ownerTid, evidence: link.wait.evidence,
                                 ownerName: link.wait.ownerName)
                : nil
        }
        return links
    }

    static func deadlock(key: BusyKey, osTid: Int32, states: HangStateAnalysis, run: CapturedRun, stacks: StackResolver,
                         msPerSample: Double, wantsTree: Bool) -> [DeadlockThread]? {
        guard states.blockedIn == "futex" else { return nil }
        let ownerSamples = run.threadStates.ownerSamples[key] ?? [:]
        // Each thread's latest blocked stack: the lock call it waits in, and whether it is a join.
        func latestBlocked(_ tid: Int32) -> WeightedStack? {
            (ownerSamples[tid] ?? []).filter { $0.source != .signal }.max { $0.timeNs < $1.timeNs }.map(stacks.resolve)
        }
        let joiningThreads = Set(ownerSamples.keys.filter { tid in
            latestBlocked(tid)?.frames.contains { $0.symbol.contains("join") } ?? false
        })
        let ownJoining = states.lockOwner?.evidence == "join"
        let chain = WaitChain.follow(from: osTid, links: links(key: key, osTid: osTid, joining: ownJoining, run: run,
                                                               joiningThreads: joiningThreads))
        guard WaitChain.isCycle(chain) else { return nil }
        return chain.map { link in
            let tid = link.waiter
            let own = tid == osTid
            let name = own ? (run.threads[tid]?.name ?? "") : (chain.first { $0.owner == tid }?.ownerName ?? "")
            let samples = ownerSamples[tid] ?? []
            let tree = !own && wantsTree && !samples.isEmpty
                ? CallTreeBuilder.build(samples.map(stacks.resolve), msPerSample: msPerSample, tracksWaiting: true) : nil
            let function = own ? states.blockedSymbol : latestBlocked(tid).flatMap(HangStateAnalysis.callingFrame)
            return DeadlockThread(tid: Int(tid), name: name.isEmpty ? (run.threads[tid]?.name ?? "") : name,
                                  function: function, waitsFor: Int(link.owner), evidence: HangStateAnalysis.evidenceName(link.evidence),
                                  callTree: tree)
        }
    }
}
