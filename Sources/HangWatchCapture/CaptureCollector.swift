#if canImport(Glibc)
import Glibc
#endif
import CHangWatchEngine
import CHangWatchUnwind
import HangWatchSymbols

/// Turns sample-log records into a `CapturedRun`, unwinding each sample as it
/// arrives so that stack copies never pile up. Single-threaded by design: one
/// reader owns it.
package final class CaptureCollector {
    // The properties every sample touches are exempt from Swift's dynamic
    // exclusivity checks (@exclusivity(unchecked)): each check takes a
    // thread-local access set, several times a sample, a visible share of
    // the reader's work (BENCHMARKS.md). The collector
    // is single-threaded by design, and no access to these overlaps another
    // (the compiler still checks the static cases).
    @exclusivity(unchecked) package internal(set) var run = CapturedRun() // internal: CaptureCollector+ThreadStates.swift adds to it

    /// Frames in `range` are hangwatch's wrappers in the program's own image:
    /// the report leaves them out, as it leaves out the preload agent.
    package func leaveOut(wrapperCode range: ClosedRange<UInt64>) { run.wrapperCode.append(range) }
    private var unwinders: [UInt32: OpaquePointer] = [:] // per image generation (exec restarts it)
    /// The one `unwinder(for:)` returned last: every sample asks, nearly always for the same generation.
    private var lastUnwinder: (generation: UInt32, unwinder: OpaquePointer)?
    var hangSeqs: Set<BusyKey> = [] // internal: CaptureCollector+Forgetting.swift
    /// Each slot's latest busy period that had samples.
    private var currentBusy: [Int32: BusyKey] = [:]
    /// The busy period of the latest sample (`currentBusy` already holds it).
    private var lastSampledPeriod: BusyKey?
    /// Which records are the target's watched threads' (THREAD records of the current generation).
    @exclusivity(unchecked) private var attribution = RecordAttribution()
    /// Samples folded per distinct stack as they arrive (memory grows with stacks, not ticks).
    @exclusivity(unchecked) var folds = SampleFolds() // internal: CaptureCollector+Forgetting.swift
    /// Per slot and image, the latest busy period forgotten (CaptureCollector+Forgetting.swift):
    /// a record of it that comes late is dropped, so it cannot come back as a phantom.
    @exclusivity(unchecked) var forgottenUpTo: [SlotGeneration: UInt64] = [:]
    /// Notes already kept: a note repeated per hang is kept once, and at most `maxNotes` are.
    private var noteSet: Set<NoteKey> = []
    /// A note as the engine wrote it, for telling repeats apart.
    private struct NoteKey: Hashable { var tid: Int32, code: UInt32, value: UInt64 }
    static let maxNotes = 1024
    /// Waiting jobs kept: one per pool spell the watchdog saw.
    static let maxWaitingJobs = 65_536
    /// The buffer every sample is unwound into (one allocation, not one per sample).
    @exclusivity(unchecked) private var scratch: [UInt64]
    /// CPU readings, lock owners and their samples (CaptureCollector+ThreadStates.swift).
    let threadStateReader: ThreadStateReader
    private let vdso = VDSOImage.current()
    /// Images learned from /proc/PID/maps after the engine's start (CaptureCollector+Modules.swift).
    let moduleDiscovery = ModuleDiscovery()
    package let maxFrames: Int
    /// Whether busy periods that changed are listed for `takeUpdatedPeriods()`
    /// (the live event stream); off, the list is never kept.
    package var tracksUpdates = false
    private var updatedPeriods: [BusyKey] = []

    /// The frame deadline the engine was given (`--frame-ms`), which its frame records are counted against.
    package let frameDeadlineMs: Double?

    package init(maxFrames: Int = 256, frameDeadlineMs: Double? = nil) {
        self.maxFrames = maxFrames
        self.frameDeadlineMs = frameDeadlineMs
        scratch = [UInt64](repeating: 0, count: maxFrames)
        threadStateReader = ThreadStateReader(maxFrames: maxFrames)
    }

    deinit { for u in unwinders.values { hw_unwinder_destroy(u) } }

    /// Reads all committed records now.
    package func drain(_ log: SampleLog, writerGone: Bool) {
        log.drain(writerGone: writerGone) { record in consume(record) }
        run.droppedRecords = log.droppedRecords
        run.droppedSamples = log.droppedSamples
        run.abandonedRecords = log.abandonedRecords
    }

    package func consume(_ record: UnsafePointer<hw_rec_header>) {
        let raw = UnsafeRawPointer(record)
        noteForModules(record)
        guard attribution.admits(record) else {
            run.unattributedRecords += 1
            return
        }
        if isForgotten(record) { return }
        consumeThreadState(record)
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_MODULE.rawValue):
            addModule(raw.assumingMemoryBound(to: hw_rec_module.self))
        case Int(HW_REC_THREAD.rawValue):
            let t = raw.assumingMemoryBound(to: hw_rec_thread.self).pointee
            let name = withUnsafeBytes(of: t.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let osTid = t.os_tid != 0 ? t.os_tid : t.tid
            run.threads[osTid] = CapturedThread(tid: osTid, name: name, role: ThreadRole(engineRole: t.role))
        case Int(HW_REC_SAMPLE.rawValue):
            addSample(raw.assumingMemoryBound(to: hw_rec_sample.self))
        case Int(HW_REC_REPEAT.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_repeat.self).pointee
            folds.repeatLatest(of: busyKey(r.tid, r.busy_seq), at: r.time_ns, ticks: 1 + Int(r.extra_ticks),
                               in: &run.samples)
        case Int(HW_REC_HANG_START.rawValue), Int(HW_REC_BUSY_END.rawValue):
            let b = raw.assumingMemoryBound(to: hw_rec_busy.self).pointee
            let key = busyKey(b.tid, b.busy_seq)
            hangSeqs.insert(key)
            let ended = hw_rec_kind(record) == HW_REC_BUSY_END.rawValue
            var period = run.busyPeriods[key] ?? BusyPeriod(tid: b.tid, seq: b.busy_seq, generation: key.generation,
                                                             osTid: b.os_tid,
                                                             startNs: b.start_ns, endNs: nil,
                                                             isLaunch: b.flags & UInt32(HW_BUSY_LAUNCH) != 0)
            period.startNs = b.start_ns
            if b.os_tid != 0 { period.osTid = b.os_tid }
            if b.pool_queue != 0 { period.poolQueue = b.pool_queue }
            if ended { period.endNs = b.end_ns }
            if ended && b.flags & UInt32(HW_BUSY_THREAD_EXIT) != 0 { period.endedByThreadExit = true }
            run.busyPeriods[key] = period
            if tracksUpdates { updatedPeriods.append(key) }
        case Int(HW_REC_NOTE.rawValue):
            let n = raw.assumingMemoryBound(to: hw_rec_note.self).pointee
            if n.code == HW_NOTE_POOL_QUEUE.rawValue {
                run.poolWidths[UInt32(truncatingIfNeeded: n.value >> 32) + 1] = Int(UInt32(truncatingIfNeeded: n.value))
                break
            }
            if n.code == HW_NOTE_POOL_JOB_WAITING.rawValue {
                // Units of 10 µs: the queue (bits 61-63), the stamp after the
                // enqueue (16-60) and the span back to the one before (0-15).
                let queue = UInt32(truncatingIfNeeded: n.value >> 61) + 1
                let after = (n.value >> 16 & ((1 << 45) - 1)) * 10_000
                let span = (n.value & 0xffff) * 10_000
                if span <= after, run.poolJobsWaiting.count < Self.maxWaitingJobs {
                    run.poolJobsWaiting.append(CapturedWaitingJob(poolQueue: queue, enqueuedFromNs: after - span,
                                                                  enqueuedByNs: after))
                }
                break
            }
            if n.code == HW_NOTE_MAIN_PARKED.rawValue {
                run.launchParks.append(CapturedPark(osTid: n.tid, startNs: n.value, endNs: nil))
                break
            }
            if n.code == HW_NOTE_MAIN_UNPARKED.rawValue {
                if let last = run.launchParks.lastIndex(where: { $0.osTid == n.tid && $0.endNs == nil }) {
                    run.launchParks[last].endNs = n.value
                }
                break
            }
            let note = CaptureNote(tid: n.tid, kind: CaptureNote.Kind(code: n.code, value: n.value))
            let key = note.kind.namesNoFigure ? NoteKey(tid: n.tid, code: n.code, value: 0)
                : NoteKey(tid: n.tid, code: n.code, value: n.value)
            if noteSet.count < Self.maxNotes, noteSet.insert(key).inserted { run.notes.append(note) }
        case Int(HW_REC_FRAMES.rawValue):
            let f = raw.assumingMemoryBound(to: hw_rec_frames.self).pointee
            let count = Int(min(f.count, UInt32(HW_FRAME_BATCH)))
            let starts = withUnsafeBytes(of: f.start_ns) { Array($0.bindMemory(to: UInt64.self).prefix(count)) }
            let durations = withUnsafeBytes(of: f.duration_us) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
            guard let deadlineMs = frameDeadlineMs else { break } // frames come only with a deadline
            for (start, duration) in zip(starts, durations) {
                run.frames[f.tid, default: FrameTally(deadlineMs: deadlineMs)]
                    .add(startNs: start, durationNs: UInt64(duration) * 1000)
            }
        case Int(HW_REC_EXIT.rawValue):
            run.exitTimeNs = raw.assumingMemoryBound(to: hw_rec_exit.self).pointee.time_ns
        case Int(HW_REC_SESSION.rawValue):
            let session = raw.assumingMemoryBound(to: hw_rec_session.self).pointee
            endPeriods(before: session.generation, at: session.start_ns)
        default:
            break // future record types carry nothing the report needs
        }
    }

    func unwinder(for generation: UInt32) -> OpaquePointer? {
        if let last = lastUnwinder, last.generation == generation { return last.unwinder }
        if unwinders[generation] == nil, let made = hw_unwinder_create() {
            hw_unwinder_set_verify(made, Self.verifyUnwinding)
            unwinders[generation] = made
        }
        guard let u = unwinders[generation] else { return nil }
        lastUnwinder = (generation, u)
        return u
    }

    /// HANGWATCH_UNWIND_VERIFY=1: every unwind from the flat rule table is
    /// checked against libunwind's (tests; it doubles the unwinding cost).
    static let verifyUnwinding = getenv("HANGWATCH_UNWIND_VERIFY").map { String(cString: $0) } == "1"

    /// How this capture's samples were unwound, over every image generation.
    package var unwindCounts: hw_unwind_counts {
        unwinders.values.reduce(into: hw_unwind_counts()) { sum, u in
            let c = hw_unwinder_counts(u)
            sum.flat += c.flat
            sum.by_libunwind += c.by_libunwind
            sum.mismatches += c.mismatches
        }
    }

    private func addModule(_ rec: UnsafePointer<hw_rec_module>) {
        let m = rec.pointee
        let pathPtr = UnsafeRawPointer(rec).advanced(by: MemoryLayout<hw_rec_module>.size)
        let path = String(cString: pathPtr.assumingMemoryBound(to: CChar.self))
        let buildId = withUnsafeBytes(of: m.build_id) { Array($0.prefix(Int(min(m.build_id_len, 32)))) }
        let isVDSO = m.flags & UInt32(HW_MODULE_VDSO) != 0
        let inline = isVDSO ? vdso?.bytes : nil
        let image = ModuleImage(path: isVDSO ? "[vdso]" : path, loadBias: m.bias, start: m.start, end: m.end,
                                buildId: buildId, inlineImage: inline)
        register(image, generation: m.generation, flags: m.flags)
    }

    /// Makes an image (logged by the engine, or found in the maps) known to
    /// the report and to the unwinder of its generation. `flags`: HW_MODULE_*.
    func register(_ image: ModuleImage, generation: UInt32, flags: UInt32) {
        run.modules.append(image)
        if flags & UInt32(HW_MODULE_AGENT) != 0 { run.agentModuleStarts.insert(image.start) }
        moduleDiscovery.noteKnown(image, generation: generation, flags: flags)
        guard let u = unwinder(for: generation) else { return }
        // The status is not kept: a module the unwinder cannot use ends the stacks that
        // reach it, and the symbolicator notes the files it cannot read or that belong
        // to another build.
        _ = image.buildId.withUnsafeBufferPointer { id in
            if let bytes = image.inlineImage {
                return bytes.withUnsafeBufferPointer { b in
                    hw_unwinder_add_module(u, nil, b.baseAddress, b.count, image.loadBias, image.start, image.end,
                                           id.baseAddress, UInt32(id.count))
                }
            }
            if flags & UInt32(HW_MODULE_VDSO) != 0 { return HW_MODULE_UNREADABLE.rawValue }
            return hw_unwinder_add_module(u, image.path, nil, 0, image.loadBias, image.start, image.end,
                                          id.baseAddress, UInt32(id.count))
        }
    }

    private func addSample(_ rec: UnsafePointer<hw_rec_sample>) {
        let s = rec.pointee
        let key = busyKey(s.tid, s.busy_seq)
        // A new busy period on this thread: the previous one's samples are only
        // kept when it turned out to be a hang (it was announced by then).
        // (Nothing to do while one thread's period goes on: the common case.)
        if lastSampledPeriod != key {
            if let previous = currentBusy[s.tid], previous != key, !hangSeqs.contains(previous) {
                run.samples[previous] = nil
                folds.forget(previous)
            }
            currentBusy[s.tid] = key
            lastSampledPeriod = key
        }
        let unwound = unwindLearningModules(rec, into: &scratch)
        let stack = scratch.withUnsafeBufferPointer {
            run.stacks.intern(UnsafeBufferPointer(rebasing: $0.prefix(unwound.count)))
        }
        let sample = CapturedSample(timeNs: s.time_ns, source: CapturedSample.Source(rawValue: s.source) ?? .signal,
                                    call: BlockedCall(code: s.call), stack: stack, weight: 1,
                                    truncated: s.flags & UInt32(HW_SAMPLE_TRUNCATED) != 0,
                                    unwindStopped: !unwound.reachedEntry)
        folds.add(sample, to: key, in: &run.samples)
    }

    /// A new image started (exec): the previous image's threads all ended in
    /// the exec, so its busy periods still open ended by then too. Left open,
    /// they would read as hangs lasting to the end of the process.
    private func endPeriods(before generation: UInt32, at startNs: UInt64) {
        for (key, period) in run.busyPeriods where key.generation < generation && period.endNs == nil {
            run.busyPeriods[key]?.endNs = max(startNs, period.startNs)
            if tracksUpdates { updatedPeriods.append(key) }
        }
    }

    /// The busy period `seq` of slot `tid` in the current generation.
    private func busyKey(_ tid: Int32, _ seq: UInt64) -> BusyKey {
        BusyKey(tid: tid, seq: seq, generation: currentGeneration)
    }

    /// The image whose records are being read (0 before the first SESSION).
    var currentGeneration: UInt32 { attribution.generation ?? 0
    }

    /// The busy periods that started or ended since the last call (with
    /// `tracksUpdates` on), in log order, possibly repeated.
    package func takeUpdatedPeriods() -> [BusyKey] {
        defer { updatedPeriods.removeAll(keepingCapacity: true) }
        return updatedPeriods
    }

    /// Drops samples of busy periods that never became hangs (call once at the end).
    package func finish() {
        for key in run.samples.keys where !hangSeqs.contains(key) {
            run.samples[key] = nil
            folds.forget(key)
        }
        if Self.verifyUnwinding {
            let c = unwindCounts
            let line = "hangwatch: unwind check: \(c.flat) unwinds by the flat rules, "
                + "\(c.by_libunwind) by libunwind, \(c.mismatches) differed\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
        }
    }

    /// What was captured so far, as `finish()` would leave it, without ending the capture.
    package func snapshot() -> CapturedRun {
        var copy = run
        for key in copy.samples.keys where !hangSeqs.contains(key) { copy.samples[key] = nil }
        return copy
    }
}
