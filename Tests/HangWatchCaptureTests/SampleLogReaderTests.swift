import CHangWatchEngine
import HangWatchCapture
import Testing

/// The reader side of the sample log, in-process: records written with the
/// engine's own writer functions into an anonymous log come back, through
/// `CaptureCollector`, as the busy periods and notes of a `CapturedRun`.
@Suite struct SampleLogReaderTests {
    /// Reserves a record of `Record`'s size, lets `fill` set its fields and publishes it as `kind`.
    static func write<Record>(_ log: SampleLog, _: Record.Type, kind: UInt32, _ fill: (inout Record) -> Void) throws {
        let header = try #require(hw_log_reserve(log.header, UInt32(MemoryLayout<Record>.size)))
        fill(&UnsafeMutableRawPointer(header).assumingMemoryBound(to: Record.self).pointee)
        hw_log_commit(header, kind)
    }

    static func busy(_ log: SampleLog, _ kind: UInt32, tid: Int32, seq: UInt64, startNs: UInt64, endNs: UInt64 = 0,
                     flags: UInt32 = 0) throws {
        try write(log, hw_rec_busy.self, kind: kind) {
            $0.tid = tid
            $0.os_tid = tid
            $0.busy_seq = seq
            $0.start_ns = startNs
            $0.end_ns = endNs
            $0.flags = flags
        }
    }

    /// A SESSION of image `generation` and a THREAD record for `tid`: the
    /// collector only takes records of threads announced in the current image.
    static func announce(_ log: SampleLog, tid: Int32, generation: UInt32 = 1) throws {
        try write(log, hw_rec_session.self, kind: HW_REC_SESSION.rawValue) { $0.generation = generation }
        try write(log, hw_rec_thread.self, kind: HW_REC_THREAD.rawValue) {
            $0.tid = tid
            $0.os_tid = tid
        }
    }

    @Test func hangStartNoteAndEndBecomeOneBusyPeriodAndANote() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 20)
        try Self.announce(log, tid: 7)
        try Self.busy(log, HW_REC_HANG_START.rawValue, tid: 7, seq: 3, startNs: 1_000_000)
        try Self.write(log, hw_rec_note.self, kind: HW_REC_NOTE.rawValue) {
            $0.tid = 7
            $0.code = HW_NOTE_SAMPLES_MISSED.rawValue
            $0.value = 12
        }
        try Self.busy(log, HW_REC_BUSY_END.rawValue, tid: 7, seq: 3, startNs: 1_000_000, endNs: 301_000_000)

        let collector = CaptureCollector()
        collector.drain(log, writerGone: false)
        collector.finish()
        let run = collector.run
        #expect(run.busyPeriods.count == 1)
        let period = try #require(run.busyPeriods[BusyKey(tid: 7, seq: 3, generation: 1)])
        #expect(period.startNs == 1_000_000 && period.endNs == 301_000_000 && period.osTid == 7 && !period.isLaunch)
        #expect(run.notes == [CaptureNote(tid: 7, kind: .samplesMissed(count: 12))])
        #expect(run.droppedRecords == 0)
    }

    /// A hang whose end never came (the program died mid-hang) stays open; the launch flag survives.
    @Test func aHangWithoutItsEndStaysOpen() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 20)
        try Self.announce(log, tid: 5)
        try Self.busy(log, HW_REC_HANG_START.rawValue, tid: 5, seq: 1, startNs: 42, flags: UInt32(HW_BUSY_LAUNCH))
        let collector = CaptureCollector()
        collector.drain(log, writerGone: true)
        let period = try #require(collector.snapshot().busyPeriods[BusyKey(tid: 5, seq: 1, generation: 1)])
        #expect(period.endNs == nil && period.isLaunch && period.startNs == 42)
    }
}
