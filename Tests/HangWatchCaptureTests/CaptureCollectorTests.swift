import CHangWatchEngine
import HangWatchCapture
import Testing

/// The collector on records written by the test: which records it attributes
/// to the target, and samples folded per distinct stack as they arrive.
@Suite struct CaptureCollectorRecords {
    /// Writes `value` (a record struct; its header is filled in here) as a record of `kind`.
    static func put<T>(_ log: SampleLog, _ kind: hw_record_type, _ value: T) {
        let size = MemoryLayout<T>.size
        guard let rec = hw_log_reserve(log.header, UInt32(size)) else {
            Issue.record("the ring refused a record")
            return
        }
        withUnsafeBytes(of: value) { bytes in
            let header = MemoryLayout<hw_rec_header>.size
            guard let base = bytes.baseAddress else { return }
            UnsafeMutableRawPointer(rec).advanced(by: header)
                .copyMemory(from: base.advanced(by: header), byteCount: size - header)
        }
        hw_log_commit(rec, kind.rawValue)
    }

    static func session(_ log: SampleLog, generation: UInt32, start: UInt64 = 0) {
        var s = hw_rec_session()
        s.generation = generation
        s.start_ns = start
        s.pid = 4242
        put(log, HW_REC_SESSION, s)
    }

    static func thread(_ log: SampleLog, tid: Int32) {
        var t = hw_rec_thread()
        t.tid = tid
        t.os_tid = tid
        put(log, HW_REC_THREAD, t)
    }

    static func busy(_ log: SampleLog, _ kind: hw_record_type, tid: Int32, seq: UInt64, start: UInt64, end: UInt64 = 0) {
        var b = hw_rec_busy()
        b.tid = tid
        b.os_tid = tid
        b.busy_seq = seq
        b.start_ns = start
        b.end_ns = end
        put(log, kind, b)
    }

    static func sample(_ log: SampleLog, tid: Int32, seq: UInt64, generation: UInt32, pc: UInt64, time: UInt64) {
        var s = hw_rec_sample()
        s.tid = tid
        s.generation = generation
        s.busy_seq = seq
        s.time_ns = time
        s.source = UInt32(HW_SRC_SIGNAL.rawValue)
        withUnsafeMutableBytes(of: &s.regs) { $0.storeBytes(of: pc, toByteOffset: Int(HW_REG_RIP) * 8, as: UInt64.self) }
        put(log, HW_REC_SAMPLE, s)
    }

    static func repeatSample(_ log: SampleLog, tid: Int32, seq: UInt64, time: UInt64) {
        var r = hw_rec_repeat()
        r.tid = tid
        r.busy_seq = seq
        r.time_ns = time
        put(log, HW_REC_REPEAT, r)
    }

    /// Only threads announced in the current generation count: a thread that
    /// never announced itself (a child sharing the mapping), a sample stamped
    /// with another generation, and a thread of the image before an exec that
    /// has not announced itself again, are all ignored and counted. The exec
    /// closes the old image's open periods.
    @Test func onlyAnnouncedThreadsOfTheCurrentImageCount() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 20)
        Self.session(log, generation: 1)
        Self.thread(log, tid: 100)
        Self.busy(log, HW_REC_HANG_START, tid: 100, seq: 1, start: 1_000)
        Self.sample(log, tid: 100, seq: 1, generation: 1, pc: 0x1000, time: 2_000)
        Self.sample(log, tid: 100, seq: 1, generation: 1, pc: 0x1000, time: 3_000)
        Self.repeatSample(log, tid: 100, seq: 1, time: 4_000)
        Self.sample(log, tid: 100, seq: 1, generation: 1, pc: 0x2000, time: 5_000)
        Self.busy(log, HW_REC_BUSY_END, tid: 100, seq: 1, start: 1_000, end: 9_000)
        // Never announced: a phantom thread.
        Self.busy(log, HW_REC_HANG_START, tid: 555, seq: 1, start: 1_000)
        Self.sample(log, tid: 555, seq: 1, generation: 1, pc: 0x1000, time: 2_000)
        Self.busy(log, HW_REC_BUSY_END, tid: 555, seq: 1, start: 1_000, end: 900_000_000)
        // An announced thread, but a sample stamped with an image that is not the current one.
        Self.sample(log, tid: 100, seq: 1, generation: 7, pc: 0x3000, time: 6_000)
        // A hang still open when another thread exec's.
        Self.busy(log, HW_REC_HANG_START, tid: 100, seq: 2, start: 7_000)
        // exec: a new image; thread 100 (the same tid) counts again only once it announces itself.
        Self.session(log, generation: 2, start: 9_500)
        Self.busy(log, HW_REC_HANG_START, tid: 100, seq: 1, start: 10_000)
        Self.thread(log, tid: 100)
        Self.busy(log, HW_REC_HANG_START, tid: 100, seq: 1, start: 20_000)

        let collector = CaptureCollector()
        collector.drain(log, writerGone: false)
        let run = collector.run
        #expect(Set(run.busyPeriods.keys) == [BusyKey(tid: 100, seq: 1, generation: 1),
                                               BusyKey(tid: 100, seq: 2, generation: 1),
                                               BusyKey(tid: 100, seq: 1, generation: 2)])
        #expect(run.busyPeriods[BusyKey(tid: 100, seq: 2, generation: 1)]?.endNs == 9_500,
                "the exec ended the old image's open hang: it does not last to the end of the process")
        #expect(run.busyPeriods[BusyKey(tid: 100, seq: 1, generation: 2)]?.endNs == nil)
        #expect(run.busyPeriods[BusyKey(tid: 100, seq: 1, generation: 2)]?.startNs == 20_000,
                "an exec'd image's sequence numbers never merge with the previous image's")
        #expect(run.unattributedRecords == 5)
        let samples = try #require(run.samples[BusyKey(tid: 100, seq: 1, generation: 1)])
        #expect(samples.map(\.weight) == [3, 1], "two ticks and a repeat of one stack fold into one entry")
        #expect(samples.map { run.stacks[$0.stack].first } == [0x1000, 0x2000])
        #expect(run.stacks.count == 2)
    }

    /// A service that hangs forever in ever new places: forgetting the hangs a
    /// rotated file holds, and the stacks only they used, keeps the
    /// collector's size at what is still open, while a hang open across the
    /// compaction keeps folding its ticks into the entries it had.
    @Test func forgettingToldHangsKeepsTheCollectorBounded() throws {
        let log = try SampleLog(anonymousCapacity: 4 << 20)
        let collector = CaptureCollector()
        Self.session(log, generation: 1)
        Self.thread(log, tid: 100)
        Self.thread(log, tid: 200)
        // Thread 200: one hang that stays open through every rotation.
        Self.busy(log, HW_REC_HANG_START, tid: 200, seq: 1, start: 10)
        Self.sample(log, tid: 200, seq: 1, generation: 1, pc: 0xAAA0, time: 20)
        var seq: UInt64 = 0
        var sizes: [Int] = []
        for round in 0..<20 {
            // 50 hangs on thread 100, each in a stack never seen before.
            var told: [BusyKey] = []
            for _ in 0..<50 {
                seq += 1
                let t = seq * 1_000
                Self.busy(log, HW_REC_HANG_START, tid: 100, seq: seq, start: t)
                Self.sample(log, tid: 100, seq: seq, generation: 1, pc: 0x100_000 + seq * 16, time: t + 1)
                Self.sample(log, tid: 100, seq: seq, generation: 1, pc: 0x100_000 + seq * 16, time: t + 2)
                Self.busy(log, HW_REC_BUSY_END, tid: 100, seq: seq, start: t, end: t + 500)
                told.append(BusyKey(tid: 100, seq: seq, generation: 1))
            }
            // The open hang sees its first stack again, and one new stack per round.
            Self.sample(log, tid: 200, seq: 1, generation: 1, pc: 0xAAA0, time: seq * 1_000 + 600)
            Self.sample(log, tid: 200, seq: 1, generation: 1, pc: 0xB000 + UInt64(round) * 16, time: seq * 1_000 + 700)
            collector.drain(log, writerGone: false)
            #expect(collector.run.busyPeriods.count == 51)
            collector.forget(told)
            collector.compactStacks()
            sizes.append(collector.run.stacks.count)
        }
        let run = collector.run
        #expect(run.busyPeriods.count == 1, "only the open hang is left")
        #expect(run.samples.count == 1)
        // 1,000 distinct stacks were seen; only the open hang's 21 remain.
        #expect(sizes.last == 21, "\(sizes)")
        let open = try #require(run.samples[BusyKey(tid: 200, seq: 1, generation: 1)])
        let expectedPcs: [UInt64] = [0xAAA0] + (0..<20).map { (r: Int) -> UInt64 in 0xB000 + UInt64(r) * 16 }
        let pcs: [UInt64] = open.compactMap { run.stacks[$0.stack].first }
        #expect(pcs == expectedPcs)
        #expect(open.first?.weight == 21, "every round's tick of the first stack folded into its entry")
        #expect(open.reduce(0) { $0 + $1.weight } == 41)
    }
}
