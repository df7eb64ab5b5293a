// Support code for RunLoopDemo: options, the monotonic clock, the measure file,
// the pid file and the one-shot timer helper used by every scenario.
//
// Nothing here writes to stdout. Diagnostics go to stderr, and only with --verbose.

import CoreFoundation
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Options

struct Options: Sendable {
    var scenario = "standard"
    var measurePath: String?
    var pidPath: String?
    var verbose = false
    /// --library FILE: watch itself with the HangWatch library and write its JSON report to FILE at exit.
    var libraryReportPath: String?
    /// --on-hang FILE (with --library): the onHang callback logs each hang there.
    var onHangLog: String?
    /// --seconds N (service scenario): how long the service runs.
    var seconds = 10.0
}

let knownScenarios = ["standard", "blocked", "qsort", "kill", "exit", "launch", "fork", "service", "deadlock"]

let usageText = """
    usage: RunLoopDemo [--scenario NAME] [--measure FILE] [--pid-file FILE] [--library FILE [--on-hang FILE]] [--seconds N] [--verbose]
      scenarios: \(knownScenarios.joined(separator: ", ")) (default: standard)
      --measure FILE   one line per piece of work: <function> <startNs> <endNs> <durationMs>
                       (CLOCK_MONOTONIC nanoseconds, duration in ms with 3 decimals)
      --pid-file FILE  write the process id at startup (kill scenario: also <FILE>.hang)
      --library FILE   watch itself with the HangWatch library; JSON report to FILE at exit
      --on-hang FILE   (with --library) the onHang callback logs one line per hang to FILE
      --seconds N      (service) run for N seconds, one hang a second (default 10)
      --varied         (service) every hang walks random call paths: a new stack nearly every sample
      --verbose        diagnostics on stderr

    """

func parseOptions(_ args: [String]) -> Options {
    var options = Options()
    var i = 1
    func value(_ flag: String) -> String {
        guard i + 1 < args.count else { usageExit("\(flag) needs a value") }
        i += 1
        return args[i]
    }
    while i < args.count {
        let arg = args[i]
        switch arg {
        case "--scenario": options.scenario = value(arg)
        case "--measure": options.measurePath = value(arg)
        case "--pid-file": options.pidPath = value(arg)
        case "--library": options.libraryReportPath = value(arg)
        case "--on-hang": options.onHangLog = value(arg)
        case "--varied": variedStacks = true
        case "--seconds":
            let text = value(arg)
            guard let n = Double(text), n > 0, n <= 31 * 86400 else { usageExit("invalid --seconds '\(text)'") }
            options.seconds = n
        case "--verbose", "-v": options.verbose = true
        case "--help", "-h":
            writeStderr(usageText)
            exit(0)
        default:
            if arg.hasPrefix("--scenario=") { options.scenario = String(arg.dropFirst("--scenario=".count)) }
            else if arg.hasPrefix("--measure=") { options.measurePath = String(arg.dropFirst("--measure=".count)) }
            else if arg.hasPrefix("--pid-file=") { options.pidPath = String(arg.dropFirst("--pid-file=".count)) }
            else { usageExit("unknown argument: \(arg)") }
        }
        i += 1
    }
    guard knownScenarios.contains(options.scenario) else { usageExit("unknown scenario: \(options.scenario)") }
    return options
}

func usageExit(_ message: String) -> Never {
    writeStderr("RunLoopDemo: \(message)\n" + usageText)
    exit(2)
}

// MARK: - Output helpers (stderr only)

func writeStderr(_ text: String) {
    var bytes = Array(text.utf8)
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + off, $0.count - off) }
        if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
        off += n
    }
}

nonisolated(unsafe) var verboseEnabled = false

func log(_ text: @autoclosure () -> String) {
    guard verboseEnabled else { return }
    writeStderr("RunLoopDemo[\(getpid())] \(msString(monotonicNs())) \(text())\n")
}

// MARK: - Clock

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func ms(_ ns: UInt64) -> Double { Double(ns) / 1e6 }

/// Nanoseconds as milliseconds with exactly three decimals ("420.026"), without
/// String(format:) (whose first use costs Foundation set-up time).
func msString(_ ns: UInt64) -> String {
    let us = (ns + 500) / 1000
    let frac = String(us % 1000)
    return "\(us / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
}

// MARK: - Files

/// Writes the whole string with write(2) on an already open descriptor.
func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        off += n
    }
}

/// Creates `path` atomically (write to a temporary name, then rename), so a
/// reader polling for the file never sees it half written.
func writeFileAtomically(_ path: String, _ text: String) {
    let tmp = path + ".tmp.\(getpid())"
    let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
        writeStderr("RunLoopDemo: cannot create \(tmp): \(String(cString: strerror(errno)))\n")
        return
    }
    writeAll(fd, text)
    close(fd)
    if rename(tmp, path) != 0 {
        writeStderr("RunLoopDemo: cannot rename \(tmp) to \(path): \(String(cString: strerror(errno)))\n")
        unlink(tmp)
    }
}

/// The --measure file. Each line is written with a single write(2) as soon as
/// the work it describes has finished, so it survives a SIGKILL.
nonisolated(unsafe) var measureFd: Int32 = -1

func openMeasureFile(_ path: String) {
    measureFd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
    if measureFd < 0 {
        writeStderr("RunLoopDemo: cannot open measure file \(path): \(String(cString: strerror(errno)))\n")
        exit(2)
    }
}

func measureLine(_ line: String) {
    if measureFd >= 0 { writeAll(measureFd, line + "\n") }
}

/// `<functionName> <startNs> <endNs> <durationMs>`
func recordWork(_ name: String, _ start: UInt64, _ end: UInt64) {
    let line = "\(name) \(start) \(end) \(msString(end &- start))"
    measureLine(line)
    log("work " + line)
}

// MARK: - Run loop plumbing

/// Set by the final timer; the main loop in main.swift runs until it is true.
nonisolated(unsafe) var runLoopDone = false
nonisolated(unsafe) var exitStatus: Int32 = 0

/// Schedules `body` once on RunLoop.main, `delayMs` from now.
func after(_ delayMs: Double, _ body: @escaping @Sendable () -> Void) {
    // Not Timer(timeInterval:repeats:block:): swift-corelibs-foundation gives
    // that one a fire date of *now*, so it would fire immediately.
    let timer = Timer(fire: Date(timeIntervalSinceNow: delayMs / 1000.0), interval: 0, repeats: false) { _ in body() }
    RunLoop.main.add(timer, forMode: .default)
}

/// Idle gap between two pieces of work (timer spacing, measured from the end
/// of one piece to the start of the next).
let idleGapMs = 160.0
/// Time from the last piece of work to the exit of the run loop.
let exitDelayMs = 200.0

struct Step: Sendable {
    var name: String
    var work: @Sendable () -> Void
    init(_ name: String, _ work: @escaping @Sendable () -> Void) {
        self.name = name
        self.work = work
    }
}

/// Runs `step` in a timer callback, measured with CLOCK_MONOTONIC around the work.
@inline(__always)
func runMeasured(_ step: Step) {
    let start = monotonicNs()
    step.work()
    let end = monotonicNs()
    recordWork(step.name, start, end)
}

/// Runs the steps one per timer callback, each `idleGapMs` after the previous
/// one ended (the first `firstDelayMs` after the run loop starts), then stops
/// the run loop `exitDelayMs` after the last one.
func runSequence(_ steps: [Step], firstDelayMs: Double = idleGapMs, index: Int = 0) {
    guard index < steps.count else {
        after(exitDelayMs) { finish() }
        return
    }
    after(index == 0 ? firstDelayMs : idleGapMs) {
        runMeasured(steps[index])
        runSequence(steps, index: index + 1)
    }
}

func finish() {
    log("finishing")
    runLoopDone = true
    // A timer firing does not make RunLoop.run(mode:before:) return (only a
    // handled source does), so stop the run loop explicitly.
    CFRunLoopStop(CFRunLoopGetMain())
}

// MARK: - Work helpers

/// Keeps results alive so the optimizer cannot delete the work.
nonisolated(unsafe) var blackHole: UInt64 = 0

@inline(__always)
func consume(_ value: UInt64) { blackHole = blackHole &+ value }
