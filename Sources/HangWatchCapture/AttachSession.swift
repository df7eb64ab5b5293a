// The Swift side of `hangwatch attach`'s poller (CSupport/attach): starts and
// stops it on a sample log a capture session owns, and says in plain words
// what the attach cost and what it could not see.

import CHangWatchAttach
import CHangWatchEngine
import HangWatchSymbols
#if canImport(Glibc)
import Glibc
#endif

/// Why a process cannot be attached to.
package enum AttachRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    case noProcess(String)
    case otherUser(String)
    case ptraceScope(String)
    case denied(String)
    case cannotStart(String)

    package var description: String {
        switch self {
        case let .noProcess(why), let .otherUser(why), let .ptraceScope(why), let .denied(why), let .cannotStart(why):
            return why
        }
    }

    /// Checks that hangwatch may read `pid`'s threads and stacks; nil when it may.
    package static func check(pid: Int32) -> AttachRefusal? {
        var why = [CChar](repeating: 0, count: 512)
        let verdict = hwa_check_access(pid, &why, why.count)
        let text = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch verdict {
        case Int32(HWA_ACCESS_OK.rawValue): return nil
        case Int32(HWA_ACCESS_NO_PROCESS.rawValue): return .noProcess(text)
        case Int32(HWA_ACCESS_OTHER_USER.rawValue): return .otherUser(text)
        case Int32(HWA_ACCESS_PTRACE_SCOPE.rawValue): return .ptraceScope(text)
        default: return .denied(text)
        }
    }
}

/// What one attach measured about itself.
package struct AttachFigures: Sendable, Equatable {
    package var startNs: UInt64
    package var endNs: UInt64
    package var polls: UInt64
    package var latePolls: UInt64
    package var maxPollGapMs: Double
    package var pollerCpuMs: Double
    package var stoppedSamples: UInt64
    package var procSamples: UInt64
    package var repeatSamples: UInt64
    package var medianStopUs: Double
    package var maxStopUs: Double
    package var stopFailures: UInt64
    package var restartedSyscalls: UInt64
    /// Syscalls a stop interrupted with EINTR that hangwatch could not restart exactly (left as they were).
    package var unrestartedSyscalls: UInt64
    /// Stops that met an execve of the thread (released at the exec stop, no sample).
    package var execStops: UInt64
    package var threadsWatched: Int
    package var busyAtAttach: Int
    package var firstBusyAtAttach: Int32
    package var mainQueueMode: Bool
    package var targetExited: Bool
    package var ptraceRefused: Bool

    /// Wall time attached, in seconds.
    package var seconds: Double { Double(endNs &- startNs) / 1e9 }

    init(_ s: hwa_stats) {
        startNs = s.start_ns
        endNs = s.end_ns
        polls = s.ticks
        latePolls = s.late_ticks
        maxPollGapMs = Double(s.max_tick_gap_ns) / 1e6
        pollerCpuMs = Double(s.poller_cpu_ns) / 1e6
        stoppedSamples = s.stopped_samples
        procSamples = s.proc_samples
        repeatSamples = s.repeat_samples
        medianStopUs = Double(s.stop_ns_p50) / 1e3
        maxStopUs = Double(s.stop_ns_max) / 1e3
        stopFailures = s.stop_failures
        restartedSyscalls = s.eintr_restarts
        unrestartedSyscalls = s.eintr_left
        execStops = s.exec_stops
        threadsWatched = Int(s.threads_watched)
        busyAtAttach = Int(s.busy_at_attach)
        firstBusyAtAttach = s.first_busy_at_attach
        mainQueueMode = s.main_queue_mode != 0
        targetExited = s.target_exited != 0
        ptraceRefused = s.ptrace_errno != 0
    }

    /// The report's notes: how the evidence was gathered and what it cost.
    package var notes: [String] {
        var notes: [String] = []
        let cpuPercent = seconds > 0 ? pollerCpuMs / (seconds * 10) : 0
        notes.append("attached to a running process for \(Self.fixed(seconds, 1)) s: no agent, no signal; "
                     + "heartbeat from /proc every 1 ms, 4 ms after 100 ms all idle (\(polls) polls, \(latePolls) late by over 1 ms, "
                     + "longest gap \(Self.fixed(maxPollGapMs, 1)) ms), poller CPU \(Self.fixed(pollerCpuMs, 0)) ms "
                     + "(\(Self.fixed(cpuPercent, 2)) % of one core); a hang's start is good to ±2 ms, its end to ±0.5 ms (schedstat dates polls made late)")
        if stoppedSamples + procSamples > 0 {
            notes.append("samples: \(stoppedSamples) with a ptrace stop (median \(Self.fixed(medianStopUs, 0)) µs, "
                         + "longest \(Self.fixed(maxStopUs, 0)) µs stopped), \(procSamples + repeatSamples) of blocked "
                         + "threads read from /proc without stopping them")
        }
        if restartedSyscalls > 0 {
            notes.append("\(restartedSyscalls) syscalls that a sampling stop interrupted just as they began were restarted, as the kernel restarts a sleep")
        }
        if unrestartedSyscalls > 0 {
            notes.append("\(unrestartedSyscalls) syscalls that a sampling stop interrupted returned EINTR to the program: "
                         + "only epoll_wait and epoll_pwait can be restarted exactly")
        }
        if execStops > 0 {
            notes.append("\(execStops) sampling stops met an execve of the thread and were released at its exec, without a sample")
        }
        if busyAtAttach > 0 {
            notes.append("thread \(firstBusyAtAttach) was already busy when hangwatch attached: that hang counts from the attach, so its duration is a lower bound")
        }
        if mainQueueMode {
            notes.append("the main thread is parked in dispatchMain(): the main queue runs on libdispatch workers, so the busy "
                         + "workers (threads named …overcommit) were watched; from outside, a block of another serial queue looks the same")
        }
        if ptraceRefused {
            notes.append("ptrace was refused: running threads could not be sampled, only blocked ones")
        } else if stopFailures > 0 {
            notes.append("\(stopFailures) samples were lost because the thread exited or could not be stopped")
        }
        if threadsWatched == 0 {
            notes.append("no thread matched the --thread selection: nothing was watched")
        }
        if targetExited { notes.append("the process exited during the attach") }
        return notes
    }

    /// `value` with exactly `decimals` decimals, without Foundation formatting.
    package static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if decimals == 0 { return String(Int64(rounded)) }
        let text = String(rounded)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let frac = parts.count > 1 ? String(parts[1]) : ""
        return String(parts[0]) + "." + String((frac + String(repeating: "0", count: decimals)).prefix(decimals))
    }
}

/// The attach poller on one running process: from `init` to `stop`, it
/// writes the target's busy periods and samples into a log it does not own
/// (the capture session reads and sizes it).
package final class AttachSession {
    package let pid: Int32
    private let log: SampleLog
    private var session: OpaquePointer?
    private let patterns: [CChar]

    /// Starts watching `pid` as `config` says (thread selection, thresholds, sample rate).
    /// `stopBlockedThreads`: sample blocked threads with ptrace stops too (a test of the worst case).
    package init(pid: Int32, config: CaptureConfig, log: SampleLog, stopBlockedThreads: Bool = false) throws(AttachRefusal) {
        if let refusal = AttachRefusal.check(pid: pid) { throw refusal }
        self.pid = pid
        self.log = log
        patterns = Array(config.threadPatternLines.utf8CString)
        // Stops are awaited with sigtimedwait(SIGCHLD); no thread may take it first.
        hwa_block_sigchld()
        let started = patterns.withUnsafeBufferPointer { p -> OpaquePointer? in
            var c = config.attachConfig(pid: pid, stopBlockedThreads: stopBlockedThreads, patterns: p.baseAddress)
            return hwa_start(log.header, &c) // copies the patterns before returning
        }
        guard let started else { throw .cannotStart("cannot start watching process \(pid): \(errnoDescription())") }
        session = started
    }

    deinit { if session != nil { _ = stop() } }

    /// True once the target has exited.
    package var targetExited: Bool { session.map { hwa_target_exited($0) } ?? true }

    /// Ends a reader's park on `log` now (async-signal-safe: an atomic swap and a futex wake).
    package static func wake(_ log: UnsafeMutablePointer<hw_log_header>) { hw_log_reader_wake(log) }

    /// Stops watching (nothing stays attached) and returns the figures.
    package func stop() -> AttachFigures {
        var stats = hwa_stats()
        if let session { hwa_stop(session, &stats) }
        session = nil
        return AttachFigures(stats)
    }
}
