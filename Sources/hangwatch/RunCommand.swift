#if canImport(Glibc)
import Glibc
import CHangWatchCLISupport
import HangWatchCapture
import HangWatchModel
import HangWatchSession
#endif
import Foundation
import HangWatch

/// `hangwatch run`: start the program with the agent, read its sample log
/// while it runs and after it ends, then write the report.
enum RunCommand {
    /// `words`: the command line after `run`, as the bytes hangwatch was
    /// given. Options are read from their text; the program's argv is the
    /// words themselves, from PROGRAM on.
    static func main(_ words: [[UInt8]]) -> Int32 {
        let args = words.map(\.displayed)
        let options: RunOptions
        do {
            options = try RunOptions.parse(args)
        } catch {
            guard case let .message(text) = error else { return ExitCode.usage }
            return usageError(text)
        }
        if options.showHelp {
            print(Usage.run)
            return 0
        }
        guard let start = options.programStart, start < words.count else { return usageError("no program given") }
        let argv = Array(words[start...])
        let program = argv[0]
        let programArguments = argv.dropFirst().map(\.displayed) // for the report only
        let path: [UInt8]
        do {
            path = try ProgramLauncher.resolve(program)
        } catch {
            return error.reported()
        }
        guard let agent = AgentLocator.findOrSay() else { return ExitCode.internalError }
        let logPath = LogFiles.temporaryPath()
        // The event file is opened before the program starts: a path that cannot be written is said at once.
        let session: CaptureSession
        do {
            session = try CaptureSession(config: options.capture, outputs: options.live, backend: .preload(logPath: logPath))
        } catch {
            return sessionFailed(error)
        }
        defer { unlink(logPath) }
        // Said before the program runs rather than after a long run (the report notes it too).
        if let warning = session.missingSymbolizerWarning { writeStderr("hangwatch: note: " + warning) }
        let child: PreloadChild
        do {
            child = try PreloadChild(path: path, argv: argv, agent: agent, logPath: logPath, sampler: options.capture.sampler)
        } catch {
            return error.reported()
        }
        // Images the program dlopen's later are read from its /proc/PID/maps
        // while it lives; the agent itself never takes the loader lock for them.
        let process = child.process(executable: path, arguments: programArguments)
        session.watch(process, startNs: child.startNs)
        let waitStatus = child.wait(draining: session)
        let endNs = SystemClock.monotonicNs()
        session.end(writerGone: true, endNs: endNs)
        let report = waitStatus.completing(session.report(ofLaunched: process, startNs: child.startNs, endNs: endNs,
                                                          exitCode: waitStatus.exitCode, signal: waitStatus.signal))
        // A breached gate replaces the program's status; otherwise the program's status stands.
        return options.gates.conclude(report, format: options.format, output: options.output,
                                      status: waitStatus.shellStatus)
    }
}
