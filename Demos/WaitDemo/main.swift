// WaitDemo: a RunLoop.main program whose one timer callback blocks the main
// thread in a known way, for hangwatch's hang-kind tests (blocked vs running,
// lock owner).
//
//   WaitDemo MODE [--measure FILE]
//
// At t=100 ms a timer runs onEvent(MODE) on the main thread; the run loop
// then idles until t=700 ms and the program exits 0. Modes:
//   semaphore  DispatchSemaphore.wait() for a background task of 300 ms of work
//   nslock     NSLock.lock() of a lock a thread named "lock-holder" holds for
//              350 ms while it computes in holdNSLockComputing()
//   mutex      the same with Synchronization.Mutex and holdMutexComputing()
//   cpu        computeOnMain() for 400 ms
// stdout: `event mode=M result=R`. --measure FILE: `onEvent <startNs> <endNs>
// <durationMs>` (the timer's whole callback) and `cpu onEvent <ms>` (the main thread's CLOCK_THREAD_CPUTIME_ID).

import DemoSupport
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let options = DemoOptions(CommandLine.arguments)
let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ""
let start = monotonicNs()

func threadCPUMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
}

/// Real arithmetic for `ms` milliseconds of wall time.
@inline(never) func compute(ms: Double) -> UInt64 {
    let deadline = monotonicNs() + UInt64(ms * 1e6)
    var h: UInt64 = 1
    while monotonicNs() < deadline { h = mixChunk(h) }
    return h
}

@inline(never) func backgroundTask() -> UInt64 { compute(ms: 300) &+ 1 }
@inline(never) func holdNSLockComputing() -> UInt64 { compute(ms: 350) &+ 2 }
@inline(never) func holdMutexComputing() -> UInt64 { compute(ms: 350) &+ 3 }
@inline(never) func computeOnMain() -> UInt64 { compute(ms: 400) &+ 4 }

final class Shared: @unchecked Sendable {
    let nslock = NSLock()
    let mutex = Mutex<UInt64>(0)
    let started = DispatchSemaphore(value: 0)
    var sink: UInt64 = 0
}
let shared = Shared()

/// A thread named "lock-holder" that takes the lock, says so, computes, releases.
func startHolder(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        Thread.current.name = "lock-holder" // Foundation sets the pthread name of the current thread
        body()
    }
    thread.start()
}

@inline(never) func waitOnSemaphore() -> UInt64 {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        shared.sink = backgroundTask()
        done.signal()
    }
    done.wait()
    return 1
}

@inline(never) func waitForNSLock() -> UInt64 {
    startHolder {
        shared.nslock.lock()
        shared.started.signal()
        shared.sink = holdNSLockComputing()
        shared.nslock.unlock()
    }
    shared.started.wait()
    shared.nslock.lock()
    shared.nslock.unlock()
    return 1
}

@inline(never) func waitForMutex() -> UInt64 {
    startHolder {
        shared.mutex.withLock { value in
            shared.started.signal()
            value = holdMutexComputing()
        }
    }
    shared.started.wait()
    return shared.mutex.withLock { $0 } != 0 ? 1 : 0
}

@inline(never) func onEvent() -> UInt64 {
    switch mode {
    case "semaphore": return waitOnSemaphore()
    case "nslock": return waitForNSLock()
    case "mutex": return waitForMutex()
    case "cpu": return computeOnMain() != 0 ? 1 : 0
    default: return 99
    }
}

/// The timer's whole callback, bracketed from its first statement to its last but the
/// measure-file writes: the program's own account of how long the main thread was away.
/// (Only `onEvent` used to be bracketed; on a cold machine the callback's first Swift
/// runtime calls around it took 5 ms, a busy main thread the bracket left out.)
func handleEvent(measure: String?) {
    let begin = monotonicNs()
    let cpu0 = threadCPUMs()
    let result = onEvent()
    let cpu1 = threadCPUMs()
    print("event mode=\(mode) result=\(result)") // flushed by exit()
    let end = monotonicNs()
    appendMeasureLine("onEvent \(begin) \(end) \(Double(end - begin) / 1e6)", to: measure)
    appendMeasureLine("cpu onEvent \(cpu1 - cpu0)", to: measure)
}

startLibraryModeIfAsked(options)
_ = Timer.scheduledTimer(withTimeInterval: 0.1, repeats: false) { _ in
    handleEvent(measure: options.measureFile)
}
while monotonicNs() - start < 700_000_000 {
    _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
}
exit(0)
