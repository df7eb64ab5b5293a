import Foundation
import HangWatchCapture
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
    let capture: InProcessCapture
    let startNs: UInt64
    /// The process that started the watcher (a forked child has another pid).
    let ownerPid = getpid()
    let frameMonitors = Mutex<[FrameMonitor]>([])
    let delivery: HangEventDelivery?

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
                process: ProcessClock.thisProcess(startNs: startNs), startNs: startNs)
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
}
