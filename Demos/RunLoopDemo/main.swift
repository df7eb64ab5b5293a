// RunLoopDemo: a Foundation RunLoop.main program with known hangs, used by the
// hangwatch tests, benchmarks and Quick start.
//
//   RunLoopDemo [--scenario NAME] [--measure FILE] [--pid-file FILE] [--library REPORT.json [--on-hang FILE]] [--verbose]
//
// Work is scheduled as Timers on RunLoop.main; the loop below runs the main run
// loop until the last timer says it is done. Each piece of work is a named
// @inline(never) function, timed with CLOCK_MONOTONIC, and (with --measure)
// logged as `<function> <startNs> <endNs> <durationMs>`. Nothing is ever
// written to stdout.

import Foundation
import DemoSupport
#if canImport(Glibc)
import Glibc
#endif

let options = parseOptions(CommandLine.arguments)
verboseEnabled = options.verbose
if let path = options.measurePath { openMeasureFile(path) }
if let path = options.pidPath { writeFileAtomically(path, "\(getpid())\n") }
log("scenario \(options.scenario)")
if let report = options.libraryReportPath {
    startLibraryMode(report: report, onHangLog: options.onHangLog)
}

switch options.scenario {
case "standard":
    runSequence([
        Step("parseLargeDocument") { parseLargeDocument() },
        Step("smallUpdate") { smallUpdate() },
        Step("renderThumbnails") { renderThumbnails() },
        Step("smallUpdate") { smallUpdate() },
        Step("refreshCache") { refreshCache() },
        Step("smallUpdate") { smallUpdate() },
        Step("smallUpdate") { smallUpdate() },
        Step("smallUpdate") { smallUpdate() },
    ])

case "blocked":
    runSequence([
        Step("waitForDisk") { waitForDisk() },
        Step("waitForSocket") { waitForSocket() },
    ])

case "qsort":
    runSequence([Step("sortRecords") { sortRecords() }])

case "kill":
    let hangFile = options.pidPath.map { $0 + ".hang" }
    // A short hang that ends first, then the spin the test kills the program in.
    runSequence([
        Step("shortStall") { shortStall() },
        Step("spinForever") { spinForever(hangFile: hangFile) },
    ], firstDelayMs: 200)

case "exit":
    exitStatus = 3
    runSequence([Step("shortStall") { shortStall() }])

case "launch":
    // Before the run loop starts: part of launch, not of any run-loop callback.
    runMeasured(Step("loadConfiguration") { loadConfiguration() })
    runSequence([Step("handleRequest") { handleRequest() }])

case "fork":
    // The child runs while the run loop idles; it is reaped by a cheap 20 ms
    // polling timer, then the parent has one hang of its own.
    after(idleGapMs) {
        spawnChild(["/bin/sh", "-c", "sleep 0.3"]) {
            runSequence([Step("parentWork") { parentWork() }])
        }
    }

case "service":
    // A long-running service: one request a second hangs the loop, in one of
    // four ways (three CPU-bound of different lengths, one blocked in usleep),
    // so rotation and reader memory can be watched over minutes.
    // The first request comes from the running loop, so it is a hang, not launch.
    let endNs = monotonicNs() + UInt64(options.seconds * 1e9)
    after(idleGapMs) { serveEverySecond(until: endNs, request: 0) }

case "deadlock":
    // A two-lock cycle on the main thread; the program exits 700 ms into it (Deadlock.swift).
    startDeadlock()

default:
    usageExit("unknown scenario: \(options.scenario)")
}

while !runLoopDone {
    _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 1.0))
}
log("exit \(exitStatus)")
if measureFd >= 0 { close(measureFd) }
exit(exitStatus)
