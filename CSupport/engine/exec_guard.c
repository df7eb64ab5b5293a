// exec and our sampling signal. A SIGPROF that is pending on a thread when it
// enters execve stays pending in the new image, where SIGPROF has its default
// action: the process dies (status 128+27). /proc cannot warn us (a thread in
// execve shows as running), so the exec wrappers quiesce first:
//  1. exec_pending is raised: the watchdog sends no signal from then on;
//  2. the exec waits until no send is in flight (the watchdog raises
//     signals_in_flight before it checks exec_pending and lowers it after
//     rt_tgsigqueueinfo returned, so a send is either seen here or skipped);
//  3. a signal of ours already pending on this thread is delivered now (it
//     is unblocked: any syscall return delivers it) or, when the thread
//     blocks SIGPROF, taken off the queue with a zero-timeout sigtimedwait;
//     a pending SIGPROF that is the program's own is queued back.
// Other threads' pending signals die with them (exec ends every other thread).
#include "engine_internal.h"

#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct { uint64_t bits; } kernel_sigset; // the kernel's 8-byte sigset

bool hw_signal_send(pid_t tid, bool identify) {
    __atomic_add_fetch(&hw_g.signals_in_flight, 1, __ATOMIC_SEQ_CST);
    bool sent = false;
    if (!__atomic_load_n(&hw_g.exec_pending, __ATOMIC_SEQ_CST) && !hw_signal_ignored())
        sent = identify ? hw_signal_request_identify(tid) : hw_signal_request(tid);
    __atomic_sub_fetch(&hw_g.signals_in_flight, 1, __ATOMIC_SEQ_CST);
    return sent;
}

/// Takes every SIGPROF pending on this (SIGPROF-blocking) thread off the
/// queue; the program's own are queued again, ours are dropped.
static void drain_blocked_sigprof(void) {
    siginfo_t foreign[8];
    int kept = 0;
    kernel_sigset want = { 1ull << (SIGPROF - 1) };
    struct timespec zero = { 0, 0 };
    for (int i = 0; i < 64; i++) {
        siginfo_t si;
        long sig = syscall(SYS_rt_sigtimedwait, &want, &si, &zero, sizeof want);
        if (sig != SIGPROF) break;
        if (!hw_signal_is_ours(&si) && kept < 8) foreign[kept++] = si;
    }
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < kept; i++) syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGPROF, &foreign[i]);
}

bool hw_exec_prepare(void) {
    // A vfork child shares our memory (and so the owner token) but not our pid.
    if (!hw_engine_running() || !hw_owned() || (pid_t)syscall(SYS_getpid) != hw_g.pid) return false;
    __atomic_store_n(&hw_g.exec_pending, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&hw_g.signals_in_flight, __ATOMIC_SEQ_CST)) sched_yield();
    kernel_sigset mask;
    // This syscall's return delivers any of ours pending and unblocked.
    if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, sizeof mask) == 0
        && (mask.bits >> (SIGPROF - 1)) & 1)
        drain_blocked_sigprof();
    return true;
}

void hw_exec_failed(bool prepared) {
    if (prepared) __atomic_store_n(&hw_g.exec_pending, 0, __ATOMIC_SEQ_CST);
}
