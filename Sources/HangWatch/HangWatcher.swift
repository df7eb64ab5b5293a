import CHangWatchEngine
import Foundation
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchLive
import HangWatchRender
import HangWatchSession
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The in-process way in: `try HangWatcher.start()` from the main thread runs
/// the same engine as `hangwatch run` inside this process, and the report is
/// available at any time as the same `Report` value the JSON file holds.
///
/// A background reader thread drains the engine's log every 50 ms and unwinds
/// samples there, never on the watched threads.
public final class HangWatcher: Sendable {
    /// The watcher started in this process, if any (one engine per process).
    public static var shared: HangWatcher? { current.withLock { $0 } }
    private static let current = Mutex<HangWatcher?>(nil)

    /// The configuration the watcher was started with.
    public let configuration: Configuration
    let log: LogBox
    /// The capture, shared by the reader thread and report callers.
    private let state: Mutex<CaptureSession>
    private let startNs: UInt64
    /// The process that started the watcher (a forked child has another pid).
    let ownerPid = getpid()
    private let frameMonitors = Mutex<[FrameMonitor]>([])
    private let delivery: HangEventDelivery?
    private let exporter: OTLPExporter?

    /// Why `start(_:)` did not start the watcher.
    public enum StartError: Error, Equatable, CustomStringConvertible {
        case alreadyStarted, notOnMainThread, engine(String)
        /// One line for the user that says why.
        public var description: String {
            switch self {
            case .alreadyStarted: return "hangwatch is already running in this process"
            case .notOnMainThread: return "HangWatcher.start() must be called on the main thread"
            case let .engine(why): return "hangwatch engine did not start: \(why)"
            }
        }
    }

    /// Starts watching. Call once, early, on the main thread.
    ///
    /// `onHang`, when given, is called once for each hang when it ends
    /// (reported or not), with the hang as the report holds it. It runs on a
    /// thread of hangwatch's ("hangwatch-on-hang"), never on the hung thread,
    /// about 50–100 ms after the hang ended (the reader's drain interval plus
    /// the time the last samples take to settle); at exit, hangs not told yet
    /// are passed to it and it gets up to 1 s to finish. A callback that blocks
    /// delays only the callbacks after it; up to 256 hangs wait for it, later
    /// ones are dropped and counted in the report's notes.
    @discardableResult
    public static func start(_ configuration: Configuration = .fromEnvironment(),
                             onHang: (@Sendable (HangEvent) -> Void)? = nil) throws(StartError) -> HangWatcher {
        try current.withLock { (slot: inout HangWatcher?) throws(StartError) -> HangWatcher in
            if slot != nil { throw .alreadyStarted }
            guard Thread.isMainThread else { throw .notOnMainThread }
            let watcher = try HangWatcher(configuration, onHang: onHang)
            slot = watcher
            return watcher
        }
    }

    private init(_ configuration: Configuration, onHang: (@Sendable (HangEvent) -> Void)?) throws(StartError) {
        self.configuration = configuration
        startNs = ProcessClock.processStartNs()
        // Everything that can fail is checked before any thread is started.
        let session: CaptureSession
        do {
            session = try CaptureSession(config: configuration.capture, outputs: configuration.liveOutputs(),
                                         backend: .inProcess, wantsEvents: onHang != nil)
            // Loops the program does not mark (threads the list names) and the
            // cooperative pool get the preload agent's wrappers.
            // The exec family always: a sampling signal pending at an exec kills the new image.
            var interposing: UInt32 = HW_INPROCESS_EXEC
            if !configuration.capture.threadPatterns.isEmpty { interposing |= HW_INPROCESS_WAITS }
            if configuration.watchPool { interposing |= HW_INPROCESS_POOL }
            try session.startEngine(interposing: interposing)
        } catch {
            throw .engine(error.description)
        }
        delivery = onHang.map(HangEventDelivery.init)
        exporter = session.sinks.exporter
        // dlopen'ed images are learned from /proc/self/maps by the reader thread.
        session.watch(Self.processRecord(startNs: startNs), startNs: startNs)
        log = LogBox(session.log)
        let wantsEvents = session.makesEvents
        state = Mutex(session)
        if configuration.observeMainRunLoop { MainRunLoopHeartbeat.install() }
        startReader()
        if configuration.reportPath != nil || wantsEvents { ExitReport.install() }
    }

    private func startReader() {
        let thread = Thread { [self] in
            hw_never_watch_this_thread() // its waits pass through the library's wrappers: never a loop's
            while true {
                deliver(drainAndTakeEvents())
                if parked() { continue }
                usleep(50_000) // the 32 MiB ring holds seconds of samples; waking less keeps idle cost down
            }
        }
        thread.name = "hangwatch-reader"
        thread.start()
    }

    /// While the engine samples no thread and no hang event is pending, the
    /// reader sleeps until sampling starts (at most a second, or a tenth of
    /// the event file's rotation interval) instead of waking every 50 ms.
    /// Returns false, at once, when it may not.
    @inline(never)
    private func parked() -> Bool {
        let (mayPark, limitNs, epoch) = state.withLock { s in (s.mayPark, s.parkLimitNs, s.readerEpoch) }
        if !mayPark { return false }
        return log.sampleLog.parkReader(epoch: epoch, stop: nil, timeoutNs: limitNs)
    }

    /// Drains, then makes the hang events due now and tells the event file and
    /// the exporter (under the state lock, so events leave in order).
    /// Not inlined into the reader's endless loop: there, the release
    /// optimizer's loop-invariant code motion never finished on its body.
    /// With `final` (at exit), every hang not told yet is told now.
    @inline(never)
    private func drainAndTakeEvents(final: Bool = false) -> [HangEvent] {
        state.withLock { s in final ? s.tellFinal(writerGone: false) : s.drainAndTell() }
    }

    /// Hands the hangs that ended to the `onHang` callback.
    @inline(never)
    private func deliver(_ events: [HangEvent]) {
        guard let delivery else { return }
        let ended = events.filter { $0.phase == .ended }
        if !ended.isEmpty { delivery.deliver(ended) }
    }

    /// At exit: the hangs not told yet (ended in the last drain interval, or
    /// still running) go to the stream, the callback and the exporter, and the
    /// callback and the exporter get a bounded time to finish (1 s and 2 s).
    func finishEvents() {
        deliver(drainAndTakeEvents(final: true))
        if let delivery, !delivery.flush(timeoutNs: 1_000_000_000) {
            callbackStuckAtExit.store(true, ordering: .relaxed)
        }
        _ = exporter?.flush(timeoutNs: 2_000_000_000)
    }

    /// Set when the `onHang` callback had not returned after the 1 s the exit gives it.
    private let callbackStuckAtExit = Atomic<Bool>(false)

    /// This process, as events name it (no end yet).
    private static func processRecord(startNs: UInt64) -> ProcessInfoRecord {
        ProcessInfoRecord(pid: Int(getpid()), executable: ProcessClock.executablePath(),
                          arguments: Array(CommandLine.arguments.dropFirst()), exitCode: nil, signal: nil,
                          wallMs: 0, startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs))
    }

    /// The report so far: hangs up to now, with their call trees. With a frame
    /// deadline (`HANGWATCH_FRAME_MS`), each loop writes its frames in batches (64
    /// frames, or a quarter second after the oldest, checked as each frame ends): a
    /// loop on another thread may still hold up to 63 frames this report does not have,
    /// for as long as that loop stays idle. The calling thread's own loop is complete.
    public func report() -> Report {
        hw_flush_own_frames() // the calling thread's loop, if it is one: its frames so far
        let (run, sinkNotes) = state.withLock { s in
            s.drain()
            return (s.collector.snapshot(), s.sinks.notes)
        }
        let now = ProcessClock.monotonicNs()
        var facts = ProcessFacts(pid: Int(getpid()), executable: ProcessClock.executablePath(),
                                 arguments: Array(CommandLine.arguments.dropFirst()),
                                 exitCode: nil, signal: nil, startNs: startNs, endNs: now)
        facts.startUnixNs = SystemClock.unixNs(ofMonotonic: startNs)
        var notes: [String] = []
        if callbackStuckAtExit.load(ordering: .relaxed) {
            notes.append("the onHang callback had not returned at exit: hangwatch waited 1 s for it, then went on")
        }
        if let dropped = delivery?.dropped, dropped > 0 {
            notes.append("\(dropped) hangs were not passed to the onHang callback: \(HangEventDelivery.maxPending) were already waiting for it")
        }
        var report = CaptureSession.report(config: configuration.capture, run: run, process: facts,
                                           notes: notes + sinkNotes, sourceLines: nil)
        let monitored = frameMonitors.withLock { $0.compactMap { $0.statistics() } }
        if !monitored.isEmpty {
            report.frameLoops += monitored
            if report.frames == nil { report.frames = monitored.first }
        }
        return report
    }

    /// Writes the report now.
    public func writeReport(to path: String, format: ReportFormat? = nil) throws {
        let data = try (format ?? configuration.reportFormat).render(report())
        if path == "stderr" || path == "-" {
            FileHandle.standardError.write(data)
        } else {
            try data.write(to: URL(fileURLWithPath: path))
        }
    }

    func register(_ monitor: FrameMonitor) {
        frameMonitors.withLock { $0.append(monitor) }
    }
}

/// The log mapping, shared by the reader thread and report callers under the state lock.
final class LogBox: @unchecked Sendable {
    let sampleLog: SampleLog
    init(_ log: SampleLog) { sampleLog = log }
}
