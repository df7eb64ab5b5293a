// The capture half of `hangwatch dump PID`: every thread's state and one
// stack, read by CSupport/attach/dump.c and decoded here into Swift values.
// Unwinding happens here too (CaptureCollector); naming is the analysis's.

import CHangWatchAttach
import CHangWatchEngine
import HangWatchSymbols
#if canImport(Glibc)
import Glibc
#endif

/// Every thread of a process at one moment: its state, the call it was
/// blocked in, and its stack unwound into `run`.
package struct ThreadSnapshot: Sendable {
    /// How a thread's stack was read.
    package enum Capture: String, Sendable {
        /// Read from /proc and the thread's memory while it was blocked: no stop.
        case proc
        /// One ptrace stop of a running thread.
        case stopped
        /// Not read (see `SnapshotThread.errno`).
        case none
    }

    /// One thread as the snapshot found it.
    package struct SnapshotThread: Sendable {
        /// Its OS thread id.
        package var tid: Int32
        /// Its name (comm).
        package var name: String
        /// The /proc state letter; "?" when unknown.
        package var state: String
        /// The system call it was in, when /proc named one.
        package var syscall: BlockedCall?
        /// How its stack was read.
        package var capture: Capture
        /// Why no stack was read, as an errno (0: one was).
        package var errno: Int32
        /// The key of its one sample in `run.samples`.
        package var sampleKey: BusyKey { BusyKey(tid: tid, seq: 1, generation: 1) }
    }

    /// The threads, in the order the process listed them.
    package var threads: [SnapshotThread]
    /// The unwound samples (one per thread, keyed by `sampleKey`) and the modules mapped.
    package var run: CapturedRun
    /// CLOCK_MONOTONIC ns the capture took (states and stacks, before unwinding).
    package var captureNs: UInt64
    /// Running threads stopped for one sample.
    package var stoppedThreads: Int
    /// The longest such stop (ns).
    package var longestStopNs: UInt64
    /// System calls a stop interrupted as they began, restarted by the capture.
    package var restartedSyscalls: Int

    /// The most threads one snapshot reads.
    static let maxThreads = 4096

    /// Reads every thread of `pid` once and unwinds its stack.
    /// `stopBlockedThreads`: stop blocked threads too, instead of reading them from /proc (tests).
    package static func capture(pid: Int32, stopBlockedThreads: Bool = false) throws(AttachRefusal) -> ThreadSnapshot {
        if let refusal = AttachRefusal.check(pid: pid) { throw refusal }
        let log: SampleLog
        do { log = try SampleLog(anonymousCapacity: SampleLogSize.bytes(for: .snapshot)) } catch { throw .cannotStart("\(error)") }
        var raw = [hwa_dump_thread](repeating: hwa_dump_thread(), count: maxThreads)
        var stats = hwa_dump_stats()
        hwa_block_sigchld() // stops are awaited with sigtimedwait(SIGCHLD)
        let count = hwa_dump(log.header, pid, &raw, Int32(maxThreads), &stats,
                             stopBlockedThreads ? UInt32(HWA_FLAG_STOP_BLOCKED) : 0)
        guard count >= 0 else {
            throw .cannotStart("cannot read the threads of process \(pid): \(errnoDescription())")
        }
        let collector = CaptureCollector()
        collector.watchModules(ofProcess: pid, log: log)
        collector.drain(log, writerGone: true)
        collector.stopWatchingModules()
        let threads = raw.prefix(Int(count)).map { t in
            let capture: Capture
            switch t.how {
            case UInt32(HWA_DUMP_PROC): capture = .proc
            case UInt32(HWA_DUMP_STOPPED): capture = .stopped
            default: capture = .none
            }
            return SnapshotThread(
                tid: t.tid,
                name: withUnsafeBytes(of: t.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) },
                state: t.state == 0 ? "?" : String(UnicodeScalar(UInt8(bitPattern: t.state))),
                syscall: t.nr >= 0 ? BlockedCall.syscall(t.nr) : nil,
                capture: capture, errno: t.error)
        }
        return ThreadSnapshot(threads: threads, run: collector.run, captureNs: stats.capture_ns,
                              stoppedThreads: Int(stats.stopped), longestStopNs: stats.stop_ns_max,
                              restartedSyscalls: Int(stats.restarted))
    }
}
