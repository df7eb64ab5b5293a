// Hazards of the library's redirected waits, one check per run:
// `InProcessHazardChecks CHECK [--library REPORT.json]`. Each check prints
// lines (`<check> key=value ...`, keys ending in "ms" are timings) that must
// agree plain and watched; the report says what the watcher made of it.
// Checks: first-wait-in-handler, first-wait-under-signals (HZ_THREADS
// threads each), poll-in-handler, nested-epoll, function-identity,
// fork-child, and launches blocked 1 s: launch-sleep (usleep), launch-read,
// launch-libc-sleep (sleep). Exit status 3; exec-while-sampled execs
// /bin/true after 150 ms of work (HZ_SIGNAL_SAMPLER: SIGPROF sampling).
import CInProcessHazards
import Foundation
import HangWatch

let arguments = CommandLine.arguments
let check = arguments.count > 1 ? arguments[1] : ""

if let flag = arguments.firstIndex(of: "--library"), flag + 1 < arguments.count {
    var configuration = HangWatcher.Configuration()
    configuration.capture.threadPatterns = ["main", "hz-*"]
    if ProcessInfo.processInfo.environment["HZ_SIGNAL_SAMPLER"] != nil { configuration.capture.sampler = .signal }
    configuration.reportPath = arguments[flag + 1]
    configuration.reportFormat = .json
    do { try HangWatcher.start(configuration) } catch { print("start failed: \(error)"); exit(1) }
}

switch check {
case "first-wait-in-handler": hazard_first_wait_in_handler(Int32(ProcessInfo.processInfo.environment["HZ_THREADS"] ?? "40") ?? 40)
case "first-wait-under-signals": hazard_first_wait_under_signals(Int32(ProcessInfo.processInfo.environment["HZ_THREADS"] ?? "40") ?? 40)
case "exec-while-sampled":
    // The main thread busy long enough to be sampled, then exec.
    let start = Date()
    var x: UInt64 = 1
    while Date().timeIntervalSince(start) < 0.15 { x = x &* 6364136223846793005 &+ 1 }
    if x == 42 { print("") }
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
    execv("/bin/true", argv)
    print("exec failed")
case "poll-in-handler": hazard_poll_in_handler()
case "nested-epoll": hazard_nested_epoll_in_handler()
case "function-identity": hazard_function_identity()
case "fork-child": hazard_fork_child()
case "launch-sleep":
    // A launch that blocks 1 s (a slow file, a sleep) before its run loop starts.
    let start = Date()
    usleep(1_000_000)
    print("launch-sleep elapsedms=\(Int(Date().timeIntervalSince(start) * 1000))")
    RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.3))
case "launch-read":
    // A launch blocked 1 s in read() (a slow file, a peer that answers late).
    var fds: [Int32] = [0, 0]
    _ = pipe(&fds)
    let writeEnd = fds[1]
    let writer = Thread { usleep(1_000_000); var byte: UInt8 = 1; _ = write(writeEnd, &byte, 1) }
    writer.start()
    let start = Date()
    var byte: UInt8 = 0
    let got = read(fds[0], &byte, 1)
    print("launch-read rc=\(got) elapsedms=\(Int(Date().timeIntervalSince(start) * 1000))")
    RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.3))
case "launch-libc-sleep":
    let start = Date()
    sleep(1)
    print("launch-libc-sleep elapsedms=\(Int(Date().timeIntervalSince(start) * 1000))")
    RunLoop.main.run(until: Date(timeIntervalSinceNow: 0.3))
default:
    print("unknown check \(check)")
    exit(2)
}
exit(3)
