#if canImport(Glibc)
import Glibc
#endif

/// How the program ended.
struct WaitStatus {
    var exitCode: Int?
    var signal: Int?
    /// The status a shell would show: the exit code, or 128+N for signal N.
    var shellStatus: Int32 {
        if let signal { return Int32(128 + signal) }
        return Int32(exitCode ?? 0)
    }
}

enum ChildWatcher {
    /// Polls the child every 10 ms, draining the sample log in between, so
    /// the log never fills while the program runs.
    static func waitWhileDraining(pid: pid_t, drain: () -> Void) -> WaitStatus {
        var status: Int32 = 0
        while true {
            drain()
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid { break }
            if rc < 0 && errno != EINTR { return WaitStatus(exitCode: nil, signal: nil) }
            usleep(10_000)
        }
        // WIFEXITED / WIFSIGNALED, spelled out: Swift does not import the macros.
        let termSignal = status & 0x7f
        if termSignal == 0 { return WaitStatus(exitCode: Int((status >> 8) & 0xff), signal: nil) }
        return WaitStatus(exitCode: nil, signal: Int(termSignal))
    }
}

enum Clock {
    static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
