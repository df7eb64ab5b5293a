#if canImport(Glibc)
import Glibc
import CHangWatchCLISupport
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchRender
import HangWatchSession
import HangWatchSymbols
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
            return report(launchFailure: error)
        }
        guard let agent = AgentLocator.find() else {
            writeStderr("hangwatch: preload agent not found (looked for \(AgentLocator.lookedFor)); "
                        + "rebuild with `swift build` or `make agent`, or set HANGWATCH_AGENT")
            return ExitCode.internalError
        }
        // Looked for before the program runs, so a missing tool is said at once
        // rather than discovered after a long run (the report notes it too).
        let sourceLines = options.capture.sourceLines ? SourceLineResolver() : nil
        if let sourceLines, sourceLines.symbolizerPath == nil {
            writeStderr("hangwatch: note: --source-lines needs llvm-symbolizer, which is not in PATH nor next to swift; "
                        + "the report will have no file:line")
        }
        let logPath = LogFiles.temporaryPath()
        // The event file is opened before the program starts: a path that cannot be written is said at once.
        let session: CaptureSession
        do {
            session = try CaptureSession(config: options.capture, outputs: options.live, backend: .preload(logPath: logPath))
        } catch {
            return sessionFailed(error)
        }
        defer { unlink(logPath) }
        let child: PreloadChild
        do {
            child = try PreloadChild(path: path, argv: argv, agent: agent, logPath: logPath, sampler: options.capture.sampler)
        } catch {
            return report(launchFailure: error)
        }
        let startUnixNs = SystemClock.unixNs(ofMonotonic: child.startNs)
        // Images the program dlopen's later are read from its /proc/PID/maps
        // while it lives; the agent itself never takes the loader lock for them.
        session.watch(ProcessInfoRecord(pid: Int(child.pid), executable: path.displayed, arguments: programArguments,
                                        exitCode: nil, signal: nil, wallMs: 0, startTimeUnixNs: startUnixNs),
                      startNs: child.startNs)
        let waitStatus = child.wait(draining: session)
        let endNs = SystemClock.monotonicNs()
        _ = session.tellFinal(writerGone: true, endNs: endNs)
        session.finish()
        // The last hangs still go out, within a bound: retries of a down endpoint end in a drop.
        _ = session.sinks.exporter?.flush(timeoutNs: 5_000_000_000)

        var notes: [String] = []
        if session.log.ownerPid == 0 {
            notes.append("the agent did not start in the program (statically linked, or LD_PRELOAD was ignored): no hangs could be seen")
        }
        var facts = ProcessFacts(pid: Int(child.pid), executable: path.displayed, arguments: programArguments,
                                 exitCode: waitStatus.exitCode, signal: waitStatus.signal,
                                 startNs: child.startNs, endNs: endNs)
        facts.startUnixNs = startUnixNs
        var report = session.report(process: facts, notes: notes, sourceLines: sourceLines)
        report.process.cpuUserMs = waitStatus.cpuUserMs
        report.process.cpuSystemMs = waitStatus.cpuSystemMs
        report.process.peakRssKb = waitStatus.peakRssKb
        let written = ReportOutput.write(report, format: options.format,
                                         to: OutputDestination(path: options.output, otherwise: .standardError))
        if written != 0 { return written }
        // A breached gate replaces the program's status; otherwise the program's status stands.
        let breaches = options.gates.breaches(of: report)
        for breach in breaches { writeStderr("hangwatch: \(breach.message)") }
        return breaches.first?.status ?? waitStatus.shellStatus
    }

    private static func report(launchFailure error: ProgramLauncher.Failure) -> Int32 {
        switch error {
        case let .notFound(p):
            writeStderr("hangwatch: cannot find program '\(p)'")
            return ExitCode.notFound
        case let .notExecutable(p, why):
            writeStderr("hangwatch: cannot execute '\(p)': \(why)")
            return ExitCode.cannotExecute
        case let .spawnFailed(p, why):
            writeStderr("hangwatch: cannot start '\(p)': \(why)")
            return ExitCode.cannotExecute
        }
    }
}
