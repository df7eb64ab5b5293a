import CHangWatchEngine
import Foundation
import HangWatchModel
import HangWatchRender

/// The report on demand, and the frame monitors it gathers.
extension HangWatcher {
    /// The report so far: hangs up to now, with their call trees. With a frame
    /// deadline (`HANGWATCH_FRAME_MS`), each loop writes its frames in batches (64
    /// frames, or a quarter second after the oldest, checked as each frame ends): a
    /// loop on another thread may still hold up to 63 frames this report does not have,
    /// for as long as that loop stays idle. The calling thread's own loop is complete.
    public func report() -> Report {
        hw_flush_own_frames() // the calling thread's loop, if it is one: its frames so far
        var report = capture.report(process: ProcessClock.facts(startNs: startNs, endNs: ProcessClock.monotonicNs()),
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
