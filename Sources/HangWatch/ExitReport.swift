import CHangWatchEngine
#if canImport(Glibc)
import Glibc
#endif

/// When the process exits normally (exit() or returning from main): tells
/// the hangs not told yet to the event stream, callback and exporter, then
/// writes the watcher's report to the configured path.
enum ExitReport {
    static func install() {
        atexit {
            // A forked child that calls exit() runs this hook on its copy of the
            // watcher: the stream, its rotation and the report are the parent's.
            guard let watcher = HangWatcher.shared, getpid() == watcher.ownerPid else { return }
            // The program's work ends where exit() began: the time hangwatch spends
            // below (the last hangs told, up to 1 s for a callback, the report) is
            // not a hang of the exiting thread's loop.
            hw_own_loop_waits()
            // The exiting thread's loop frames still buffered (loop threads that
            // ended wrote theirs as they exited), before the stream's summary and the report.
            hw_flush_own_frames()
            watcher.finishEvents()
            guard let path = watcher.configuration.reportPath else { return }
            do {
                try watcher.writeReport(to: path)
            } catch {
                let line = "hangwatch: cannot write the report to \(path): \(error)\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
            }
        }
    }
}
