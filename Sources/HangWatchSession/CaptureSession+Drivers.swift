// What `hangwatch run` and `hangwatch attach` both do around a capture, kept
// here once: the end of a capture, and attach's reader loop.

import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
#if canImport(Glibc)
import Glibc
#endif

extension CaptureSession {
    /// Why `--source-lines` will find no file:line, when the symbolizer it needs is missing.
    package var missingSymbolizerWarning: String? {
        guard let sourceLines, sourceLines.symbolizerPath == nil else { return nil }
        return "--source-lines needs llvm-symbolizer, which is not in PATH nor next to swift; the report will have no file:line"
    }

    /// How long the exporter may take, at the end, to send the last hangs: a
    /// down endpoint's retries end in a drop rather than holding the exit.
    package static let finalExportTimeoutNs = UInt64(CaptureOptions.Defaults.finalExportSeconds * 1e9)

    /// Ends a capture whose writer is gone (the program exited, or the poller
    /// stopped): the last turn (its running hangs end at `endNs`), reading
    /// stopped, and the last hangs sent within `finalExportTimeoutNs`.
    package func end(writerGone: Bool, endNs: UInt64) {
        _ = tellFinal(writerGone: writerGone, endNs: endNs)
        finish()
        _ = sinks.exporter?.flush(timeoutNs: Self.finalExportTimeoutNs)
    }

    /// The attach back-end's reader loop: drains and tells until `interrupted`
    /// says so, the target exits, or `deadlineNs` passes. While nothing is
    /// sampled and no hang is still to be told, it sleeps on the log: the
    /// poller wakes it when it starts sampling a thread or sees the exit, an
    /// interrupt handler through `AttachSession.wake`. A park lasts
    /// `attachParkLimitNs` at most, which bounds what a wake lost to a race
    /// could delay.
    package func followAttached(untilNs deadlineNs: UInt64?, interrupted: () -> Bool) {
        while !interrupted() && !targetExited {
            let now = SystemClock.monotonicNs()
            if let deadlineNs, now >= deadlineNs { break }
            _ = drainAndTell()
            let limitNs = min(Self.attachParkLimitNs, parkLimitNs, deadlineNs.map { $0 - now } ?? .max)
            if !mayPark || !log.parkReader(stop: nil, timeoutNs: limitNs) { usleep(10_000) }
        }
    }

    /// The report of a program the preload back-end watched, `process`, from
    /// `startNs` (just before exec) to `endNs` (seen to end), with how it ended.
    /// It says so when the agent never started in the program.
    package func report(ofLaunched process: ProcessInfoRecord, startNs: UInt64, endNs: UInt64, exitCode: Int?,
                        signal: Int?) -> Report {
        var notes: [String] = []
        if case .preload = backend, log.ownerPid == 0 {
            notes.append("the agent did not start in the program (statically linked, or LD_PRELOAD was ignored): no hangs could be seen")
        }
        var facts = ProcessFacts(pid: process.pid, executable: process.executable, arguments: process.arguments,
                                 exitCode: exitCode, signal: signal, startNs: startNs, endNs: endNs)
        facts.startUnixNs = process.startTimeUnixNs
        return report(process: facts, notes: notes)
    }

    /// The report of an attach to `process`, over the time the poller ran,
    /// with what the attach measured as its first notes.
    package func report(attachedTo process: ProcessInfoRecord, figures: AttachFigures) -> Report {
        let facts = ProcessFacts(pid: process.pid, executable: process.executable, arguments: process.arguments,
                                 exitCode: nil, signal: nil, startNs: figures.startNs, endNs: figures.endNs)
        return report(process: facts, notes: figures.notes)
    }

    /// The longest an attach reader parks before looking again (see `followAttached`).
    package static let attachParkLimitNs: UInt64 = 250_000_000

    /// The attached process as events name it: its executable and arguments
    /// from /proc, its start the moment the attach began.
    package static func attachedProcess(pid: Int32, startNs: UInt64) -> ProcessInfoRecord {
        ProcessInfoRecord(pid: Int(pid), executable: ThreadDump.executable(of: pid),
                          arguments: ThreadDump.arguments(of: pid), exitCode: nil, signal: nil, wallMs: 0,
                          startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs))
    }
}
