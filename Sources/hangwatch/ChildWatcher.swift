#if canImport(Glibc)
import Glibc
#endif

/// How the program ended, and what it used.
struct WaitStatus {
    var exitCode: Int?
    var signal: Int?
    /// CPU time and peak memory from wait4's rusage: the program's own plus
    /// that of the children it waited for. Nil when the child was not reaped.
    var cpuUserMs: Double?
    var cpuSystemMs: Double?
    var peakRssKb: Int?
    /// The status a shell would show: the exit code, or 128+N for signal N.
    var shellStatus: Int32 {
        if let signal { return Int32(128 + signal) }
        return Int32(exitCode ?? 0)
    }
}

enum ChildWatcher {
    /// Polls the child every 10 ms, draining the sample log in between, so
    /// the log never fills while the program runs. Reaps it with wait4 so its
    /// resource usage comes with its status.
    static func waitWhileDraining(pid: pid_t, drain: () -> Void) -> WaitStatus {
        var status: Int32 = 0
        var usage = rusage()
        while true {
            drain()
            let rc = wait4(pid, &status, WNOHANG, &usage)
            if rc == pid { break }
            if rc < 0 && errno != EINTR { return WaitStatus(exitCode: nil, signal: nil) }
            usleep(10_000)
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
