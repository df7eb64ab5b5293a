import CHangWatchEngine
import Foundation
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
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
    /// The capture, shared by its reader thread and report callers.
    private let capture: InProcessCapture
    private let startNs: UInt64
    /// The process that started the watcher (a forked child has another pid).
    let ownerPid = getpid()
    private let frameMonitors = Mutex<[FrameMonitor]>([])
    private let delivery: HangEventDelivery?

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
        do {
            capture = try InProcessCapture(
                config: configuration.capture, outputs: configuration.liveOutputs(), wantsEvents: onHang != nil,
                watchLoops: !configuration.capture.threadPatterns.isEmpty, watchPool: configuration.watchPool,
                process: Self.processRecord(startNs: startNs), startNs: startNs)
        } catch {
            throw .engine(error.description)
        }
        let delivery = onHang.map(HangEventDelivery.init)
        self.delivery = delivery
        if configuration.observeMainRunLoop { MainRunLoopHeartbeat.install() }
        capture.startReader { events in delivery?.deliverEnded(events) }
        if configuration.reportPath != nil || capture.makesEvents { ExitReport.install() }
    }

    /// At exit: the hangs not told yet (ended in the last drain interval, or
    /// still running) go to the stream, the callback and the exporter, and the
    /// callback and the exporter get a bounded time to finish (1 s and 2 s).
    func finishEvents() {
        // Told whether or not there is a callback: the stream's last summary is written here.
        let events = capture.finalEvents()
        delivery?.deliverEnded(events)
        delivery?.flushAtExit()
        _ = capture.exporter?.flush(timeoutNs: 2_000_000_000)
    }

    /// This process, as events name it (no end yet).
    private static func processRecord(startNs: UInt64) -> ProcessInfoRecord {
        ProcessInfoRecord(pid: Int(getpid()), executable: ProcessClock.executablePath(),
                          arguments: Array(CommandLine.arguments.dropFirst()), exitCode: nil, signal: nil,
                          wallMs: 0, startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs))
    }

    /// This process from `startNs` to `endNs`, as the report names it.
    private static func processFacts(startNs: UInt64, endNs: UInt64) -> ProcessFacts {
        var facts = ProcessFacts(pid: Int(getpid()), executable: ProcessClock.executablePath(),
                                 arguments: Array(CommandLine.arguments.dropFirst()),
                                 exitCode: nil, signal: nil, startNs: startNs, endNs: endNs)
        facts.startUnixNs = SystemClock.unixNs(ofMonotonic: startNs)
        return facts
    }

    /// The report so far: hangs up to now, with their call trees. With a frame
    /// deadline (`HANGWATCH_FRAME_MS`), each loop writes its frames in batches (64
    /// frames, or a quarter second after the oldest, checked as each frame ends): a
    /// loop on another thread may still hold up to 63 frames this report does not have,
    /// for as long as that loop stays idle. The calling thread's own loop is complete.
    public func report() -> Report {
        hw_flush_own_frames() // the calling thread's loop, if it is one: its frames so far
        var report = capture.report(process: Self.processFacts(startNs: startNs, endNs: ProcessClock.monotonicNs()),
                                    notes: delivery?.notes ?? [])
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
