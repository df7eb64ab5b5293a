import Foundation
import HangWatch
import HangWatchModel
import HangWatchTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One of the host-safety programs in `Tests/safety`, compiled once per test
/// process and run both ways: plain, and under `hangwatch run`.
struct SafetyProgram {
    var path: String

    /// Compiles `Tests/safety/NAME.c` (cached: each program is built once per run).
    static func build(_ name: String, flags: [String] = [], libraries: [String] = []) throws -> SafetyProgram {
        SafetyProgram(path: try SafetyBuilds.shared.binary(name, flags: flags, libraries: libraries))
    }

    /// Runs the program without hangwatch, with its own measure file.
    func plain(_ args: [String], environment: [String: String]? = nil, timeout: TimeInterval = 60) throws -> PlainRun {
        let scratch = try TestPaths.scratch()
        let measure = scratch.appendingPathComponent("plain-measure.txt").path
        let result = try ProcessRunner.run(path, args + ["--measure", measure], environment: environment,
                                           timeout: timeout)
        return PlainRun(result: result, measured: MeasuredWork.parse(file: measure))
    }

    /// Runs the program under `hangwatch run` with a JSON report.
    func watched(_ args: [String], hangwatchArgs: [String] = [], timeout: TimeInterval = 60,
                 whileRunning: ((Process) -> Void)? = nil) throws -> HangwatchRun {
        try HangwatchRun.run(path, args, hangwatchArgs: hangwatchArgs, timeout: timeout, whileRunning: whileRunning)
    }
}

/// A plain run: what the program printed and measured.
struct PlainRun {
    var result: ProcessResult
    var measured: [MeasuredWork]
    func work(_ name: String) -> [MeasuredWork] { measured.filter { $0.name == name } }
}

/// Compiled safety programs, by name and flags.
final class SafetyBuilds: @unchecked Sendable {
    static let shared = SafetyBuilds()
    private let lock = NSLock()
    private var built: [String: String] = [:]
    private var directory: URL?

    func binary(_ name: String, flags: [String], libraries: [String]) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let key = ([name] + flags + libraries).joined(separator: " ")
        if let path = built[key] { return path }
        let root = try directory ?? TestPaths.scratch()
        directory = root
        // One directory per build, so the binary keeps its own name (the main thread's name in reports).
        let dir = root.appendingPathComponent("\(built.count)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = TestPaths.packageRoot.appendingPathComponent("Tests/safety/\(name).c").path
        let path = try ProcessRunner.compileC(source, into: dir, name: name, flags: ["-Wall"] + flags,
                                              libraries: libraries)
        built[key] = path
        return path
    }
}

extension ProcessResult {
    /// The stdout lines, for messages.
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Assertions shared by the host-safety suites.
enum Safety {
    /// The whole run samples running threads with SIGPROF (HANGWATCH_SAMPLER=signal:
    /// the sanitized phase of `make test` runs the fallback sampler).
    static let signalSampler = getenv("HANGWATCH_SAMPLER").map { String(cString: $0) } == "signal"

    /// The report's note when running threads were sampled with signals although the
    /// kernel's sampler was asked for (perf_event_open refused), if any.
    static func samplerFallback(_ report: Report) -> String? {
        report.notes.first { $0.contains("sampled with SIGPROF") }
    }

    /// The flags that compile a C file against the toolchain's libdispatch
    /// with gcc (its headers test clang's `__has_feature`).
    static let dispatchFlags = ["-I/opt/swift/usr/lib/swift", "-D__has_feature(x)=0", "-D__has_extension(x)=0"]
    static let dispatchLibraries = ["-L/opt/swift/usr/lib/swift/linux", "-Wl,-rpath,/opt/swift/usr/lib/swift/linux",
                                    "-ldispatch"]

    /// Why two runs differ, or nil when the program saw the same thing both ways.
    static func difference(plain: ProcessResult, watched: ProcessResult) -> String? {
        if plain.status == watched.status && plain.stdout == watched.stdout { return nil }
        return """
            plain run: status \(plain.status)
            \(plain.stdout)
            under hangwatch: status \(watched.status)
            \(watched.stdout)
            hangwatch stderr: \(watched.stderr.suffix(600))
            """
    }

    /// The hangs of a report on the thread named `name`.
    static func hangs(_ report: Report, thread name: String) -> [Hang] {
        report.hangs.filter { $0.thread.name == name }
    }

    /// One line per hang, for messages.
    static func describe(_ report: Report) -> String {
        let hangs = report.hangs.map {
            "\($0.thread.name)(\($0.thread.tid)) \(String(format: "%.1f", $0.durationMs)) ms"
                + "\($0.inProgress ? " in progress" : "") \($0.sampleCount) samples \($0.kind.rawValue)"
                + ($0.cpuMs.map { String(format: " (cpu %.1f ms", $0) } ?? "")
                + ($0.runnableMs.map { String(format: ", runnable %.1f ms", $0) } ?? "") + ($0.cpuMs == nil ? "" : ")")
                + ($0.blockedIn.map { " in \($0)" } ?? "")
        }
        return "hangs: [\(hangs.joined(separator: ", "))] notes: \(report.notes)"
    }

    /// Every symbol of a hang's call tree.
    static func symbols(_ hang: Hang) -> [String] { hang.callTree?.allSymbols ?? [] }

    /// Matches each piece of measured work with one report hang of about the
    /// same duration (within `tolerance` ms), on `thread` when given. Returns
    /// the unmatched work and the report hangs left over (phantoms).
    static func match(_ work: [MeasuredWork], in hangs: [Hang], toleranceMs tolerance: Double,
                      thread: ((MeasuredWork) -> String)? = nil) -> (lost: [MeasuredWork], phantoms: [Hang]) {
        var left = hangs
        var lost: [MeasuredWork] = []
        for item in work {
            let candidates = left.indices.filter { i in
                abs(left[i].durationMs - item.durationMs) <= tolerance
                    && (thread.map { left[i].thread.name == $0(item) } ?? true)
            }
            guard let best = candidates.min(by: {
                abs(left[$0].durationMs - item.durationMs) < abs(left[$1].durationMs - item.durationMs)
            }) else {
                lost.append(item)
                continue
            }
            left.remove(at: best)
        }
        return (lost, left)
    }

    /// Like `match`, for work that is a hang by design (`work`, always
    /// required) plus `incidental` work that becomes a hang only when a busy
    /// machine stretches it: required from 105 ms, allowed from 95 ms.
    static func check(_ report: Report, work: [MeasuredWork], incidental: [MeasuredWork] = [],
                      toleranceMs tolerance: Double) -> (lost: [MeasuredWork], phantoms: [Hang]) {
        let (lost, extra) = match(work + incidental.filter { $0.durationMs >= 105 }, in: report.hangs,
                                  toleranceMs: tolerance)
        let allowed = incidental.filter { $0.durationMs >= 95 && $0.durationMs < 105 }
        return (lost, match(allowed, in: extra, toleranceMs: tolerance).phantoms)
    }
}
