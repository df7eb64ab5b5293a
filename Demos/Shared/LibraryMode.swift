import HangWatch
#if canImport(Glibc)
import Glibc
#endif

/// Starts the in-process watcher when a demo runs with --library REPORT.json.
public func startLibraryModeIfAsked(_ options: DemoOptions) {
    guard let report = options.libraryReport else { return }
    startLibraryMode(report: report, onHangLog: options.onHangLog)
}

/// The in-process way in: one call; the JSON report is written to `report`
/// at exit. With `onHangLog`, the `onHang` callback appends one line per hang
/// there: `hang <id> <durationMs> <hungTid> <callbackTid> <onMainThread 0|1>`,
/// so a test can check it ran once per hang and off the hung thread.
public func startLibraryMode(report: String, onHangLog: String?) {
    var configuration = HangWatcher.Configuration.fromEnvironment()
    configuration.reportPath = report
    configuration.reportFormat = .json
    var onHang: (@Sendable (HangEvent) -> Void)?
    if let onHangLog { onHang = { event in logHang(event, to: onHangLog) } }
    do {
        try HangWatcher.start(configuration, onHang: onHang)
    } catch {
        let line = "demo: \(error)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
}

/// This thread's kernel id, from /proc/thread-self ("PID/task/TID"); Glibc's
/// gettid is not visible to Swift here.
func currentThreadId() -> Int32 {
    var buffer = [CChar](repeating: 0, count: 64)
    let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard n > 0 else { return -1 }
    let text = String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.split(separator: "/").last.flatMap { Int32($0) } ?? -1
}

/// Appends the callback's line for `event` to `path`.
@Sendable func logHang(_ event: HangEvent, to path: String) {
    let tid = currentThreadId()
    let line = "hang \(event.hang.id) \(event.hang.durationMs) \(event.hang.thread.tid) \(tid) \(tid == getpid() ? 1 : 0)\n"
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }
    _ = line.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
