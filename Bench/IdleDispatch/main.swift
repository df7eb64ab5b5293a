// An idle dispatchMain() program for 4 s: a main-queue timer every 100 ms does
// nothing. With --library it watches itself (the main-queue probe runs).
// Prints its own CPU time: cpu-ms=<user+system>
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
DispatchQueue.main.asyncAfter(deadline: .now() + 4) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let ms = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
    print(String(format: "cpu-ms=%.2f", ms))
    exit(0)
}
dispatchMain()
