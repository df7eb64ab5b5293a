import CHangWatchEngine
import Foundation
import HangWatchCapture
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reader's park on the log (reader_park.c): it sleeps while no thread is
/// sampled, and neither the start of a session nor a stop is ever slept
/// through, whichever side comes first.
@Suite struct ReaderParkTests {
    private static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Parks on another thread (with the epoch as it is now, as a reader reads
    /// it before its drain); returns its result and how long it slept. The
    /// thread blocks signals: a handler run during the wait would end it early.
    private static func park(_ log: SampleLog, stop: UnsafePointer<UInt32>? = nil, timeoutNs: UInt64,
                             meanwhile: () -> Void) -> (result: Int32, sleptNs: UInt64) {
        let outcome = Mutex<(Int32, UInt64)?>(nil)
        nonisolated(unsafe) let header = log.header
        nonisolated(unsafe) let stopWord = stop
        let epoch = hw_log_sampling_epoch(log.header)
        let thread = Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            let start = monotonicNs()
            let result = hw_log_reader_park(header, epoch, stopWord, timeoutNs)
            outcome.withLock { $0 = (result, monotonicNs() - start) }
        }
        thread.start()
        meanwhile()
        while outcome.withLock({ $0 == nil }) { usleep(1_000) }
        return outcome.withLock { $0! }
    }

    /// Until the park thread has announced its park (a loaded machine may start it late).
    private static func waitUntilParked(_ log: SampleLog) {
        let deadline = monotonicNs() + 10_000_000_000
        while log.header.pointee.reader_parked == 0 && monotonicNs() < deadline { usleep(1_000) }
        usleep(20_000) // into the FUTEX_WAIT itself, most of the time
    }

    /// Drains while threads are sampled: 200 ms apart for one, closer for more,
    /// so that a drain never finds more than 50 ms of four threads' samples did.
    @Test func drainsComeSoonerTheMoreThreadsAreSampled() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        #expect(log.samplingSessions == 0)
        hw_log_sampling_begins(log.header)
        hw_log_sampling_begins(log.header)
        #expect(log.samplingSessions == 2)
        #expect(SampleLog.drainIntervalMs(sessions: log.samplingSessions) == 100)
        hw_log_sampling_ends(log.header)
        hw_log_sampling_ends(log.header)
        #expect([0, 1, 3, 4, 64].map { SampleLog.drainIntervalMs(sessions: $0) } == [200, 200, 66, 50, 50])
    }

    @Test func sleepsToItsTimeoutWhileNothingIsSampled() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        let (result, slept) = Self.park(log, timeoutNs: 150_000_000) {}
        #expect(result == 0)
        #expect(slept >= 140_000_000 && slept < 2_000_000_000, "slept \(slept) ns")
        #expect(log.header.pointee.reader_parked == 0)
    }

    @Test func theStartOfASessionWakesIt() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        let (result, slept) = Self.park(log, timeoutNs: 30_000_000_000) {
            Self.waitUntilParked(log)
            hw_log_sampling_begins(log.header)
        }
        #expect(result == 1)
        #expect(slept < 5_000_000_000, "slept \(slept) ns")
        // While the session lasts a park is refused at once; after it, allowed again.
        #expect(hw_log_reader_park(log.header, hw_log_sampling_epoch(log.header), nil, 30_000_000_000) == -1)
        hw_log_sampling_ends(log.header)
        #expect(log.header.pointee.sampling_sessions == 0)
        #expect(hw_log_reader_park(log.header, hw_log_sampling_epoch(log.header), nil, 1_000_000) == 0)
        // An end without a begin (a reset by exec came between) never goes below zero.
        hw_log_sampling_ends(log.header)
        #expect(log.header.pointee.sampling_sessions == 0)
    }

    /// Between drains while a thread is sampled, the reader waits its interval,
    /// but another thread's sampling starting cuts the wait short (the interval
    /// shortens with it); a session that began since the drain refuses it.
    @Test func anotherSessionCutsTheWaitBetweenDrainsShort() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        hw_log_sampling_begins(log.header)
        let outcome = Mutex<(Int32, UInt64)?>(nil)
        nonisolated(unsafe) let header = log.header
        let epoch = hw_log_sampling_epoch(log.header)
        let thread = Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            let start = Self.monotonicNs()
            let result = hw_log_reader_wait(header, epoch, nil, 30_000_000_000)
            outcome.withLock { $0 = (result, Self.monotonicNs() - start) }
        }
        thread.start()
        Self.waitUntilParked(log)
        hw_log_sampling_begins(log.header)
        while outcome.withLock({ $0 == nil }) { usleep(1_000) }
        let (result, slept) = try #require(outcome.withLock { $0 })
        #expect(result == 1)
        #expect(slept < 5_000_000_000, "slept \(slept) ns")
        #expect(hw_log_reader_wait(log.header, epoch, nil, 30_000_000_000) == -1)
        #expect(hw_log_reader_wait(log.header, hw_log_sampling_epoch(log.header), nil, 1_000_000) == 0)
        hw_log_sampling_ends(log.header)
        hw_log_sampling_ends(log.header)
    }

    /// A session that began and ended after the reader's drain began (a short
    /// hang that came and went while the drain ran) leaves the count at zero,
    /// but its records may have come after the drain: no park.
    @Test func aSessionBetweenTheDrainAndTheParkRefusesIt() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        let epoch = hw_log_sampling_epoch(log.header)
        hw_log_sampling_begins(log.header)
        hw_log_sampling_ends(log.header)
        #expect(log.header.pointee.sampling_sessions == 0)
        #expect(hw_log_reader_park(log.header, epoch, nil, 30_000_000_000) == -1)
        // SampleLog's own drain reads the epoch for the park that follows it.
        log.drain(writerGone: false) { _ in }
        #expect(log.parkReader(stop: nil, timeoutNs: 1_000_000))
    }

    @Test func aStopSetBeforeOrDuringTheParkEndsIt() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        let stop = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
        defer { stop.deallocate() }
        stop.pointee = 0
        let (result, slept) = Self.park(log, stop: stop, timeoutNs: 30_000_000_000) {
            Self.waitUntilParked(log)
            stop.pointee = 1 // the wake's atomic exchange orders it before the wake, as in exit_watch.c
            hw_log_reader_wake(log.header)
        }
        #expect(result == 1)
        #expect(slept < 5_000_000_000, "slept \(slept) ns")
        #expect(hw_log_reader_park(log.header, hw_log_sampling_epoch(log.header), stop, 30_000_000_000) == -1) // set: no sleep
    }

    /// The race itself: a session that starts at any moment around the park,
    /// before, during or after the reader announces it. A lost wake-up sleeps
    /// the whole 3 s timeout (the first one ends the test); 300 rounds take
    /// well under a second when none is lost.
    @Test func noSessionStartIsSleptThrough() throws {
        let log = try SampleLog(anonymousCapacity: 1 << 16)
        var slowest: UInt64 = 0
        for round in 0..<300 {
            let (result, slept) = Self.park(log, timeoutNs: 3_000_000_000) {
                // From "before the park began" to "well into it".
                if round % 3 != 0 { usleep(UInt32(round % 7) * 150) }
                hw_log_sampling_begins(log.header)
            }
            hw_log_sampling_ends(log.header)
            slowest = max(slowest, slept)
            guard result != 0 else {
                Issue.record("round \(round): the park slept to its timeout through a session's start")
                return
            }
        }
        #expect(slowest < 2_000_000_000, "the slowest wake took \(slowest) ns")
    }
}
