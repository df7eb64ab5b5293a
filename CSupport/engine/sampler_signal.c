// CPU samples: the watchdog sends SIGPROF to one watched thread with
// rt_tgsigqueueinfo and a cookie; the handler copies that thread's registers
// and the live part of its stack into the log. Unwinding happens later, off
// this thread. SIGPROF is the one signal libdispatch workers leave unblocked.
//
// The program keeps its own SIGPROF: a signal without our cookie goes to the
// handler the program installed (before or after us), or gets its default.
#include "engine_internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

hw_slot *hw_tls_slot_fast(void);

// The program's own disposition for SIGPROF. Written outside handlers only.
static struct sigaction chained;
static bool installed;

// SIGNAL-SAFE.
bool hw_signal_is_ours(const void *siginfo) {
    const siginfo_t *si = siginfo;
    return si && si->si_code == SI_QUEUE && si->si_pid == hw_g.pid
        && (si->si_value.sival_int == HW_SAMPLE_COOKIE || si->si_value.sival_int == HW_IDENTIFY_COOKIE);
}

// SIGNAL-SAFE: delivers a foreign SIGPROF as if we were not there.
static void chain(int sig, siginfo_t *si, void *uc) {
    if (chained.sa_flags & SA_SIGINFO) {
        if (chained.sa_sigaction) chained.sa_sigaction(sig, si, uc);
        return;
    }
    if (chained.sa_handler == SIG_IGN) return;
    if (chained.sa_handler == SIG_DFL) {
        // Default action of SIGPROF is to terminate: restore it and re-raise;
        // the signal stays blocked until this handler returns, then kills.
        // The raw syscall bypasses any sigaction wrapper (the agent's own).
        struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { 0 };
        dfl.handler = SIG_DFL;
        syscall(SYS_rt_sigaction, SIGPROF, &dfl, NULL, sizeof dfl.mask);
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGPROF);
        return;
    }
    chained.sa_handler(sig);
}

static void copy_registers(const ucontext_t *uc, uint64_t regs[HW_REG_COUNT]) {
    const greg_t *g = uc->uc_mcontext.gregs;
    regs[HW_REG_RAX] = (uint64_t)g[REG_RAX];
    regs[HW_REG_RDX] = (uint64_t)g[REG_RDX];
    regs[HW_REG_RCX] = (uint64_t)g[REG_RCX];
    regs[HW_REG_RBX] = (uint64_t)g[REG_RBX];
    regs[HW_REG_RSI] = (uint64_t)g[REG_RSI];
    regs[HW_REG_RDI] = (uint64_t)g[REG_RDI];
    regs[HW_REG_RBP] = (uint64_t)g[REG_RBP];
    regs[HW_REG_RSP] = (uint64_t)g[REG_RSP];
    regs[HW_REG_R8] = (uint64_t)g[REG_R8];
    regs[HW_REG_R9] = (uint64_t)g[REG_R9];
    regs[HW_REG_R10] = (uint64_t)g[REG_R10];
    regs[HW_REG_R11] = (uint64_t)g[REG_R11];
    regs[HW_REG_R12] = (uint64_t)g[REG_R12];
    regs[HW_REG_R13] = (uint64_t)g[REG_R13];
    regs[HW_REG_R14] = (uint64_t)g[REG_R14];
    regs[HW_REG_R15] = (uint64_t)g[REG_R15];
    regs[HW_REG_RIP] = (uint64_t)g[REG_RIP];
}

// SIGNAL-SAFE: TLS (initial-exec), atomics, clock_gettime, memcpy into a reserved record.
static void on_sigprof(int sig, siginfo_t *si, void *ucv) {
    if (!hw_signal_is_ours(si)) { chain(sig, si, ucv); return; }
    int saved_errno = errno;
    hw_slot *slot = hw_tls_slot_fast();
    if (!slot && hw_g.probe_main_queue) {
        // Probe mode: main-queue work runs on a worker that has no slot of its own.
        const ucontext_t *uc = ucv;
        slot = si->si_value.sival_int == HW_IDENTIFY_COOKIE
            ? hw_main_queue_identify_here((uint64_t)uc->uc_mcontext.gregs[REG_RSP])
            : hw_main_queue_slot_if_running_here();
    }
    if (slot && !hw_g.disabled) {
        __atomic_fetch_add(&slot->signal_hits, 1, __ATOMIC_ACQ_REL);
        // A thread that reached its loop wait in the meantime is idle: no sample.
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_BUSY) {
            uint64_t regs[HW_REG_COUNT];
            copy_registers(ucv, regs);
            hw_write_sample(slot, HW_SRC_SIGNAL, 0, regs, hw_now_ns());
        }
    }
    errno = saved_errno;
}

int hw_signal_install(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_sigprof;
    // SA_RESTART: restartable syscalls interrupted by a sample resume unseen.
    act.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    if (sigaction(SIGPROF, &act, &chained) != 0) return -1;
    installed = true;
    return 0;
}

int hw_signal_set_chained(const void *actv, void *oldv) {
    const struct sigaction *act = actv;
    struct sigaction *old = oldv;
    if (old) *old = chained;
    if (act) {
        chained = *act;
        hw_write_note(0, HW_NOTE_SIGNAL_REPLACED, 0);
    }
    return 0;
}

static bool send_cookie(pid_t tid, int cookie) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_QUEUE;
    si.si_pid = hw_g.pid;
    si.si_uid = getuid();
    si.si_value.sival_int = cookie;
    return syscall(SYS_rt_tgsigqueueinfo, hw_g.pid, tid, SIGPROF, &si) == 0;
}

bool hw_signal_request(pid_t tid) { return send_cookie(tid, HW_SAMPLE_COOKIE); }
bool hw_signal_request_identify(pid_t tid) { return send_cookie(tid, HW_IDENTIFY_COOKIE); }
