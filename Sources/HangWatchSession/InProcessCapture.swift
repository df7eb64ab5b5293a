// The library's capture: one session in this process, read by a reader
// thread of its own and by report callers on any thread, under one lock.
// `HangWatcher` adds only what is the library's: the one-per-process slot,
// the onHang callback, frame monitors and the report at exit.

import CHangWatchEngine
import Foundation
import HangWatchAnalysis
import HangWatchCapture
import HangWatchLive
import HangWatchModel
import Synchronization

/// The in-process back-end's session, shared by its reader thread and the
/// threads that ask for reports.
package final class InProcessCapture: Sendable {
    /// The capture; every use takes the lock, so events leave in order.
    private let state: Mutex<CaptureSession>
    /// The log mapping, for parking the reader outside the lock.
    private let log: LogBox
    /// The configuration the capture runs with.
    package let config: CaptureConfig
    /// The OTLP exporter, when one was asked for (flushed at exit by the driver).
    package let exporter: OTLPExporter?
    /// Whether hang events are made (a sink, or `wantsEvents`).
    package let makesEvents: Bool

    /// Checks the configuration, starts the engine in this process with the
    /// wrappers asked for (`watchLoops`: waits of the threads the list names;
    /// `watchPool`: the cooperative pool's job hand-over), and watches
    /// `process`, started at `startNs`. No reader runs until `startReader`.
    package init(config: CaptureConfig, outputs: LiveOutputSettings, wantsEvents: Bool, watchLoops: Bool,
                 watchPool: Bool, process: ProcessInfoRecord, startNs: UInt64) throws(CaptureSessionError) {
        let session = try CaptureSession(config: config, outputs: outputs, backend: .inProcess, wantsEvents: wantsEvents)
        // The exec family always: a sampling signal pending at an exec kills the new image.
        var interposing: UInt32 = HW_INPROCESS_EXEC
        if watchLoops { interposing |= HW_INPROCESS_WAITS }
        if watchPool { interposing |= HW_INPROCESS_POOL }
        try session.startEngine(interposing: interposing)
        // dlopen'ed images are learned from /proc/self/maps by the reader thread.
        session.watch(process, startNs: startNs)
        self.config = config
        exporter = session.sinks.exporter
        makesEvents = session.makesEvents
        log = LogBox(session.log)
        state = Mutex(session)
    }

    /// Starts the reader thread: it drains the log, hands each turn's hang
    /// events to `deliver`, and sleeps 50 ms, or parks while nothing is sampled.
    package func startReader(deliver: @escaping @Sendable ([HangEvent]) -> Void) {
        let thread = Thread { [self] in
            hw_never_watch_this_thread() // its waits pass through the library's wrappers: never a loop's
            while true {
                deliver(drainAndTakeEvents())
                if parked() { continue }
                usleep(50_000) // the in-process log holds seconds of samples; waking less keeps idle cost down
            }
        }
        thread.name = "hangwatch-reader"
        thread.start()
    }

    /// At exit: every hang not told yet, told now (the sinks get them too).
    package func finalEvents() -> [HangEvent] { drainAndTakeEvents(final: true) }

    /// Everything read so far and the sinks' notes, taken under the lock; the
    /// report is built from them after it is let go.
    package func snapshot() -> (run: CapturedRun, sinkNotes: [String]) {
        state.withLock { s in
            s.drain()
            return (s.collector.snapshot(), s.sinks.notes)
        }
    }

    /// The report so far for `process`, with the driver's `notes` before the sinks'.
    package func report(process: ProcessFacts, notes: [String]) -> Report {
        let (run, sinkNotes) = snapshot()
        return CaptureSession.report(config: config, run: run, process: process, notes: notes + sinkNotes,
                                     sourceLines: nil)
    }

    /// While the engine samples no thread and no hang event is pending, the
    /// reader sleeps until sampling starts (at most `parkLimitNs`) instead of
    /// waking every 50 ms. Returns false, at once, when it may not.
    @inline(never)
    private func parked() -> Bool {
        let (mayPark, limitNs, epoch) = state.withLock { s in (s.mayPark, s.parkLimitNs, s.readerEpoch) }
        if !mayPark { return false }
        return log.sampleLog.parkReader(epoch: epoch, stop: nil, timeoutNs: limitNs)
    }

    /// Drains, then makes the hang events due now and tells the sinks (under
    /// the lock, so events leave in order); with `final`, every hang not told yet.
    /// Not inlined into the reader's endless loop: there, the release
    /// optimizer's loop-invariant code motion never finished on its body.
    @inline(never)
    private func drainAndTakeEvents(final: Bool = false) -> [HangEvent] {
        state.withLock { s in final ? s.tellFinal(writerGone: false) : s.drainAndTell() }
    }
}

/// The log mapping, shared by the reader thread and report callers.
final class LogBox: @unchecked Sendable {
    let sampleLog: SampleLog
    init(_ log: SampleLog) { sampleLog = log }
}
