// An idle dispatchMain() program for 4 s: a main-queue timer every 100 ms does
// nothing. With --library it watches itself (the main-queue probe runs).
// Prints its own CPU time: cpu-ms=<user+system, the whole run> and
// steady-cpu-ms=<the same from 1 s in to the end: idle cost without start-up>.
import Dispatch
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

if CommandLine.arguments.contains("--library") {
    var configuration = HangWatcher.Configuration()
    configuration.observeMainRunLoop = false
    do { try HangWatcher.start(configuration) } catch { print("error=\(error)"); exit(1) }
}
let timer = DispatchSource.makeTimerSource(queue: .main)
timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
timer.setEventHandler {}
timer.resume()
/// The process's CPU time so far, in ms (every thread: the library's included).
func cpuMs() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
}
nonisolated(unsafe) var steadyFromMs = 0.0
DispatchQueue.main.asyncAfter(deadline: .now() + 1) { steadyFromMs = cpuMs() }
DispatchQueue.main.asyncAfter(deadline: .now() + 4) {
    let end = cpuMs()
    print(String(format: "cpu-ms=%.2f steady-cpu-ms=%.2f", end, end - steadyFromMs))
    exit(0)
}
dispatchMain()
