#if canImport(Glibc)
import Glibc
#endif

/// Writes the watcher's report when the process exits normally (exit() or
/// returning from main), to the configured path.
enum ExitReport {
    static func install() {
        atexit {
            guard let watcher = HangWatcher.shared, let path = watcher.configuration.reportPath else { return }
            do {
                try watcher.writeReport(to: path)
            } catch {
                let line = "hangwatch: cannot write the report to \(path): \(error)\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
            }
        }
    }
}
