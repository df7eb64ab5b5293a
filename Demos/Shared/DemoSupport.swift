// Shared by the dispatch demos: option parsing, a unit of real CPU work, and
// the measure-file line `<name> <startNs> <endNs> <durationMs>` that tests
// compare hangwatch's durations with.
#if canImport(Glibc)
import Glibc
#endif

public struct DemoOptions: Sendable {
    public var measureFile: String?
    /// --library REPORT.json: watch itself with the HangWatch library instead of `hangwatch run`.
    public var libraryReport: String?
    /// --on-hang FILE (with --library): the onHang callback logs each hang there.
    public var onHangLog: String?
    public init(_ args: [String]) {
        var i = 1
        while i < args.count {
            if args[i] == "--measure", i + 1 < args.count { measureFile = args[i + 1]; i += 1 }
            else if args[i] == "--library", i + 1 < args.count { libraryReport = args[i + 1]; i += 1 }
            else if args[i] == "--on-hang", i + 1 < args.count { onHangLog = args[i + 1]; i += 1 }
            i += 1
        }
        // Pay the measure line's first-use costs (string interpolation's generic
        // metadata, the first open and write) now, not inside the first piece of
        // work's busy period: on a cold machine they took milliseconds there,
        // after the work's end was read (CI measured a WaitDemo hang 5.6 ms
        // longer than its bracket).
        appendMeasureLine("warm-up \(monotonicNs()) \(monotonicNs()) \(Double(monotonicNs() % 1000) / 1e6)",
                          to: "/dev/null")
    }
}

public func monotonicNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// About a few microseconds of arithmetic the optimizer cannot drop.
@inline(never) public func mixChunk(_ seed: UInt64) -> UInt64 {
    var x = seed | 1
    for _ in 0..<2000 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
    return x
}

/// Times one piece of work and appends its line to the measure file.
public struct MeasuredWork {
    let name: String
    let measure: String?
    let start = monotonicNs()
    public init(name: String, measure: String?) {
        self.name = name
        self.measure = measure
    }
    public var elapsedMs: Double { Double(monotonicNs() - start) / 1e6 }
    public func finish(result: UInt64) {
        let end = monotonicNs()
        let ms = Double(end - start) / 1e6
        appendMeasureLine("\(name) \(start) \(end) \(ms)", to: measure)
        if result == 0 { _ = write(2, "", 0) }
    }
}

/// Appends `line` and a newline to the measure file at `path` (nothing without one).
public func appendMeasureLine(_ line: String, to path: String?) {
    guard let path else { return }
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    guard fd >= 0 else { return }
    _ = (line + "\n").withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
