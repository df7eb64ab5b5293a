// Cost of the library's per-iteration APIs, measured in-process:
// FrameMonitor.frame {} and LoopHeartbeat.waiting {} around empty work, with
// the watcher running, against the same loop without them.
// Prints: frame-monitor-ns=<ns per frame> heartbeat-ns=<ns per iteration>
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

@inline(never) func work(_ x: inout UInt64) { x = x &* 6364136223846793005 &+ 1 }

func perIteration(_ iterations: Int, _ body: (inout UInt64) -> Void) -> Double {
    var x: UInt64 = 1
    let start = nowNs()
    for _ in 0..<iterations { body(&x) }
    let ns = Double(nowNs() - start) / Double(iterations)
    if x == 42 { print("") }
    return ns
}

let iterations = 2_000_000
// HANGWATCH_* variables apply (HANGWATCH_HEARTBEAT_CLOCK=vdso gives the clock_gettime "before").
var configuration = HangWatcher.Configuration.fromEnvironment()
configuration.observeMainRunLoop = false
do { try HangWatcher.start(configuration) } catch { print("error=\(error)"); exit(1) }
let monitor = FrameMonitor(name: "bench", deadlineMs: 16.667)
guard let heartbeat = LoopHeartbeat() else { print("error=no heartbeat"); exit(1) }

var plain: [Double] = [], framed: [Double] = [], beating: [Double] = []
for _ in 0..<5 {
    plain.append(perIteration(iterations) { work(&$0) })
    framed.append(perIteration(iterations) { x in monitor.frame { work(&x) } })
    beating.append(perIteration(iterations) { x in heartbeat.waiting { work(&x) } })
}
func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
print(String(format: "frame-monitor-ns=%.1f heartbeat-ns=%.1f plain-ns=%.1f",
             median(framed) - median(plain), median(beating) - median(plain), median(plain)))
