#if canImport(Glibc)
import Glibc
import CHangWatchCLISupport
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchRender
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
        let log: SampleLog
        do {
            log = try SampleLog(creatingAt: logPath)
        } catch {
            writeStderr("hangwatch: \(error)")
            return ExitCode.internalError
        }
        defer { unlink(logPath) }
        log.configure(options.capture)

        // hangwatch's own environment, byte for byte, but for the two variables
        // the agent needs, each made the one entry of its name in the place of
        // the first (ProgramEnvironment.set): HANGWATCH_LOG replaces any the
        // program was given (the agent must write to this log), and LD_PRELOAD
        // joins the agent to the program's own (AgentLocator.programPreload).
        var environment = ProgramEnvironment.current()
        let preload = AgentLocator.programPreload(agent: agent, environment: environment)
        environment.set("HANGWATCH_LOG", to: Array(logPath.utf8))
        environment.set("LD_PRELOAD", to: preload)

        // Opened before the program starts: a path that cannot be written is said at once.
        let events: RotatingEventLog?
        do {
            events = try options.eventsPath.map { path throws(EventFileError) in
                try RotatingEventLog(path: path, rotation: options.rotation, nowNs: SystemClock.monotonicNs())
            }
        } catch {
            writeStderr("hangwatch: \(error)")
            return ExitCode.cannotCreate
        }
        // Held from before the program starts until it has ended, so that the
        // agent's sampling events open in microseconds, not 5-16 ms (perf_warm.c).
        // Opened first: switching the kernel's hooks on can take that long, and
        // here it delays only hangwatch's start, not a forwarded signal. Close-on-exec.
        var perfWarm = options.capture.sampler == .kernel ? hw_cli_keep_perf_warm() : -1
        defer { if perfWarm >= 0 { close(perfWarm) } }
        let programSignalMask = SignalForwarding.install()
        // Read after the event file's set-up (which may move files), so launch and hang starts exclude it.
        let startNs = SystemClock.monotonicNs()
        let startUnixNs = SystemClock.unixNs(ofMonotonic: startNs)
        let pid: pid_t
        do {
            pid = try ProgramLauncher.spawn(path: path, arguments: argv,
                                            environment: environment, signalMask: programSignalMask,
                                            ignoringSIGCHLD: SignalForwarding.startedIgnoringSIGCHLD)
        } catch {
            return report(launchFailure: error)
        }
        SignalForwarding.forward(to: pid)

        let collector = CaptureCollector(frameDeadlineMs: options.capture.frameMs)
        // Images the program dlopen's later are read from its /proc/PID/maps
        // while it lives; the agent itself never takes the loader lock for them.
        collector.watchModules(ofProcess: pid, log: log)
        let exporter = options.otlpEndpoint.flatMap(OTLPExporter.init(url:))
        let wantsEvents = events != nil || exporter != nil
        let live = !wantsEvents ? nil : Optional(
            LiveHangs(config: options.capture,
                      process: ProcessInfoRecord(pid: Int(pid), executable: path.displayed, arguments: programArguments,
                                                 exitCode: nil, signal: nil, wallMs: 0, startTimeUnixNs: startUnixNs),
                      processStartNs: startNs, collector: collector))
        live?.remembersClosed = options.rotation != nil
        func tell(_ told: [HangEvent], live: LiveHangs, nowNs: UInt64, final: Bool = false) {
            events?.append(told, live: live, collector: collector, nowNs: nowNs, final: final)
            exporter?.export(told)
        }
        // A drain every 50-200 ms (SampleLog.drainIntervalMs) leaves the 64 MiB log
        // far from full at 1 kHz; live events are due 50 ms after a hang ends, so
        // with them it is every 10 ms.
        // While no thread is sampled and no event is pending, the reader sleeps
        // until sampling starts, at most a second (a tenth of a rotation interval).
        let idleNs = SampleLog.parkLimitNs(rotationIntervalNs: options.rotation?.intervalNs)
        let intervalMs = { live == nil ? SampleLog.drainIntervalMs(sessions: log.samplingSessions) : 10 }
        let waitStatus = ChildWatcher.waitWhileDraining(pid: pid, intervalMs: intervalMs, parking: log, idleNs: idleNs) {
            collector.drain(log, writerGone: false)
            guard let live else { return true }
            let now = SystemClock.monotonicNs()
            tell(live.events(from: collector, nowNs: now), live: live, nowNs: now)
            return !live.hasUntoldHangs
        }
        collector.stopWatchingModules() // reaped: the pid is free for reuse
        if perfWarm >= 0 { close(perfWarm); perfWarm = -1 } // nothing samples any more
        let endNs = SystemClock.monotonicNs()
        collector.drain(log, writerGone: true)
        if let live {
            tell(live.finalEvents(from: collector, endNs: collector.run.exitTimeNs ?? endNs), live: live, nowNs: endNs,
                 final: true)
            events?.close(live: live, collector: collector, nowNs: endNs)
        }
        collector.finish()

        var notes: [String] = []
        if log.ownerPid == 0 {
            notes.append("the agent did not start in the program (statically linked, or LD_PRELOAD was ignored): no hangs could be seen")
        }
        if let exporter, let url = options.otlpEndpoint {
            // The last hangs still go out, within a bound: retries of a down endpoint end in a drop.
            _ = exporter.flush(timeoutNs: 5_000_000_000)
            if let note = exporter.note(endpoint: url) { notes.append(note) }
        }
        if let events, events.failedWrites > 0 {
            notes.append("\(events.failedWrites) hang events could not be written to \(options.eventsPath ?? "the event file")")
        }
        if let events, let note = events.reportNote { notes.append(note) }
        var facts = ProcessFacts(pid: Int(pid), executable: path.displayed, arguments: programArguments,
                                 exitCode: waitStatus.exitCode, signal: waitStatus.signal,
                                 startNs: startNs, endNs: endNs)
        facts.startUnixNs = startUnixNs
        var report = ReportBuilder(config: options.capture, sourceLines: sourceLines)
            .build(run: collector.run, process: facts, extraNotes: notes)
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
