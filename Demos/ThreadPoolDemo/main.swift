// ThreadPoolDemo: a Swift process with many threads, each in a known state,
// for `hangwatch dump` (the Swift twin of Demos/c/thread_pool.c).
//
//   ThreadPoolDemo [--threads N] [--seconds S] [--pid-file FILE]
//
// The main thread hangs in `IndexChecksum.spin(until:)` (CPU) while holding
// the index lock. Thread "sleeper" sleeps in `PhotoStorage.nap()`
// (nanosleep, 50 ms at a time); thread "locker" waits for the index lock in
// `IndexLock.waitForIndex()`; the others ("pool-N") wait for work in
// `WorkerPool.idle()`. N counts every thread, the main one included
// (default 50). The program exits 0 after S seconds (default 10).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lock the main thread holds while it hangs.
final class IndexLock: @unchecked Sendable {
    let lock = NSLock()

    /// Waits until the main thread lets go of the index.
    @inline(never) func waitForIndex() {
        lock.lock()
        lock.unlock()
    }
}

/// A pool whose workers never get work until the end.
final class WorkerPool: @unchecked Sendable {
    let condition = NSCondition()
    var done = false

    /// Parks the calling worker until `finish()`.
    @inline(never) func idle() {
        condition.lock()
        while !done { condition.wait() }
        condition.unlock()
    }

    func finish() {
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }
}

enum PhotoStorage {
    /// One 50 ms sleep of the storage thread.
    @inline(never) static func nap() {
        var ts = timespec(tv_sec: 0, tv_nsec: 50_000_000)
        nanosleep(&ts, nil)
    }
}

enum IndexChecksum {
    /// Spins on arithmetic until `deadline` (CLOCK_MONOTONIC ns): the hang.
    @inline(never) static func spin(until deadline: UInt64) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        // The clock is read every ~1/4 M rounds (a few hundred µs): a dump
        // must catch this function on top, not clock_gettime, which on a VM
        // without a usable TSC is a real system call of microseconds.
        while now() < deadline {
            for i in 0..<(1 << 18) { h = (h ^ UInt64(i)) &* 0x100_0000_01b3 }
        }
        return h
    }
}

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        // The kernel's name of the thread (what dump shows); Thread.name is Foundation's only.
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        if fd >= 0 { _ = name.withCString { write(fd, $0, strlen($0)) }; close(fd) }
        body()
    }
    thread.start()
}

var threads = 50, seconds = 10.0
var pidFile: String?
let args = CommandLine.arguments
var i = 1
while i + 1 < args.count {
    switch args[i] {
    case "--threads": threads = max(3, Int(args[i + 1]) ?? threads)
    case "--seconds": seconds = Double(args[i + 1]) ?? seconds
    case "--pid-file": pidFile = args[i + 1]
    default: break
    }
    i += 2
}

let deadline = now() + UInt64(seconds * 1e9)
let index = IndexLock()
let pool = WorkerPool()
index.lock.lock()
startThread(named: "sleeper") { while now() < deadline { PhotoStorage.nap() } }
startThread(named: "locker") { index.waitForIndex() }
for n in 3..<threads { startThread(named: "pool-\(n)") { pool.idle() } }
// Written once every thread has been started: a reader that sees the file
// and then lists the threads may still find one being born, so give them a moment.
usleep(50_000)
if let pidFile { try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8) }
let checksum = IndexChecksum.spin(until: deadline)
index.lock.unlock()
pool.finish()
if checksum == 0 { _ = write(2, "checksum 0\n", 11) } // keeps the spin from being optimised away
