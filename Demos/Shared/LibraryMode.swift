import HangWatch
#if canImport(Glibc)
import Glibc
#endif

/// Starts the in-process watcher when a demo runs with --library REPORT.json.
public func startLibraryModeIfAsked(_ options: DemoOptions) {
    guard let report = options.libraryReport else { return }
    var configuration = HangWatcher.Configuration.fromEnvironment()
    configuration.reportPath = report
    configuration.reportFormat = .json
    do {
        try HangWatcher.start(configuration)
    } catch {
        let line = "demo: \(error)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
}
