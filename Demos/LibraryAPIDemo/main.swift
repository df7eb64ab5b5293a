// LibraryAPIDemo: the HangWatch library's public API from inside a program,
// with hangs and frames the program measures itself (Tests/IntegrationTests/LibraryAPITests.swift).
//
//   LibraryAPIDemo --scenario NAME [--measure FILE] [--library REPORT.json] [--out DIR]
//
// heartbeat  Two hand-written loops marked with LoopHeartbeat: the main thread
//            sleeps in usleep between willWait()/didWake(), thread "io-loop"
//            polls an idle pipe inside waiting { }. Measure lines mainLoopWork
//            and ioLoopWork, one per busy period.
//
// Each thread keeps its measure lines in memory and writes them from inside its
// loop's last wait (see MeasureLog).
// frames     Three named FrameMonitors at once: "render" on the main thread,
//            "audio" and "physics" on threads of their own. Measure lines
//            frame-<monitor>, one per frame, written after the last frame.
// on-demand  A loop on the main thread hangs three times (firstRequest,
//            secondRequest, thirdRequest); after the first and the second, thread
//            "reporter" calls report() and writeReport(to:format:) while the loop
//            waits for it: DIR/report-K.md and DIR/report-K.json, and a measure line
//            `report-K <hangCount> <durations,…|->` from the returned Report.
// env        HangWatcher.start() with no argument, so every setting comes from
//            HANGWATCH_*: loops on the main thread, "net-loop" and "disk-loop"
//            (which blocks SIGPROF), each with one stall among short busy periods.
//            Measure lines mainLoopWork, netLoopWork, diskLoopWork.
//
// --library starts the watcher with a JSON report at exit (as every demo's
// --library does); env ignores it. Nothing is written to stdout.
import DemoSupport
import Dispatch
import Foundation
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

/// The command line: `--scenario` and `--out`, plus DemoSupport's `--measure` and `--library`.
struct Arguments {
    var scenario = "heartbeat"
    var out: String?
    var demo: DemoOptions

    init(_ args: [String]) {
        demo = DemoOptions(args)
        var i = 1
        while i < args.count {
            if args[i] == "--scenario", i + 1 < args.count { scenario = args[i + 1]; i += 1 }
            else if args[i] == "--out", i + 1 < args.count { out = args[i + 1]; i += 1 }
            i += 1
        }
    }
}

/// One iteration of a hand-written loop: an idle wait of `idleMs`, then `busyMs` of work.
struct Step: Sendable {
    var idleMs: Int
    var busyMs: Double
}

/// Writes `text` to stderr in one call (this demo never writes to stdout).
func complain(_ text: String) {
    let line = "LibraryAPIDemo: \(text)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// What a thread started by `startThread` runs, handed to it through pthread_create's argument.
final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Runs `body` on a new thread named `name`; `join` it. A pthread, not a Foundation
/// Thread: joining one waits until it has exited, so the engine has written the
/// frames it buffered for the thread (at its exit) before the program goes on to exit.
func startThread(named name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { argument in
        guard let argument else { return nil }
        let start = Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue()
        nameCurrentThread(start.name)
        start.body()
        return nil
    }, start)
    guard rc == 0 else { complain("pthread_create: \(rc)"); exit(1) }
    return thread
}

/// Waits until `thread` has exited.
func join(_ thread: pthread_t) {
    _ = pthread_join(thread, nil)
}

/// Names the calling OS thread through /proc/thread-self/comm, before `body` makes
/// any heartbeat (the watcher reads the name then). Not `Thread.name`: Foundation
/// applies it to the OS thread only when the Thread already knows its pthread, which
/// races with the thread's start (a run saw the process name instead).
/// `pthread_setname_np` is not visible from Swift's Glibc module.
func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { complain("cannot name thread \(name): errno \(errno)"); exit(1) }
    let written = name.withCString { write(fd, $0, strlen($0)) }
    close(fd)
    if written < 0 { complain("cannot name thread \(name): errno \(errno)"); exit(1) }
}

/// One thread's own measurements (`name start end ms` lines), kept in memory while
/// its loop runs and appended to the measure file in one write from inside the
/// loop's last wait. Not written as each piece of work ends (DemoSupport's
/// MeasuredWork): a file write inside a busy period can block on a loaded machine,
/// and the heartbeat counts that time while the program's clock around the work
/// does not (a run saw a 201 ms hang where the program had measured 25 ms of work,
/// the write after it included). One per thread.
final class MeasureLog {
    private let path: String?
    private var lines = ""
    init(_ path: String?) { self.path = path }

    func add(_ name: String, _ startNs: UInt64, _ endNs: UInt64) {
        lines += "\(name) \(startNs) \(endNs) \(String(format: "%.3f", Double(endNs - startNs) / 1e6))\n"
    }

    /// Appends the lines (one O_APPEND write, so threads never interleave within it).
    func save() {
        guard let path, !lines.isEmpty else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { complain("cannot open \(path): errno \(errno)"); return }
        _ = lines.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        lines = ""
    }
}

/// Spins for `ms` of wall time and logs it as `name`. A call tree names the
/// scenario function above it: work functions that differed only in a name
/// would be merged into one by the optimizer.
@inline(never) func busyWork(_ name: String, _ ms: Double, _ log: MeasureLog) -> UInt64 {
    let start = monotonicNs()
    var digest = UInt64(ms * 1000)
    while Double(monotonicNs() - start) / 1e6 < ms { digest = mixChunk(digest) }
    log.add(name, start, monotonicNs())
    return digest
}

/// Marks `wait` as the loop's idle time with `waiting { }`; without a heartbeat
/// (the watcher does not watch this thread) the loop runs the same, unmarked.
func idle(_ heartbeat: LoopHeartbeat?, _ wait: () -> Void) {
    if let heartbeat { heartbeat.waiting(wait) } else { wait() }
}

/// A loop that waits with `usleep` between `willWait()` and `didWake()`: the
/// other half of the heartbeat API. A first wait ends the launch period, so every
/// step's work is a busy period of its own. The loop ends in a wait that never
/// wakes: `finally` (writing the measurements, joining the other loops' threads)
/// runs inside it, so the main thread's time after its last step is idle, not a hang.
func sleepingLoop(_ steps: [Step], _ heartbeat: LoopHeartbeat?, finally: () -> Void,
                  work: (Double) -> UInt64) -> UInt64 {
    var sink: UInt64 = 0
    for step in steps {
        heartbeat?.willWait()
        usleep(UInt32(step.idleMs * 1000))
        heartbeat?.didWake()
        sink &+= work(step.busyMs)
    }
    heartbeat?.willWait()
    usleep(30_000)
    finally()
    return sink
}

/// A loop that waits in `poll` on a pipe nobody writes to, each wait inside
/// `waiting { }`; `finally` (writing the measurements) runs inside the last wait.
func pollingLoop(_ steps: [Step], _ heartbeat: LoopHeartbeat?, finally: () -> Void,
                 work: (Double) -> UInt64) -> UInt64 {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { complain("pipe: \(errno)"); exit(1) }
    defer { close(fds[0]); close(fds[1]) }
    func wait(_ ms: Int, then: () -> Void = {}) {
        var entry = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        idle(heartbeat) {
            _ = poll(&entry, 1, Int32(ms))
            then()
        }
    }
    var sink: UInt64 = 0
    for step in steps {
        wait(step.idleMs)
        sink &+= work(step.busyMs)
    }
    wait(30, then: finally)
    return sink
}

/// Starts the watcher configured in code with a JSON report at exit, or exits 2 without `--library`.
func startConfiguredInCode(_ arguments: Arguments) {
    guard let report = arguments.demo.libraryReport else { complain("--library REPORT.json is required"); exit(2) }
    startLibraryMode(report: report, onHangLog: nil)
}

// MARK: - Scenarios

/// Busy periods of 130 and 280 ms on the main thread, 160 and 240 ms on
/// "io-loop"; idle waits of 250–350 ms on both, which are not hangs.
func heartbeatScenario(_ measure: String?) -> UInt64 {
    let io = startThread(named: "io-loop") {
        let heartbeat = LoopHeartbeat()
        if heartbeat == nil { complain("io-loop is not watched") }
        let log = MeasureLog(measure)
        _ = pollingLoop([Step(idleMs: 30, busyMs: 20), Step(idleMs: 30, busyMs: 160), Step(idleMs: 350, busyMs: 40),
                         Step(idleMs: 30, busyMs: 240), Step(idleMs: 200, busyMs: 10)], heartbeat, finally: log.save) {
            busyWork("ioLoopWork", $0, log)
        }
    }
    let heartbeat = LoopHeartbeat()
    if heartbeat == nil { complain("the main thread is not watched") }
    let log = MeasureLog(measure)
    return sleepingLoop([Step(idleMs: 50, busyMs: 130), Step(idleMs: 300, busyMs: 60), Step(idleMs: 40, busyMs: 280),
                         Step(idleMs: 250, busyMs: 20)], heartbeat, finally: { log.save(); join(io) }) {
        busyWork("mainLoopWork", $0, log)
    }
}

/// `frames` frames of `normalMs` work on a `periodMs` grid, with the frames in
/// `slow` taking longer; each frame is timed inside `monitor.frame { }` and the
/// measure lines `frame-<name> start end ms` are written after the last frame,
/// so no file write lands inside a frame.
func frameLoop(_ monitor: FrameMonitor, frames: Int, periodMs: Double, normalMs: Double, slow: [Int: Double],
               measure: String?) -> UInt64 {
    var sink: UInt64 = 0
    let log = MeasureLog(measure)
    let periodNs = UInt64(periodMs * 1e6)
    var next = monotonicNs()
    for n in 0..<frames {
        let budget = slow[n] ?? normalMs
        let (start, end) = monitor.frame { () -> (UInt64, UInt64) in
            let start = monotonicNs()
            var digest = UInt64(n)
            while Double(monotonicNs() - start) / 1e6 < budget { digest = mixChunk(digest) }
            sink &+= digest
            return (start, monotonicNs())
        }
        log.add("frame-\(monitor.name)", start, end)
        next += periodNs
        let now = monotonicNs()
        while next <= now { next += periodNs } // a late frame skips to the next grid point
        var until = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
    }
    log.save()
    return sink
}

/// "render" (16.667 ms, 90 frames of 3 ms, three slow ones) on the main thread,
/// "audio" (5 ms, 200 frames of 1 ms, three slow ones) and "physics" (10 ms,
/// 120 frames of 2 ms, two slow ones) on threads of their own, all at once.
func framesScenario(_ measure: String?) -> UInt64 {
    let audio = startThread(named: "audio-thread") {
        let monitor = FrameMonitor(name: "audio", deadlineMs: 5)
        _ = frameLoop(monitor, frames: 200, periodMs: 5.5, normalMs: 1, slow: [60: 9, 120: 12, 180: 7], measure: measure)
    }
    let physics = startThread(named: "physics-thread") {
        let monitor = FrameMonitor(name: "physics", deadlineMs: 10)
        _ = frameLoop(monitor, frames: 120, periodMs: 8.333, normalMs: 2, slow: [40: 18, 100: 14], measure: measure)
    }
    let render = FrameMonitor(name: "render", deadlineMs: 16.667)
    let sink = frameLoop(render, frames: 90, periodMs: 16.667, normalMs: 3, slow: [20: 30, 50: 45, 70: 25],
                         measure: measure)
    join(audio)
    join(physics)
    return sink
}

/// The reporter's side of on-demand reports: for each request, `report()` and two
/// `writeReport(to:format:)` calls, markdown then JSON, into `out`.
func onDemandReports(count: Int, out: String, measure: String?, request: DispatchSemaphore, done: DispatchSemaphore) {
    for k in 1...count {
        request.wait()
        guard let watcher = HangWatcher.shared else { complain("no watcher"); exit(1) }
        let report = watcher.report()
        let durations = report.hangs.map { String(format: "%.3f", $0.durationMs) }.joined(separator: ",")
        let line = "report-\(k) \(report.hangs.count) \(durations.isEmpty ? "-" : durations)\n"
        if let measure {
            let fd = open(measure, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            if fd >= 0 { _ = line.withCString { write(fd, $0, strlen($0)) }; close(fd) }
        }
        do {
            try watcher.writeReport(to: "\(out)/report-\(k).md", format: .markdown)
            try watcher.writeReport(to: "\(out)/report-\(k).json", format: .json)
        } catch {
            complain("writeReport: \(error)")
            exit(1)
        }
        done.signal()
    }
}

/// Hangs of 300, 180 and 140 ms on the main thread's loop; after the first and
/// the second, the loop's wait is for the reporter to finish, so each on-demand
/// report sees exactly the hangs before it and the loop is idle meanwhile.
func onDemandScenario(_ arguments: Arguments) -> UInt64 {
    guard let out = arguments.out else { complain("--out DIR is required"); exit(2) }
    let measure = arguments.demo.measureFile
    let request = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
    let reporter = startThread(named: "reporter") {
        onDemandReports(count: 2, out: out, measure: measure, request: request, done: done)
    }
    let heartbeat = LoopHeartbeat()
    if heartbeat == nil { complain("the main thread is not watched") }
    let log = MeasureLog(measure)
    var sink: UInt64 = 0
    idle(heartbeat) { usleep(50_000) }
    sink &+= busyWork("firstRequest", 300, log)
    idle(heartbeat) { request.signal(); done.wait() }
    sink &+= busyWork("secondRequest", 180, log)
    idle(heartbeat) { request.signal(); done.wait() }
    sink &+= busyWork("thirdRequest", 140, log)
    // The last wait never wakes (as sleepingLoop's): the main thread exits idle.
    heartbeat?.willWait()
    usleep(100_000)
    log.save()
    join(reporter)
    return sink
}

/// Stalls of 200 ms (main thread, from about 80 ms), 220 ms ("net-loop", from about
/// 440 ms) and 260 ms ("disk-loop", from about 875 ms; it blocks SIGPROF, so a signal
/// sampler cannot sample it while it runs), among busy periods of 10–65 ms and idle
/// waits of up to 750 ms. The stalls follow each other so that each has a core.
func environmentScenario(_ measure: String?) -> UInt64 {
    let net = startThread(named: "net-loop") {
        let heartbeat = LoopHeartbeat()
        let log = MeasureLog(measure)
        _ = pollingLoop([Step(idleMs: 60, busyMs: 30), Step(idleMs: 350, busyMs: 220), Step(idleMs: 40, busyMs: 15),
                         Step(idleMs: 40, busyMs: 65)], heartbeat, finally: log.save) { busyWork("netLoopWork", $0, log) }
    }
    let disk = startThread(named: "disk-loop") {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPROF)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        let heartbeat = LoopHeartbeat()
        let log = MeasureLog(measure)
        _ = pollingLoop([Step(idleMs: 100, busyMs: 25), Step(idleMs: 750, busyMs: 260), Step(idleMs: 40, busyMs: 10)],
                        heartbeat, finally: log.save) { busyWork("diskLoopWork", $0, log) }
    }
    let heartbeat = LoopHeartbeat()
    let log = MeasureLog(measure)
    return sleepingLoop([Step(idleMs: 40, busyMs: 20), Step(idleMs: 40, busyMs: 200), Step(idleMs: 300, busyMs: 60),
                         Step(idleMs: 40, busyMs: 10)], heartbeat, finally: { log.save(); join(net); join(disk) }) {
        busyWork("mainLoopWork", $0, log)
    }
}

// MARK: - Main

let arguments = Arguments(CommandLine.arguments)
var sink: UInt64 = 0
switch arguments.scenario {
case "heartbeat":
    startConfiguredInCode(arguments)
    sink = heartbeatScenario(arguments.demo.measureFile)
case "frames":
    startConfiguredInCode(arguments)
    sink = framesScenario(arguments.demo.measureFile)
case "on-demand":
    startConfiguredInCode(arguments)
    sink = onDemandScenario(arguments)
case "env":
    // No configuration in code: HANGWATCH_* alone decide what is watched and where the report goes.
    do { try HangWatcher.start() } catch {
        complain("\(error)")
        exit(2)
    }
    sink = environmentScenario(arguments.demo.measureFile)
default:
    complain("unknown scenario \(arguments.scenario)")
    exit(2)
}
if sink == 42 { complain("unlikely") }
exit(0)
