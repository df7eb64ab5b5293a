// One capture, whichever way in: the configuration checked and translated to
// C once, the log sized by one policy, the reader's turn (drain, live events,
// park), the live sinks and the report. What `run` and `attach` share around
// it is in CaptureSession+Drivers.swift, the library's locked session and
// reader thread in InProcessCapture.swift. The drivers (`hangwatch run`,
// `hangwatch attach`, `HangWatcher`) keep only what is theirs: launching a
// child, an interrupt handler, the library's callback and frame monitors.

import CHangWatchEngine
import HangWatchAnalysis
import HangWatchCapture
import HangWatchLive
import HangWatchModel
import HangWatchSymbols
#if canImport(Glibc)
import Glibc
#endif

/// Why a capture session could not start.
package enum CaptureSessionError: Error, CustomStringConvertible {
    /// The configuration cannot work (the message says why).
    case invalid(String)
    /// The sample log could not be made.
    case cannotCreateLog(CaptureError)
    /// The event file could not be opened.
    case cannotOpenEventFile(EventFileError)
    /// The in-process engine refused to start.
    case engine(String)
    /// The process cannot be attached to.
    case refused(AttachRefusal)

    /// One line for the user.
    package var description: String {
        switch self {
        case let .invalid(why), let .engine(why): return why
        case let .cannotCreateLog(error): return error.description
        case let .cannotOpenEventFile(error): return error.description
        case let .refused(refusal): return refusal.description
        }
    }
}

/// One capture of one process, from its start to its report. Not thread-safe:
/// a driver with several threads (the library) holds it under a lock.
package final class CaptureSession {
    /// Who writes the sample log.
    package enum Backend: Equatable {
        /// `hangwatch run`: the preload agent in the child, into a log file at `logPath`.
        case preload(logPath: String)
        /// The library: the engine in this process.
        case inProcess
        /// `hangwatch attach`: the poller, from outside, into process `pid`.
        case attach(pid: Int32, stopBlockedThreads: Bool)
    }

    /// Thresholds, sample rate, thread selection.
    package let config: CaptureConfig
    /// Who writes the log.
    package let backend: Backend
    /// The log the back-end writes and the session reads.
    package let log: SampleLog
    /// What was read from the log so far.
    package let collector: CaptureCollector
    /// The event file and the exporter.
    package let sinks: LiveSinks
    /// Looks up function sources for the report when `config.sourceLines` is
    /// set; made at the start, so a missing symbolizer is known before a long capture.
    package let sourceLines: SourceLineResolver?
    /// Hang events as they happen, once `watch` began, when a sink (or `wantsEvents`) wants them.
    package private(set) var live: LiveHangs?
    private let wantsEvents: Bool
    private var poller: AttachSession?
    /// Set by the final `tell`: after it, nothing more is told, so the event
    /// file's last line stays its summary.
    private var eventsFinished = false
    /// The engine's sampling epoch as the last reader's turn began (see `parkLimitNs`).
    package private(set) var readerEpoch: UInt32 = 0

    /// Checks the configuration, makes the log for `backend` and opens the
    /// live sinks. `wantsEvents`: make hang events even without a sink (the
    /// library's `onHang`). Nothing is watched until `watch`.
    package init(config: CaptureConfig, outputs: LiveOutputSettings, backend: Backend,
                 wantsEvents: Bool = false) throws(CaptureSessionError) {
        if config.reportMs < config.hangMs {
            throw .invalid("the report threshold (\(config.reportMs) ms) is below the hang threshold (\(config.hangMs) ms)")
        }
        if let problem = outputs.problem { throw .invalid(problem) }
        if case .attach = backend, config.sampleHz > CaptureConfig.attachMaxSampleHz {
            let most = OptionSpec.clean(CaptureConfig.attachMaxSampleHz)
            throw .invalid("invalid value '\(OptionSpec.clean(config.sampleHz))' for \(CaptureOptions.sampleHz.flag) with attach "
                           + "(expected at most \(most): attach samples once per poll of the thread at most)")
        }
        if case let .attach(pid, _) = backend, let refusal = AttachRefusal.check(pid: pid) { throw .refused(refusal) }
        self.config = config
        self.backend = backend
        do {
            switch backend {
            case let .preload(path):
                log = try SampleLog(creatingAt: path, capacity: SampleLogSize.bytes(for: .outOfProcess))
                log.configure(config)
            case .inProcess:
                log = try SampleLog(anonymousCapacity: SampleLogSize.bytes(for: .inProcess))
                log.configure(config)
            case .attach:
                log = try SampleLog(anonymousCapacity: SampleLogSize.bytes(for: .outOfProcess))
            }
        } catch {
            throw .cannotCreateLog(error)
        }
        do {
            sinks = try LiveSinks(outputs, nowNs: SystemClock.monotonicNs())
        } catch {
            throw .cannotOpenEventFile(error)
        }
        self.wantsEvents = wantsEvents || sinks.wantEvents
        collector = CaptureCollector(frameDeadlineMs: config.frameMs)
        sourceLines = config.sourceLines ? SourceLineResolver() : nil
    }

    deinit { if poller != nil { _ = stopPoller() } }

    /// Whether hang events are made while the capture runs.
    package var makesEvents: Bool { wantsEvents }

    /// The in-process back-end: starts the engine in this process.
    /// `interposing`: the HW_INPROCESS_* wrappers to put in front of the
    /// program's imports once the engine runs (the library's loops it does not
    /// mark, and the cooperative pool).
    package func startEngine(interposing: UInt32 = 0) throws(CaptureSessionError) {
        let rc = config.threadPatternLines.withCString { patterns -> Int32 in
            var engineConfig = config.engineConfig(patterns: patterns)
            return hw_engine_start(log.header, &engineConfig)
        }
        guard rc == 0 else { throw .engine(String(cString: strerror(errno))) }
        // After the engine, on the same thread (docs/DESIGN.md, "The library's heartbeats").
        if interposing != 0 { _ = hw_inprocess_interpose(interposing) }
        var start: UInt = 0, end: UInt = 0
        if hw_wrapper_text_range(&start, &end) { collector.leaveOut(wrapperCode: UInt64(start)...UInt64(end - 1)) }
    }

    /// The attach back-end: starts the poller on the process given at `init`.
    package func startPoller() throws(CaptureSessionError) {
        guard case let .attach(pid, stopBlocked) = backend else { return }
        do {
            poller = try AttachSession(pid: pid, config: config, log: log, stopBlockedThreads: stopBlocked)
        } catch {
            throw .refused(error)
        }
    }

    /// Watches `process`, started at `startNs` on the monotonic clock: its
    /// maps for images it loads later, and its hangs for the live sinks.
    package func watch(_ process: ProcessInfoRecord, startNs: UInt64) {
        collector.watchModules(ofProcess: Int32(process.pid), log: log)
        guard wantsEvents else { return }
        let live = LiveHangs(config: config, process: process, processStartNs: startNs, collector: collector)
        live.remembersClosed = sinks.settings.rotation != nil
        self.live = live
    }

    // MARK: The reader's turn

    /// Reads what the back-end logged so far.
    package func drain() { collector.drain(log, writerGone: false) }

    /// Drains, then tells the sinks the hang events due now; returns them.
    package func drainAndTell() -> [HangEvent] {
        collector.drain(log, writerGone: false)
        // Kept apart from the log's own: a `drain` by a report on another thread
        // hands records to the collector that no `events` call has seen yet.
        readerEpoch = log.epochAtLastDrain
        guard let live, !eventsFinished else { return [] }
        let now = SystemClock.monotonicNs()
        let events = live.events(from: collector, nowNs: now)
        sinks.tell(events, live: live, collector: collector, nowNs: now, final: false)
        return events
    }

    /// The capture's last turn: reads the log to its end (`writerGone`: the
    /// writer is gone, so what it left uncommitted is skipped), tells every
    /// hang not told yet (with `writerGone`, a running one ends at the process's exit if it was seen; else at
    /// `endNs`, else now) and closes the event file with its summary.
    package func tellFinal(writerGone: Bool, endNs: UInt64? = nil) -> [HangEvent] {
        collector.drain(log, writerGone: writerGone)
        readerEpoch = log.epochAtLastDrain
        guard let live, !eventsFinished else { return [] }
        eventsFinished = true
        let now = endNs ?? SystemClock.monotonicNs()
        let events = live.finalEvents(from: collector, endNs: writerGone ? (collector.run.exitTimeNs ?? now) : now)
        sinks.tell(events, live: live, collector: collector, nowNs: now, final: true)
        sinks.close(live: live, collector: collector, nowNs: now)
        return events
    }

    /// Whether a hang is still to be told: the reader must not park.
    package var mayPark: Bool { !(live?.hasUntoldHangs ?? false) }

    /// How long a reader waits between drains while threads are sampled:
    /// 10 ms while hang events are made (an ended hang is due 50 ms after its
    /// end), else `SampleLog.drainIntervalMs`, which leaves the log far from full.
    package var drainIntervalMs: Int32 {
        live != nil ? 10 : SampleLog.drainIntervalMs(sessions: log.samplingSessions)
    }

    /// How long a parked reader sleeps at most: `SampleLog.idleParkNs`, or a
    /// tenth of the rotation interval, so a rotation is at most that late.
    package var parkLimitNs: UInt64 { SampleLog.parkLimitNs(rotationIntervalNs: sinks.settings.rotation?.intervalNs) }

    // MARK: The end

    /// Attach: stops the poller (nothing stays attached) and returns what the attach measured.
    package func stopPoller() -> AttachFigures? {
        defer { poller = nil }
        return poller?.stop()
    }

    /// True once the attached process has exited (false for the other back-ends).
    package var targetExited: Bool { poller?.targetExited ?? false }

    /// Stops reading the target's maps (its pid may be reused once it is reaped).
    package func stopWatchingModules() { collector.stopWatchingModules() }

    /// Ends the capture: nothing more is read.
    package func finish() {
        collector.stopWatchingModules()
        collector.finish()
    }

    /// The report of `run` (by default what was read so far) for `process`:
    /// the driver's `notes` first, then the sinks'.
    package func report(of run: CapturedRun? = nil, process: ProcessFacts, notes: [String] = []) -> Report {
        Self.report(config: config, run: run ?? collector.run, process: process, notes: notes + sinks.notes,
                    sourceLines: sourceLines)
    }

    /// The report, built outside any session (a driver that took `run` and
    /// the notes under its lock builds it after letting go).
    package static func report(config: CaptureConfig, run: CapturedRun, process: ProcessFacts, notes: [String],
                               sourceLines: SourceLineResolver?) -> Report {
        ReportBuilder(config: config, sourceLines: sourceLines).build(run: run, process: process, extraNotes: notes)
    }
}
