// A collector that runs for weeks: what a rotating event stream has already
// written out is dropped, so the reader's memory follows what is still open,
// not the uptime.

import CHangWatchEngine

extension CaptureCollector {
    /// Drops busy periods that are over and told: their period, samples,
    /// thread states and fold bookkeeping. A late record of one of them is
    /// kept only until its slot moves on, like any busy period never
    /// announced as a hang.
    package func forget(_ keys: [BusyKey]) {
        for key in keys {
            let slot = SlotGeneration(tid: key.tid, generation: key.generation)
            forgottenUpTo[slot] = max(forgottenUpTo[slot] ?? 0, key.seq)
            run.busyPeriods[key] = nil
            run.samples[key] = nil
            folds.forget(key)
            hangSeqs.remove(key)
            run.threadStates.cpu[key] = nil
            run.threadStates.cpuLimits[key] = nil
            forgetLockWaits(of: key)
        }
    }

    /// Drops the frames read so far (they were summarized): the next interval counts its own.
    package func forgetFrames() {
        run.frames.removeAll()
    }

    /// Drops the stacks no kept sample refers to, and renumbers the rest
    /// (samples, their fold shapes and the lock owners' shapes with them).
    package func compactStacks() {
        var used = Set<Int32>()
        for samples in run.samples.values { for s in samples { used.insert(s.stack) } }
        for owners in run.threadStates.ownerSamples.values {
            for samples in owners.values { for s in samples { used.insert(s.stack) } }
        }
        guard used.count < run.stacks.count else { return }
        let renumbered = run.stacks.retain(used)
        func renumber(_ samples: [CapturedSample]) -> [CapturedSample] {
            samples.map { s in
                var s = s
                s.stack = renumbered[s.stack] ?? s.stack
                return s
            }
        }
        run.samples = run.samples.mapValues(renumber)
        run.threadStates.ownerSamples = run.threadStates.ownerSamples.mapValues { $0.mapValues(renumber) }
        let reader = threadStateReader
        for (key, owners) in run.threadStates.ownerSamples {
            for (owner, samples) in owners {
                var shapes: [ThreadStateReader.OwnerShape: Int] = [:]
                for (at, s) in samples.enumerated() {
                    shapes[ThreadStateReader.OwnerShape(stack: s.stack, source: s.source.rawValue, call: s.call.code,
                                                        truncated: s.truncated, unwindStopped: s.unwindStopped)] = at
                }
                reader.ownerShapes[key, default: [:]][owner] = shapes
            }
        }
        folds.rebuild(from: run.samples)
    }
}

extension CaptureCollector {
    /// Whether `record` belongs to a busy period already forgotten: a hang's
    /// start, end or sample that the log gave up late (its writer was
    /// preempted), after the rotation that wrote the hang out.
    func isForgotten(_ record: UnsafePointer<hw_rec_header>) -> Bool {
        guard !forgottenUpTo.isEmpty else { return false }
        let raw = UnsafeRawPointer(record)
        let tid: Int32, seq: UInt64
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_HANG_START.rawValue), Int(HW_REC_BUSY_END.rawValue):
            let b = raw.assumingMemoryBound(to: hw_rec_busy.self).pointee
            (tid, seq) = (b.tid, b.busy_seq)
        case Int(HW_REC_SAMPLE.rawValue):
            let s = raw.assumingMemoryBound(to: hw_rec_sample.self).pointee
            (tid, seq) = (s.tid, s.busy_seq)
        case Int(HW_REC_REPEAT.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_repeat.self).pointee
            (tid, seq) = (r.tid, r.busy_seq)
        default:
            return false
        }
        guard let upTo = forgottenUpTo[SlotGeneration(tid: tid, generation: currentGeneration)] else { return false }
        return seq <= upTo
    }
}

/// A thread slot within one process image.
struct SlotGeneration: Hashable {
    var tid: Int32
    var generation: UInt32
}
