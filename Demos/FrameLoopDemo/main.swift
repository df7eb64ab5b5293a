// FrameLoopDemo: a 60 Hz frame loop with known slow frames, runnable two ways:
//   hangwatch run --frame-ms 16.667 -- FrameLoopDemo        (no code change)
//   FrameLoopDemo --library REPORT.json                      (HangWatch's FrameMonitor)
// Frames 30, 60 and 90 overrun the 16.7 ms budget (25, 40, 22 ms); frame 100
// takes 130 ms, which is also a hang. Each frame sleeps to the next vsync with
// clock_nanosleep(TIMER_ABSTIME).
import DemoSupport
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

let args = CommandLine.arguments
let libraryReport = args.firstIndex(of: "--library").flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil }
let measure = DemoOptions(args).measureFile

var monitor: FrameMonitor?
if let libraryReport {
    var configuration = HangWatcher.Configuration.fromEnvironment()
    configuration.reportPath = libraryReport
    configuration.reportFormat = .json
    do { try HangWatcher.start(configuration) } catch {
        let line = "FrameLoopDemo: \(error)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    monitor = FrameMonitor(name: "main", deadlineMs: 16.667)
}

let periodNs: UInt64 = 16_666_667
func workMs(forFrame n: Int) -> Double {
    switch n {
    case 30: return 25
    case 60: return 40
    case 90: return 22
    case 100: return 130
    default: return 4
    }
}

@inline(never) func simulateFrame(_ n: Int) -> UInt64 {
    let work = MeasuredWork(name: "simulateFrame", measure: measure)
    var digest: UInt64 = UInt64(n)
    let budget = workMs(forFrame: n)
    while work.elapsedMs < budget { digest = mixChunk(digest) }
    work.finish(result: digest)
    return digest
}

var next = monotonicNs()
var sink: UInt64 = 0
for frame in 0..<120 {
    if let monitor {
        sink &+= monitor.frame { simulateFrame(frame) }
    } else {
        sink &+= simulateFrame(frame)
    }
    next += periodNs
    let now = monotonicNs()
    while next <= now { next += periodNs } // a late frame skips to the next vsync
    var until = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
}
if sink == 42 { print("unlikely") }
if let i = args.firstIndex(of: "--cpu-file"), i + 1 < args.count {
    // The program's own CPU time, for the benchmark of the no-code mode's cost.
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let ms = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
    let line = String(format: "cpu-ms=%.3f\n", ms)
    let fd = open(args[i + 1], O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if fd >= 0 { _ = line.withCString { write(fd, $0, strlen($0)) }; close(fd) }
}
exit(0)
