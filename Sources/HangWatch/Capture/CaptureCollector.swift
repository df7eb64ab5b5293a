import CHangWatchEngine
import CHangWatchUnwind

/// Turns sample-log records into a `CapturedRun`, unwinding each sample as it
/// arrives so that stack copies never pile up. Single-threaded by design: one
/// reader owns it.
public final class CaptureCollector {
    public private(set) var run = CapturedRun()
    private var unwinders: [UInt32: OpaquePointer] = [:] // per image generation (exec restarts it)
    private var hangSeqs: Set<BusyKey> = []
    private var currentSeq: [Int32: UInt64] = [:]
    private var moduleProblems: [String: Int32] = [:]
    private let vdso = VDSOImage.current()
    public let maxFrames: Int

    public init(maxFrames: Int = 256) { self.maxFrames = maxFrames }

    deinit { for u in unwinders.values { hw_unwinder_destroy(u) } }

    /// Reads all committed records now.
    public func drain(_ log: SampleLog, writerGone: Bool) {
        log.drain(writerGone: writerGone) { record in consume(record) }
        run.droppedRecords = log.droppedRecords
    }

    /// Module files that could not be used for unwinding, with the reason.
    public var unwindProblems: [String: Int32] { moduleProblems }

    func consume(_ record: UnsafePointer<hw_rec_header>) {
        let raw = UnsafeRawPointer(record)
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_MODULE.rawValue):
            addModule(raw.assumingMemoryBound(to: hw_rec_module.self))
        case Int(HW_REC_THREAD.rawValue):
            let t = raw.assumingMemoryBound(to: hw_rec_thread.self).pointee
            let name = withUnsafeBytes(of: t.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let osTid = t.os_tid != 0 ? t.os_tid : t.tid
            run.threads[osTid] = CapturedThread(tid: osTid, name: name, role: t.role)
        case Int(HW_REC_SAMPLE.rawValue):
            addSample(raw.assumingMemoryBound(to: hw_rec_sample.self))
        case Int(HW_REC_REPEAT.rawValue):
            let r = raw.assumingMemoryBound(to: hw_rec_repeat.self).pointee
            let key = BusyKey(tid: r.tid, seq: r.busy_seq)
            if var list = run.samples[key], !list.isEmpty {
                list[list.count - 1].weight += 1
                list[list.count - 1].timeNs = r.time_ns
                run.samples[key] = list
            }
        case Int(HW_REC_HANG_START.rawValue), Int(HW_REC_BUSY_END.rawValue):
            let b = raw.assumingMemoryBound(to: hw_rec_busy.self).pointee
            let key = BusyKey(tid: b.tid, seq: b.busy_seq)
            hangSeqs.insert(key)
            let ended = hw_rec_kind(record) == HW_REC_BUSY_END.rawValue
            var period = run.busyPeriods[key] ?? BusyPeriod(tid: b.tid, seq: b.busy_seq, osTid: b.os_tid,
                                                             startNs: b.start_ns, endNs: nil,
                                                             isLaunch: b.flags & UInt32(HW_BUSY_LAUNCH) != 0)
            period.startNs = b.start_ns
            if b.os_tid != 0 { period.osTid = b.os_tid }
            if ended { period.endNs = b.end_ns }
            run.busyPeriods[key] = period
        case Int(HW_REC_NOTE.rawValue):
            let n = raw.assumingMemoryBound(to: hw_rec_note.self).pointee
            run.notes.append(CaptureNote(tid: n.tid, code: n.code, value: n.value))
        case Int(HW_REC_FRAMES.rawValue):
            let f = raw.assumingMemoryBound(to: hw_rec_frames.self).pointee
            let count = Int(min(f.count, UInt32(HW_FRAME_BATCH)))
            let starts = withUnsafeBytes(of: f.start_ns) { Array($0.bindMemory(to: UInt64.self).prefix(count)) }
            let durations = withUnsafeBytes(of: f.duration_us) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
            run.frames[f.tid, default: []] += zip(starts, durations).map {
                CapturedFrame(startNs: $0, durationNs: UInt64($1) * 1000)
            }
        case Int(HW_REC_EXIT.rawValue):
            run.exitTimeNs = raw.assumingMemoryBound(to: hw_rec_exit.self).pointee.time_ns
        default:
            break // SESSION and future record types carry nothing the report needs
        }
    }

    private func unwinder(for generation: UInt32) -> OpaquePointer? {
        if let u = unwinders[generation] { return u }
        guard let u = hw_unwinder_create() else { return nil }
        unwinders[generation] = u
        return u
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
        run.modules.append(image)
        if m.flags & UInt32(HW_MODULE_AGENT) != 0 { run.agentModuleStarts.insert(m.start) }
        guard let u = unwinder(for: m.generation) else { return }
        let status: Int32 = buildId.withUnsafeBufferPointer { id in
            if let bytes = inline {
                return bytes.withUnsafeBufferPointer { b in
                    hw_unwinder_add_module(u, nil, b.baseAddress, b.count, m.bias, m.start, m.end,
                                           id.baseAddress, UInt32(id.count))
                }
            }
            if isVDSO { return HW_MODULE_UNREADABLE.rawValue }
            return hw_unwinder_add_module(u, path, nil, 0, m.bias, m.start, m.end, id.baseAddress, UInt32(id.count))
        }
        if status != HW_MODULE_OK.rawValue { moduleProblems[image.path] = status }
    }

    private func addSample(_ rec: UnsafePointer<hw_rec_sample>) {
        let s = rec.pointee
        let key = BusyKey(tid: s.tid, seq: s.busy_seq)
        // A new busy period on this thread: the previous one's samples are only
        // kept when it turned out to be a hang (it was announced by then).
        if let previous = currentSeq[s.tid], previous != s.busy_seq {
            let old = BusyKey(tid: s.tid, seq: previous)
            if !hangSeqs.contains(old) { run.samples[old] = nil }
        }
        currentSeq[s.tid] = s.busy_seq
        var pcs = [UInt64](repeating: 0, count: maxFrames)
        let count: Int32 = unwinder(for: s.generation).map { u in
            pcs.withUnsafeMutableBufferPointer { hw_unwind_sample(u, rec, $0.baseAddress, Int32(maxFrames)) }
        } ?? 0
        pcs.removeSubrange(Int(max(count, 0))...)
        let sample = CapturedSample(timeNs: s.time_ns, source: CapturedSample.Source(rawValue: s.source) ?? .signal,
                                    call: s.call, pcs: pcs, weight: 1,
                                    truncated: s.flags & UInt32(HW_SAMPLE_TRUNCATED) != 0)
        run.samples[key, default: []].append(sample)
    }

    /// Drops samples of busy periods that never became hangs (call once at the end).
    public func finish() {
        for key in run.samples.keys where !hangSeqs.contains(key) { run.samples[key] = nil }
    }

    /// What was captured so far, as `finish()` would leave it, without ending the capture.
    public func snapshot() -> CapturedRun {
        var copy = run
        for key in copy.samples.keys where !hangSeqs.contains(key) { copy.samples[key] = nil }
        return copy
    }
}
