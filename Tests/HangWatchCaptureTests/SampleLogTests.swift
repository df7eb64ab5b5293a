import CHangWatchEngine
import Foundation
import HangWatchCapture
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The sample log ring on its own: records written with the engine's
/// reserve/commit from the test, read back with `SampleLog.drain`. Each test
/// stages one way a record can go wrong (a writer that dies or stalls between
/// reserve and commit, stale bytes of an earlier lap, a ring full of samples)
/// and checks the reader neither takes a broken record nor stalls for good.
@Suite struct SampleLogRing {
    /// One record as the reader saw it.
    struct Seen: Equatable {
        var kind: UInt32
        var size: UInt32
        /// The body's first byte, and whether every body byte equals it.
        var fill: UInt8
        var uniform: Bool
    }

    static let headerBytes = MemoryLayout<hw_rec_header>.size
    static let ms: UInt64 = 1_000_000

    /// Reserves `size` bytes (header included) of `kind`, fills the body with `fill`.
    static func reserve(_ log: SampleLog, kind: UInt32, size: Int, fill: UInt8,
                        control: Bool = false) -> UnsafeMutablePointer<hw_rec_header>? {
        let rec = control ? hw_log_reserve(log.header, UInt32(size)) : hw_log_reserve_kind(log.header, UInt32(size), kind)
        guard let rec else { return nil }
        UnsafeMutableRawPointer(rec).advanced(by: headerBytes).initializeMemory(as: UInt8.self, repeating: fill,
                                                                                count: size - headerBytes)
        return rec
    }

    /// Reserves, fills and commits; false when the ring refused it.
    @discardableResult
    static func write(_ log: SampleLog, kind: UInt32, size: Int = 64, fill: UInt8 = 0xab, control: Bool = false) -> Bool {
        guard let rec = reserve(log, kind: kind, size: size, fill: fill, control: control) else { return false }
        hw_log_commit(rec, kind)
        return true
    }

    static func drain(_ log: SampleLog, at nowNs: UInt64, writerGone: Bool = false) -> [Seen] {
        var seen: [Seen] = []
        log.drain(writerGone: writerGone, nowNs: nowNs) { rec in
            let size = Int(rec.pointee.size)
            let body = UnsafeRawBufferPointer(start: UnsafeRawPointer(rec).advanced(by: headerBytes),
                                              count: size - headerBytes)
            let first = body.first ?? 0
            seen.append(Seen(kind: hw_rec_kind(rec), size: UInt32(size), fill: first, uniform: body.allSatisfy { $0 == first }))
        }
        return seen
    }

    static let sample = UInt32(HW_REC_SAMPLE.rawValue)
    static let note = UInt32(HW_REC_NOTE.rawValue)
    static let hangStart = UInt32(HW_REC_HANG_START.rawValue)
    static let frames = UInt32(HW_REC_FRAMES.rawValue)

    @Test func committedRecordsComeOutWholeAndInOrder() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        for (i, kind) in [Self.sample, Self.note, Self.hangStart].enumerated() {
            #expect(Self.write(log, kind: kind, size: 48 + 8 * i, fill: UInt8(i + 1)))
        }
        let seen = Self.drain(log, at: hw_now_ns())
        #expect(seen.map(\.kind) == [Self.sample, Self.note, Self.hangStart])
        #expect(seen.map(\.fill) == [1, 2, 3])
        let whole = seen.allSatisfy { $0.uniform }
        #expect(whole)
        // The claim/seal tag lives in the header: a record is as long as asked.
        #expect(seen.map(\.size) == [48, 56, 64])
    }

    /// A thread that reserved a record and died before committing it (killed by
    /// another thread's exec, say): the reader steps over it once the kernel
    /// says the thread is gone, long before the generic timeout.
    @Test func recordOfAWriterThatDiedIsSkipped() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        log.abandonAfterNs = 60_000 * Self.ms // only the thread's death can explain an early skip
        let box = HeaderBox(log.header)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { arg in
            guard let arg else { return nil }
            let header = Unmanaged<HeaderBox>.fromOpaque(arg).takeUnretainedValue().header
            _ = hw_log_reserve_kind(header, 256, UInt32(HW_REC_SAMPLE.rawValue)) // and exit without committing
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        try #require(created == 0)
        pthread_join(thread, nil)
        #expect(Self.write(log, kind: Self.hangStart, fill: 7))

        let t0 = hw_now_ns()
        #expect(Self.drain(log, at: t0).isEmpty, "an uncommitted record holds the reader up at first")
        var seen: [Seen] = []
        // The kernel may take a moment to forget a joined thread: look again for up to 2 s.
        for step in 0..<200 where seen.isEmpty {
            seen = Self.drain(log, at: t0 + 25 * Self.ms + UInt64(step) * 10 * Self.ms)
            if seen.isEmpty { usleep(10_000) }
        }
        #expect(seen == [Seen(kind: Self.hangStart, size: 64, fill: 7, uniform: true)])
        #expect(log.abandonedRecords == 1)
    }

    /// A writer that is alive but will never commit (it left a signal handler
    /// by longjmp): the reader steps over it once it has waited the timeout
    /// since it first saw it, and only when records wait behind it.
    @Test func recordOfALiveWriterIsSkippedAfterTheTimeout() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        log.abandonAfterNs = 200 * Self.ms
        _ = try #require(Self.reserve(log, kind: Self.sample, size: 128, fill: 1))
        let t0 = hw_now_ns()
        #expect(Self.drain(log, at: t0).isEmpty)
        #expect(Self.drain(log, at: t0 + 500 * Self.ms).isEmpty, "nothing waits behind it: no reason to skip")
        #expect(Self.write(log, kind: Self.note, fill: 9))
        #expect(Self.drain(log, at: t0 + 510 * Self.ms).map(\.kind) == [Self.note])
        #expect(log.abandonedRecords == 1)

        _ = try #require(Self.reserve(log, kind: Self.sample, size: 128, fill: 1))
        #expect(Self.write(log, kind: Self.note, fill: 8))
        let t1 = t0 + 1_000 * Self.ms
        #expect(Self.drain(log, at: t1).isEmpty)
        #expect(Self.drain(log, at: t1 + 100 * Self.ms).isEmpty, "its thread lives, in the same image: wait")
        #expect(Self.drain(log, at: t1 + 250 * Self.ms).map(\.fill) == [8])
        #expect(log.abandonedRecords == 2)
    }

    /// Another thread exec'd: the image that reserved the record is gone, and
    /// the log's generation says so (the new image's engine bumped it).
    @Test func recordOfAReplacedImageIsSkippedEarly() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        log.abandonAfterNs = 60_000 * Self.ms
        _ = try #require(Self.reserve(log, kind: Self.sample, size: 128, fill: 1))
        #expect(Self.write(log, kind: Self.note, fill: 9))
        let t0 = hw_now_ns()
        #expect(Self.drain(log, at: t0).isEmpty)
        log.header.pointee.generation += 1
        #expect(Self.drain(log, at: t0 + 30 * Self.ms).map(\.kind) == [Self.note])
    }

    /// A writer the reader gave up on wakes up after the ring came round and
    /// another thread claimed the same bytes: its late commit must not publish
    /// the other thread's half-written record under its own kind.
    @Test func lateCommitCannotPublishAnotherThreadsRecord() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        log.abandonAfterNs = 200 * Self.ms
        let box = HeaderBox(log.header)
        let reserved = DispatchSemaphore(value: 0), wake = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let stalled = StalledWriter(box: box, reserved: reserved, wake: wake, done: done)
        Thread.detachNewThread { stalled.run() }
        reserved.wait()
        // The ring holds 64 records of 1 KiB exactly: the 65th lands where the stalled one is.
        for i in 1..<64 { #expect(Self.write(log, kind: Self.note, size: 1024, fill: UInt8(i))) }
        let t0 = hw_now_ns()
        #expect(Self.drain(log, at: t0).isEmpty)
        #expect(Self.drain(log, at: t0 + 300 * Self.ms).count == 63, "given up on the stalled record")
        let mine = try #require(Self.reserve(log, kind: Self.frames, size: 1024, fill: 0x5a))
        #expect(UnsafeRawPointer(mine) == stalled.record, "the new record reuses the stalled one's bytes")
        wake.signal()
        done.wait() // the stalled writer has tried to commit
        #expect(Self.drain(log, at: t0 + 310 * Self.ms).isEmpty, "still uncommitted: the late commit did nothing")
        hw_log_commit(mine, Self.frames)
        #expect(Self.drain(log, at: t0 + 320 * Self.ms) == [Seen(kind: Self.frames, size: 1024, fill: 0x5a, uniform: true)])
    }

    /// Bytes an earlier lap left behind that look like a committed header of
    /// the current lap (a body full of them) are never taken for a record, and
    /// a position whose writer died between its reservation and its first
    /// store is stepped over after the timeout, to the next real record.
    @Test func staleBytesOfAnEarlierLapAreNeverARecord() throws {
        let capacity = 64 << 10
        let log = try SampleLog(anonymousCapacity: UInt64(capacity))
        log.abandonAfterNs = 200 * Self.ms
        // Lap 1: bodies made of 16-byte words that each read as a committed
        // lap-2 SAMPLE header of 64 bytes.
        let lie = (2 << 8 | UInt64(HW_REC_SAMPLE.rawValue)) | 64 << 32
        for _ in 0..<(capacity / 1024) {
            let rec = try #require(hw_log_reserve_kind(log.header, 1024, Self.note))
            let body = UnsafeMutableRawPointer(rec).advanced(by: Self.headerBytes)
            for word in stride(from: 0, to: 1024 - Self.headerBytes, by: 16) {
                body.storeBytes(of: lie, toByteOffset: word, as: UInt64.self)
                body.storeBytes(of: 0, toByteOffset: word + 8, as: UInt64.self)
            }
            hw_log_commit(rec, Self.note)
        }
        let t0 = hw_now_ns()
        #expect(Self.drain(log, at: t0).count == capacity / 1024)
        // Lap 2: a real record, then 64 bytes a writer reserved (its CAS went
        // through) but never got to write, then another real record.
        #expect(Self.write(log, kind: Self.hangStart, size: 48, fill: 1))
        log.header.pointee.write_pos += 64
        #expect(Self.write(log, kind: Self.frames, size: 64, fill: 2))
        let t1 = t0 + 10 * Self.ms
        #expect(Self.drain(log, at: t1) == [Seen(kind: Self.hangStart, size: 48, fill: 1, uniform: true)],
                "the lap-2-looking bytes after it are not a record")
        #expect(Self.drain(log, at: t1 + 100 * Self.ms).isEmpty, "a writer may still be about to store its header")
        #expect(Self.drain(log, at: t1 + 250 * Self.ms) == [Seen(kind: Self.frames, size: 64, fill: 2, uniform: true)])
        #expect(log.header.pointee.skipped_bytes == 64)
    }

    /// A header committed but not yet sealed (a writer between its last two
    /// stores) is not a record yet.
    @Test func committedButUnsealedIsNotYetARecord() throws {
        let log = try SampleLog(anonymousCapacity: 64 << 10)
        let rec = try #require(Self.reserve(log, kind: Self.sample, size: 64, fill: 3))
        rec.pointee.type |= Self.sample // the head word's CAS, without the seal that follows it
        #expect(Self.drain(log, at: hw_now_ns()).isEmpty)
        rec.pointee.type &= ~0xff // back to EMPTY, so the real commit goes through
        hw_log_commit(rec, Self.sample)
        #expect(Self.drain(log, at: hw_now_ns()).map(\.kind) == [Self.sample])
    }

    /// Samples cannot fill the headroom, so a hang boundary still fits in a
    /// ring that samples filled; drops are counted by kind.
    @Test func controlRecordsFitInARingFullOfSamples() throws {
        let capacity = 64 << 10
        let log = try SampleLog(anonymousCapacity: UInt64(capacity))
        var samples = 0
        while Self.write(log, kind: Self.sample, size: 1024) { samples += 1 }
        #expect(samples == (capacity - capacity / 16) / 1024)
        #expect(log.droppedSamples == 1)
        var control = 0
        while Self.write(log, kind: Self.hangStart, size: 1024, control: true) { control += 1 }
        #expect(control == capacity / 16 / 1024, "the headroom is the control records'")
        #expect(log.droppedControlRecords == 1)
        #expect(log.droppedRecords == 2)
        let seen = Self.drain(log, at: hw_now_ns())
        #expect(seen.count == samples + control)
        #expect(seen.suffix(control).allSatisfy { $0.kind == Self.hangStart })
    }

    /// Several writers against one reader across many laps: every record the
    /// reader takes is whole (its body is all one writer's pattern, matching
    /// its kind), and each writer's records come in order, none missing.
    @Test func concurrentWritersNeverYieldATornRecord() throws {
        let log = try SampleLog(anonymousCapacity: 256 << 10)
        let box = HeaderBox(log.header)
        let writers = 3, perWriter = 20_000
        let group = DispatchGroup()
        for w in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                StressWriter(box: box, index: w, count: perWriter).run()
                group.leave()
            }
        }
        var lastSeq = [Int](repeating: -1, count: writers)
        var taken = 0, torn = 0, outOfOrder = 0
        func take() {
            log.drain(writerGone: false, nowNs: hw_now_ns()) { rec in
                let body = UnsafeRawPointer(rec).advanced(by: Self.headerBytes)
                let words = (Int(rec.pointee.size) - Self.headerBytes) / 8
                let first = body.loadUnaligned(as: UInt64.self)
                if (0..<words).contains(where: { body.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) != first })
                    || UInt32(first >> 56) != hw_rec_kind(rec) {
                    torn += 1
                    return
                }
                let writer = Int(first >> 48 & 0xff), seq = Int(first & 0xffff_ffff)
                if writer >= writers || seq != lastSeq[writer] + 1 { outOfOrder += 1 } else { lastSeq[writer] = seq }
                taken += 1
            }
        }
        while group.wait(timeout: .now() + .milliseconds(1)) == .timedOut { take() }
        take()
        #expect(torn == 0)
        #expect(outOfOrder == 0)
        #expect(taken == writers * perWriter, "writers retry when the ring is full: every record arrives")
        #expect(log.abandonedRecords == 0)
        #expect(log.header.pointee.read_pos > 50 * log.header.pointee.capacity, "many laps")
    }
}

/// The log header, handed to test threads.
final class HeaderBox: @unchecked Sendable {
    let header: UnsafeMutablePointer<hw_log_header>
    init(_ header: UnsafeMutablePointer<hw_log_header>) { self.header = header }
}

/// A writer that reserves a record, then stalls until told to commit it.
final class StalledWriter: @unchecked Sendable {
    let box: HeaderBox
    let reserved: DispatchSemaphore, wake: DispatchSemaphore, done: DispatchSemaphore
    private(set) var record: UnsafeRawPointer?

    init(box: HeaderBox, reserved: DispatchSemaphore, wake: DispatchSemaphore, done: DispatchSemaphore) {
        self.box = box
        self.reserved = reserved
        self.wake = wake
        self.done = done
    }

    func run() {
        let rec = hw_log_reserve_kind(box.header, 1024, UInt32(HW_REC_SAMPLE.rawValue))
        record = rec.map { UnsafeRawPointer($0) }
        reserved.signal()
        wake.wait()
        if let rec { hw_log_commit(rec, UInt32(HW_REC_SAMPLE.rawValue)) }
        done.signal()
    }
}

/// Writes `count` records of varying sizes whose every body word is
/// kind << 56 | writer << 48 | sequence.
struct StressWriter {
    let box: HeaderBox
    let index: Int
    let count: Int

    func run() {
        var random = UInt64(index + 1) &* 0x9e37_79b9_7f4a_7c15
        for seq in 0..<count {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            let kind = seq % 2 == 0 ? UInt32(HW_REC_SAMPLE.rawValue) : UInt32(HW_REC_NOTE.rawValue)
            let size = 24 + Int(random % 512) * 8
            var reserved = hw_log_reserve_kind(box.header, UInt32(size), kind)
            while reserved == nil {
                sched_yield() // full: let the reader catch up
                reserved = hw_log_reserve_kind(box.header, UInt32(size), kind)
            }
            guard let rec = reserved else { continue }
            let word = UInt64(kind) << 56 | UInt64(index) << 48 | UInt64(seq)
            let body = UnsafeMutableRawPointer(rec).advanced(by: MemoryLayout<hw_rec_header>.size)
            for i in 0..<(size - MemoryLayout<hw_rec_header>.size) / 8 {
                body.storeBytes(of: word, toByteOffset: i * 8, as: UInt64.self)
            }
            hw_log_commit(rec, kind)
        }
    }
}
