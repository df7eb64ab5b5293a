// The collector's side of thread states: CPU-clock readings, lock owners,
// the owners' samples and the threads that ran during an ownerless wait
// (records written by the engine's thread_cpu.c and lock_owner.c).

import CHangWatchEngine

/// Reader-side bookkeeping for thread-state records (the collector holds one).
final class ThreadStateReader {
    /// Generation of the latest SESSION record: the image every later record belongs to.
    var generation: UInt32 = 0
    /// Which slot's busy period an owner sample belongs to: a sample carries only the
    /// sampled thread's tid and the slot's sequence. Keyed by that tid (in `BusyKey.tid`)
    /// and the sequence for each owner and chain link a record named, so two slots at
    /// one sequence waiting for two owners (a lock cycle of two loops) stay apart; a
    /// link sampled before its record is read falls back to `slotOfSeq`.
    var slotOfOwnerSeq: [BusyKey: Int32] = [:]
    /// The slot that last named a lock owner at each sequence (`BusyKey.tid` 0).
    var slotOfSeq: [BusyKey: Int32] = [:]
    /// Each slot's latest busy period with CPU readings (earlier ones are dropped unless they were hangs).
    var latestCPUKey: [Int32: BusyKey] = [:]
    /// Each slot's latest busy period with lock records (the same rule).
    var latestLockKey: [Int32: BusyKey] = [:]
    /// Per busy period and owner: the sample entry each shape went to, and the latest entry.
    var ownerShapes: [BusyKey: [Int32: [OwnerShape: Int]]] = [:]
    var latestOwnerEntry: [BusyKey: [Int32: Int]] = [:]
    var scratch: [UInt64]

    struct OwnerShape: Hashable {
        var stack: Int32
        var source: UInt32
        var call: Int32
        var truncated: Bool
        var unwindStopped: Bool
    }

    init(maxFrames: Int) { scratch = [UInt64](repeating: 0, count: maxFrames) }
}

extension CaptureCollector {
    /// Reads the thread-state records (and SESSION, for their generation); other kinds pass by.
    func consumeThreadState(_ record: UnsafePointer<hw_rec_header>) {
        let raw = UnsafeRawPointer(record)
        let reader = threadStateReader
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_SESSION.rawValue):
            reader.generation = raw.assumingMemoryBound(to: hw_rec_session.self).pointee.generation
        case Int(HW_REC_CPU.rawValue):
            addCPUReading(raw.assumingMemoryBound(to: hw_rec_cpu.self).pointee)
        case Int(HW_REC_LOCK_OWNER.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_lock_owner.self).pointee
            let key = BusyKey(tid: r.tid, seq: r.busy_seq, generation: reader.generation)
            let name = withUnsafeBytes(of: r.owner_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let wait = CapturedLockWait(address: r.futex_addr, op: r.futex_op,
                                        evidence: LockOwnerEvidence(rawValue: r.how) ?? .none,
                                        ownerTid: r.owner_tid, ownerName: name, timeNs: r.time_ns)
            forgetEarlierLockWaits(before: key)
            run.threadStates.locks[key, default: []].append(wait)
            reader.slotOfOwnerSeq[BusyKey(tid: r.owner_tid, seq: r.busy_seq, generation: reader.generation)] = r.tid
            reader.slotOfSeq[BusyKey(tid: 0, seq: r.busy_seq, generation: reader.generation)] = r.tid
        case Int(HW_REC_WAIT_LINK.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_lock_owner.self).pointee
            let key = BusyKey(tid: r.tid, seq: r.busy_seq, generation: reader.generation)
            let name = withUnsafeBytes(of: r.owner_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let wait = CapturedLockWait(address: r.futex_addr, op: r.futex_op,
                                        evidence: LockOwnerEvidence(rawValue: r.how) ?? .none,
                                        ownerTid: r.owner_tid, ownerName: name, timeNs: r.time_ns)
            run.threadStates.waitLinks[key, default: []].append(CapturedWaitLink(waiter: r.os_tid, wait: wait))
            // Threads past the owner are sampled as links of this slot's chain.
            reader.slotOfOwnerSeq[BusyKey(tid: r.os_tid, seq: r.busy_seq, generation: reader.generation)] = r.tid
        case Int(HW_REC_CPU_LIMIT.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_cpu_limit.self).pointee
            let key = BusyKey(tid: r.tid, seq: r.busy_seq, generation: reader.generation)
            run.threadStates.cpuLimits[key] = CapturedCPULimit(
                version: r.version, errno: r.err, firstNs: r.first_ns, lastNs: r.last_ns,
                throttledNs: r.last_throttled_ns >= r.first_throttled_ns ? r.last_throttled_ns - r.first_throttled_ns : 0,
                throttledPeriods: r.last_nr_throttled >= r.first_nr_throttled ? r.last_nr_throttled - r.first_nr_throttled : 0,
                quotaUs: r.quota_us == UInt64.max ? nil : r.quota_us, periodUs: r.period_us,
                loadAverage: r.load_centi == UInt32.max ? nil : Double(r.load_centi) / 100,
                runnableTasks: r.runnable == UInt32.max ? nil : Int(r.runnable), cpus: Int(r.cpus))
        case Int(HW_REC_STOPPED.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_stopped.self).pointee
            run.threadStates.stops.append(CapturedStop(generation: reader.generation, fromNs: r.from_ns, toNs: r.to_ns,
                                                       stoppedNs: min(r.stopped_ns, r.to_ns &- r.from_ns)))
        case Int(HW_REC_OWNER_SAMPLE.rawValue):
            addOwnerSample(raw.assumingMemoryBound(to: hw_rec_sample.self))
        case Int(HW_REC_RAN_DURING.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_ran_during.self).pointee
            let key = BusyKey(tid: r.tid, seq: r.busy_seq, generation: reader.generation)
            let count = Int(min(r.count, UInt32(HW_RAN_MAX)))
            let threads = withUnsafeBytes(of: r.threads) { bytes in
                bytes.bindMemory(to: hw_ran_thread.self).prefix(count).map { t in
                    let name = withUnsafeBytes(of: t.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    return CapturedRanDuring.Entry(tid: t.tid, name: name, cpuNs: t.cpu_ns)
                }
            }
            forgetEarlierLockWaits(before: key)
            run.threadStates.ranDuring[key] = CapturedRanDuring(sinceNs: r.since_ns, untilNs: r.time_ns, threads: threads)
        default:
            break
        }
    }

    /// Lock waits of busy periods that never became hangs are dropped once
    /// their slot moves on (a loop that waits on a lock for 20 ms at every
    /// event would otherwise keep every wait's owner samples).
    private func forgetEarlierLockWaits(before key: BusyKey) {
        let reader = threadStateReader
        if let previous = reader.latestLockKey[key.tid], previous != key, run.busyPeriods[previous] == nil {
            forgetLockWaits(of: previous)
        }
        reader.latestLockKey[key.tid] = key
    }

    /// Drops a busy period's lock waits, their owners' samples and what ran meanwhile.
    func forgetLockWaits(of key: BusyKey) {
        let reader = threadStateReader
        let sampled = (run.threadStates.locks[key] ?? []).map(\.ownerTid)
            + (run.threadStates.waitLinks[key] ?? []).map(\.waiter)
        for tid in sampled {
            let ownerKey = BusyKey(tid: tid, seq: key.seq, generation: key.generation)
            if reader.slotOfOwnerSeq[ownerKey] == key.tid { reader.slotOfOwnerSeq[ownerKey] = nil }
        }
        let seqKey = BusyKey(tid: 0, seq: key.seq, generation: key.generation)
        if reader.slotOfSeq[seqKey] == key.tid { reader.slotOfSeq[seqKey] = nil }
        run.threadStates.locks[key] = nil
        run.threadStates.ownerSamples[key] = nil
        run.threadStates.ranDuring[key] = nil
        run.threadStates.waitLinks[key] = nil
        reader.ownerShapes[key] = nil
        reader.latestOwnerEntry[key] = nil
    }

    private func addCPUReading(_ r: hw_rec_cpu) {
        let reader = threadStateReader
        let key = BusyKey(tid: r.tid, seq: r.busy_seq, generation: reader.generation)
        // Readings start 10 ms into every busy period; keep only those of hangs
        // (announced by the time the slot's next period is read) and the latest.
        if let previous = reader.latestCPUKey[r.tid], previous != key, run.busyPeriods[previous] == nil {
            run.threadStates.cpu[previous] = nil
        }
        reader.latestCPUKey[r.tid] = key
        let runq: UInt64? = r.runq_ns == UInt64.max ? nil : r.runq_ns
        var windows = run.threadStates.cpu[key] ?? []
        if let last = windows.indices.last, windows[last].osTid == r.os_tid, r.time_ns >= windows[last].lastNs {
            windows[last].lastNs = r.time_ns
            windows[last].lastCPUNs = r.cpu_ns
            windows[last].lastRunqNs = runq
        } else {
            windows.append(CPUWindow(osTid: r.os_tid, firstNs: r.time_ns, lastNs: r.time_ns, firstCPUNs: r.cpu_ns,
                                     lastCPUNs: r.cpu_ns, firstRunqNs: runq, lastRunqNs: runq))
        }
        run.threadStates.cpu[key] = windows
    }

    private func addOwnerSample(_ rec: UnsafePointer<hw_rec_sample>) {
        let reader = threadStateReader
        let s = rec.pointee
        guard s.generation == reader.generation,
              let slot = reader.slotOfOwnerSeq[BusyKey(tid: s.tid, seq: s.busy_seq, generation: s.generation)]
                  ?? reader.slotOfSeq[BusyKey(tid: 0, seq: s.busy_seq, generation: s.generation)] else { return }
        let key = BusyKey(tid: slot, seq: s.busy_seq, generation: s.generation)
        let owner = s.tid
        // A sample taken at a polling stride stands for the ticks it skipped.
        let ticks = 1 + Int((s.flags >> UInt32(HW_SAMPLE_EXTRA_SHIFT)) & UInt32(HW_SAMPLE_EXTRA_MAX))
        if s.flags & UInt32(HW_SAMPLE_SAME_AS_PREVIOUS) != 0 {
            // Still blocked where it was: one more tick of its latest entry.
            if let at = reader.latestOwnerEntry[key]?[owner], at < run.threadStates.ownerSamples[key]?[owner]?.count ?? 0 {
                run.threadStates.ownerSamples[key]?[owner]?[at].weight += ticks
                run.threadStates.ownerSamples[key]?[owner]?[at].timeNs = s.time_ns
            }
            return
        }
        let unwound = unwindLearningModules(rec, into: &reader.scratch)
        let stack = reader.scratch.withUnsafeBufferPointer {
            run.stacks.intern(UnsafeBufferPointer(rebasing: $0.prefix(unwound.count)))
        }
        let truncated = s.flags & UInt32(HW_SAMPLE_TRUNCATED) != 0
        let shape = ThreadStateReader.OwnerShape(stack: stack, source: s.source, call: s.call, truncated: truncated,
                                                 unwindStopped: !unwound.reachedEntry)
        if let at = reader.ownerShapes[key]?[owner]?[shape], at < run.threadStates.ownerSamples[key]?[owner]?.count ?? 0 {
            run.threadStates.ownerSamples[key]?[owner]?[at].weight += ticks
            run.threadStates.ownerSamples[key]?[owner]?[at].timeNs = s.time_ns
            reader.latestOwnerEntry[key, default: [:]][owner] = at
            return
        }
        let sample = CapturedSample(timeNs: s.time_ns, source: CapturedSample.Source(rawValue: s.source) ?? .signal,
                                    call: BlockedCall(code: s.call), stack: stack, weight: ticks, truncated: truncated,
                                    unwindStopped: !unwound.reachedEntry)
        let at = run.threadStates.ownerSamples[key]?[owner]?.count ?? 0
        run.threadStates.ownerSamples[key, default: [:]][owner, default: []].append(sample)
        reader.ownerShapes[key, default: [:]][owner, default: [:]][shape] = at
        reader.latestOwnerEntry[key, default: [:]][owner] = at
    }
}
