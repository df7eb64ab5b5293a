// deadlock scenario: a two-lock cycle on the main thread (issue 33), for the
// library's wait-for chain. A run-loop callback takes ordersLock, then
// auditLock (settleOrder); the thread "auditor" takes auditLock, then
// ordersLock (recordAudit). A barrier makes both hold their first lock
// before asking for the second: a deadlock, every time. A third thread ends
// the process with exit(0) `deadlockExitMs` after both are about to wait, so
// that the library's exit report is written with the hang in progress.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How long the deadlock lasts before the program exits.
let deadlockExitMs: UInt32 = 700

/// The two plain pthread mutexes (NSLock's kind) and the barrier, never freed.
nonisolated(unsafe) let ordersLock: UnsafeMutablePointer<pthread_mutex_t> = {
    let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(lock, nil)
    return lock
}()
nonisolated(unsafe) let auditLock: UnsafeMutablePointer<pthread_mutex_t> = {
    let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(lock, nil)
    return lock
}()
nonisolated(unsafe) let bothHold: UnsafeMutablePointer<pthread_barrier_t> = {
    let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
    pthread_barrier_init(barrier, nil, 2)
    return barrier
}()

@inline(never) func recordAudit() {
    pthread_mutex_lock(auditLock)
    pthread_barrier_wait(bothHold)
    pthread_mutex_lock(ordersLock) // held by the main thread, which waits for auditLock
    pthread_mutex_unlock(ordersLock)
    pthread_mutex_unlock(auditLock)
}

@inline(never) func settleOrder() {
    pthread_mutex_lock(ordersLock)
    pthread_barrier_wait(bothHold)
    measureLine("deadlocked \(monotonicNs())")
    let ender = Thread {
        usleep(deadlockExitMs * 1000)
        exit(0)
    }
    ender.start()
    pthread_mutex_lock(auditLock) // held by auditor, which waits for ordersLock
    pthread_mutex_unlock(auditLock)
    pthread_mutex_unlock(ordersLock)
}

/// Starts the auditor, then settles an order from a run-loop callback.
func startDeadlock() {
    let auditor = Thread {
        nameThisThread("auditor")
        recordAudit()
    }
    auditor.start()
    after(idleGapMs) { settleOrder() }
}

/// Names the calling OS thread through /proc/thread-self/comm. Not
/// `Thread.name`, which reaches the kernel only when Foundation already knows
/// the thread's pthread (a run saw the process name); `pthread_setname_np` is
/// not visible from Swift's Glibc module.
func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = name.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
