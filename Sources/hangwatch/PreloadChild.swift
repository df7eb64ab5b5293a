#if canImport(Glibc)
import Glibc
import CHangWatchCLISupport
#endif
import HangWatchCapture
import HangWatchModel
import HangWatchSession

/// `hangwatch run`'s back-end: the program, started with the preload agent
/// writing into a capture session's log file, and waited for while the
/// session reads that log.
final class PreloadChild {
    /// The child's process id.
    let pid: pid_t
    /// When it was started, on the monotonic clock (just before the spawn).
    let startNs: UInt64
    /// Held from before the program starts until it has ended, so that the
    /// agent's sampling events open in microseconds, not 5-16 ms (perf_warm.c).
    private var perfWarm: Int32

    /// The program as events and the report name it (no end yet): `arguments` are argv after argv[0].
    func process(executable: [UInt8], arguments: [String]) -> ProcessInfoRecord {
        ProcessInfoRecord(pid: Int(pid), executable: executable.displayed, arguments: arguments,
                          exitCode: nil, signal: nil, wallMs: 0, startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs))
    }

    /// Starts `argv` (the program at `path`) with `agent` preloaded, writing to `logPath`.
    init(path: [UInt8], argv: [[UInt8]], agent: String, logPath: String,
         sampler: CaptureConfig.Sampler) throws(ProgramLauncher.Failure) {
        // hangwatch's own environment, byte for byte, but for the two variables
        // the agent needs, each made the one entry of its name in the place of
        // the first (ProgramEnvironment.set): HANGWATCH_LOG replaces any the
        // program was given (the agent must write to this log), and LD_PRELOAD
        // joins the agent to the program's own (AgentLocator.programPreload).
        var environment = ProgramEnvironment.current()
        let preload = AgentLocator.programPreload(agent: agent, environment: environment)
        environment.set("HANGWATCH_LOG", to: Array(logPath.utf8))
        environment.set("LD_PRELOAD", to: preload)
        // Opened first: switching the kernel's hooks on can take that long, and
        // here it delays only hangwatch's start, not a forwarded signal. Close-on-exec.
        perfWarm = sampler == .kernel ? hw_cli_keep_perf_warm() : -1
        let programSignalMask = SignalForwarding.install()
        // Read after the event file's set-up (which may move files), so launch and hang starts exclude it.
        startNs = SystemClock.monotonicNs()
        do {
            pid = try ProgramLauncher.spawn(path: path, arguments: argv,
                                            environment: environment, signalMask: programSignalMask,
                                            ignoringSIGCHLD: SignalForwarding.startedIgnoringSIGCHLD)
        } catch {
            if perfWarm >= 0 { close(perfWarm) }
            throw error
        }
        SignalForwarding.forward(to: pid)
    }

    deinit { releasePerfWarm() }

    /// Waits for the child to end while `session` reads its log, then stops
    /// reading its maps (reaped, its pid is free for reuse).
    func wait(draining session: CaptureSession) -> WaitStatus {
        let status = ChildWatcher.waitWhileDraining(pid: pid, intervalMs: { session.drainIntervalMs },
                                                    parking: session.log, idleNs: session.parkLimitNs) {
            _ = session.drainAndTell()
            return session.mayPark
        }
        session.stopWatchingModules()
        releasePerfWarm() // nothing samples any more
        return status
    }

    private func releasePerfWarm() {
        if perfWarm >= 0 { close(perfWarm); perfWarm = -1 }
    }
}
