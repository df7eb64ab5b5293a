#if canImport(Glibc)
import Glibc
#endif
import CHangWatchEngine
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchSession
import HangWatchSymbols
import Foundation
import HangWatch

/// Set by SIGINT/SIGTERM while attached: stop watching and write the report.
nonisolated(unsafe) private var attachInterrupted: sig_atomic_t = 0
/// The session's log, for the handler to wake the loop parked on it.
nonisolated(unsafe) private var attachLog: UnsafeMutablePointer<hw_log_header>? = nil

/// `hangwatch attach PID`: watch a process that is already running, then
/// write the same report as `run`.
enum AttachCommand {
    static func main(_ args: [String]) -> Int32 {
        let options: AttachOptions
        do { options = try AttachOptions.parse(args) } catch { return usageError(error.message) }
        if options.showHelp {
            print(Usage.attach)
            return 0
        }
        var stopBlocked = options.stopBlockedThreads
        if ProcessInfo.processInfo.environment["HANGWATCH_ATTACH_STOP_BLOCKED"] == "1" { stopBlocked = true }
        let sourceLines = options.capture.sourceLines ? SourceLineResolver() : nil
        let pid = options.pid
        let executable = ThreadDump.executable(of: pid)
        let arguments = ThreadDump.arguments(of: pid)
        let session: CaptureSession
        do {
            session = try CaptureSession(config: options.capture, outputs: options.live,
                                         backend: .attach(pid: pid, stopBlockedThreads: stopBlocked))
            let startNs = SystemClock.monotonicNs()
            session.watch(ProcessInfoRecord(pid: Int(pid), executable: executable, arguments: arguments, exitCode: nil,
                                            signal: nil, wallMs: 0, startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs)),
                          startNs: startNs)
            try session.startPoller()
        } catch {
            return sessionFailed(error)
        }
        attachLog = session.log.header
        installInterruptHandlers()
        writeStderr("hangwatch: attached to process \(pid) (\(executable))"
                    + (options.durationSeconds.map { " for \(AttachFigures.fixed($0, 1)) s" } ?? "")
                    + "; Ctrl-C ends the attach and writes the report")
        let deadline = options.durationSeconds.map { SystemClock.monotonicNs() + UInt64($0 * 1e9) }
        while attachInterrupted == 0 && !session.targetExited {
            let now = SystemClock.monotonicNs()
            if let deadline, now >= deadline { break }
            _ = session.drainAndTell()
            // While nothing is sampled and no hang is still to be told, the loop sleeps on
            // the log: the poller wakes it when it starts sampling a thread or sees the exit,
            // Ctrl-C's handler when it runs. 250 ms at most, which bounds what a wake lost
            // to a race could delay.
            let limitNs = min(250_000_000, session.parkLimitNs, deadline.map { $0 - now } ?? .max)
            if !session.mayPark || !session.log.parkReader(stop: nil, timeoutNs: limitNs) { usleep(10_000) }
        }
        guard let figures = session.stopPoller() else { return ExitCode.internalError }
        _ = session.tellFinal(writerGone: true, endNs: figures.endNs)
        session.finish()
        // The last hangs still go out, within a bound: retries of a down endpoint end in a drop.
        _ = session.sinks.exporter?.flush(timeoutNs: 5_000_000_000)
        let facts = ProcessFacts(pid: Int(pid), executable: executable, arguments: arguments,
                                 exitCode: nil, signal: nil, startNs: figures.startNs, endNs: figures.endNs)
        let report = session.report(process: facts, notes: figures.notes, sourceLines: sourceLines)
        let written = ReportOutput.write(report, format: options.format,
                                         to: OutputDestination(path: options.output, otherwise: .standardError))
        if written != 0 { return written }
        let breaches = options.gates.breaches(of: report)
        for breach in breaches { writeStderr("hangwatch: \(breach.message)") }
        return breaches.first?.status ?? 0
    }

    /// One line, and the status that says which refusal it was.
    static func refused(_ refusal: AttachRefusal) -> Int32 {
        writeStderr("hangwatch: \(refusal)")
        switch refusal {
        case .noProcess: return ExitCode.noProcess
        case .otherUser, .ptraceScope, .denied: return ExitCode.permissionDenied
        case .cannotStart: return ExitCode.internalError
        }
    }

    private static func installInterruptHandlers() {
        // A mask inherited from the parent (a test runner, a supervisor) must
        // not make Ctrl-C a no-op while attached.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        // One started ignoring a signal (`nohup hangwatch attach PID &`) keeps ignoring it.
        for sig in [SIGINT, SIGTERM, SIGHUP] where !SignalForwarding.startedIgnoring(sig) {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                // SIGNAL-SAFE: one store, then an atomic swap and a futex wake; errno kept.
                let saved = errno
                attachInterrupted = 1
                if let log = attachLog { AttachSession.wake(log) }
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
            sigaddset(&unblock, sig)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }
}
