#if canImport(Glibc)
import Glibc
#endif
import HangWatchCapture
import HangWatchSession
import Foundation
import HangWatch

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
        let session: CaptureSession
        let startNs = SystemClock.monotonicNs()
        let process = CaptureSession.attachedProcess(pid: options.pid, startNs: startNs)
        do {
            session = try CaptureSession(config: options.capture, outputs: options.live,
                                         backend: .attach(pid: options.pid, stopBlockedThreads: options.stopBlockedThreads))
            session.watch(process, startNs: startNs)
            try session.startPoller()
        } catch {
            return sessionFailed(error)
        }
        AttachInterrupt.install(waking: session.log.header)
        writeStderr("hangwatch: attached to process \(options.pid) (\(process.executable))"
                    + (options.durationSeconds.map { " for \(AttachFigures.fixed($0, 1)) s" } ?? "")
                    + "; Ctrl-C ends the attach and writes the report")
        session.followAttached(untilNs: options.durationSeconds.map { SystemClock.monotonicNs() + UInt64($0 * 1e9) },
                               interrupted: AttachInterrupt.happened)
        guard let figures = session.stopPoller() else { return ExitCode.internalError }
        session.end(writerGone: true, endNs: figures.endNs)
        let report = session.report(attachedTo: process, figures: figures)
        return options.gates.conclude(report, format: options.format, output: options.output, status: 0)
    }
}
