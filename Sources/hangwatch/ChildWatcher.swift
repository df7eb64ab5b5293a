#if canImport(Glibc)
import Glibc
#endif
import CHangWatchCLISupport
import HangWatchCapture
import HangWatchModel

/// How the program ended, and what it used.
struct WaitStatus {
    var exitCode: Int?
    var signal: Int?
    /// CPU time and peak memory from wait4's rusage: the program's own plus
    /// that of the children it waited for. Nil when the child was not reaped.
    var cpuUserMs: Double?
    var cpuSystemMs: Double?
    var peakRssKb: Int?
    /// `report` with the program's CPU time and peak memory from this status.
    func completing(_ report: Report) -> Report {
        var report = report
        report.process.cpuUserMs = cpuUserMs
        report.process.cpuSystemMs = cpuSystemMs
        report.process.peakRssKb = peakRssKb
        return report
    }

    /// The status a shell would show: the exit code, or 128+N for signal N.
    var shellStatus: Int32 {
        if let signal { return Int32(128 + signal) }
        return Int32(exitCode ?? 0)
    }
}

enum ChildWatcher {
    /// Drains the sample log every `intervalMs()` until the child exits, then
    /// reaps it with wait4 so its resource usage comes with its status.
    ///
    /// Between drains it sleeps on the log, woken by the child's exit (a
    /// thread polls a pidfd of it) and by the engine starting to sample
    /// another thread (the interval shortens), so an exit is seen at once, not
    /// up to an interval later; without pidfd_open (kernels before 5.3) it
    /// sleeps the interval. Wake-ups are the larger part of this process's
    /// cost per sample at high rates (BENCHMARKS.md), so callers wake often
    /// only when somebody waits for live events.
    ///
    /// With `parking`, while the engine samples no thread and `drain` says
    /// nothing is pending (it returns true), it sleeps on the log instead,
    /// until the engine starts sampling, the child exits (a thread watching
    /// the pidfd wakes it) or `idleNs` passes: an idle program costs one
    /// wake-up a second, not twenty.
    static func waitWhileDraining(pid: pid_t, intervalMs: () -> Int32, parking log: SampleLog?, idleNs: UInt64,
                                  drain: () -> Bool) -> WaitStatus {
        var status: Int32 = 0
        var usage = rusage()
        let exitFd = hw_cli_pidfd_open(pid)
        let exitWatch = log.flatMap { hw_cli_exit_watch_start(exitFd, $0.header) }
        var gone = false
        defer {
            // The watch's thread returns once the child has exited; if wait4 failed
            // while it may still run, the thread and its descriptor are left be.
            if gone {
                hw_cli_exit_watch_finish(exitWatch)
                if exitFd >= 0 { close(exitFd) }
            }
        }
        // Readable once the child has exited; a child another process traces is reaped by
        // that tracer first, and until then wait4 finds nothing: sleep, not spin, meanwhile.
        var exitSeen = false
        while true {
            let mayPark = drain()
            let rc = wait4(pid, &status, WNOHANG, &usage)
            if rc == pid { gone = true; break }
            if rc < 0 && errno != EINTR {
                gone = errno == ECHILD // reaped by the kernel: its pidfd is readable
                return WaitStatus(exitCode: nil, signal: nil)
            }
            if mayPark, let log, let exitWatch, log.parkReader(stop: hw_cli_exit_watch_flag(exitWatch), timeoutNs: idleNs) {
                continue
            }
            // Once the exit is seen the wait would return at once: the pidfd and sleep paths below.
            if let log, let exitWatch, let flag = hw_cli_exit_watch_flag(exitWatch), flag.pointee == 0 {
                // Woken early by the exit, or by another thread's sampling starting.
                log.waitReader(stop: flag, timeoutNs: UInt64(intervalMs()) * 1_000_000)
            } else if exitFd >= 0 && !exitSeen {
                var exited = pollfd(fd: exitFd, events: Int16(POLLIN), revents: 0)
                exitSeen = poll(&exited, 1, intervalMs()) == 1
            } else {
                // Without a pidfd (kernels before 5.3, or refused) an exit is seen at the next poll:
                // as before the pidfd, no later than 10 ms.
                usleep(UInt32(min(intervalMs(), 10)) * 1000)
            }
        }
        var result: WaitStatus
        // WIFEXITED / WIFSIGNALED, spelled out: Swift does not import the macros.
        let termSignal = status & 0x7f
        if termSignal == 0 {
            result = WaitStatus(exitCode: Int((status >> 8) & 0xff), signal: nil)
        } else {
            result = WaitStatus(exitCode: nil, signal: Int(termSignal))
        }
        result.cpuUserMs = milliseconds(usage.ru_utime)
        result.cpuSystemMs = milliseconds(usage.ru_stime)
        result.peakRssKb = Int(usage.ru_maxrss)  // KiB on Linux
        return result
    }

    private static func milliseconds(_ time: timeval) -> Double {
        Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000
    }
}
