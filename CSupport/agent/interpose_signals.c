// The program's signal handlers. The agent sees every handler the program
// installs through libc (sigaction, signal and its aliases, sysv_signal,
// sigset) and puts a trampoline in front of it, so that each run of a
// program handler is counted on its thread (hw_signal_count_program). A wait
// cut short by EINTR is resumed only when none ran (wait_scope.h): that is
// how the agent knows whose signal interrupted it.
//
// What the program sees does not change:
//  - the kernel gets the program's own sigaction with only the handler
//    replaced: same sa_mask, same flags (SA_RESTART, SA_ONSTACK, SA_NODEFER,
//    SA_RESETHAND: the kernel itself resets the disposition after one
//    delivery, SA_SIGINFO or not), same restorer;
//  - the trampoline bumps a counter and tail-calls the handler with the
//    registers the kernel passed (signal number, siginfo, ucontext), so the
//    handler runs on the same stack at the same depth, returning straight to
//    the kernel's restorer (only a handler that interrupts the loop's wait
//    runs one small frame deeper, see trampoline); a plain handler receives
//    the same registers from the kernel on x86_64, siginfo included;
//  - the old action reported back is always the program's, never the
//    trampoline: the kernel's answer with the program's handler put back.
// SIGPROF, which carries our samples, is chained by the engine instead
// (engine/sigprof_disposition.c). Handlers installed with a raw rt_sigaction are
// not seen; their runs count as unknown, so a wait they cut short ends as it
// would without us. A raw read and write-back of a wrapped handler: see
// HW_TRAMPOLINES.
//
// Everything here is async-signal-safe (sigaction may be called from a
// handler): a table indexed by signal number, atomics, no locks.
#include "agent_internal.h"

#include <errno.h>
#include <string.h>

#define HW_NSIG 65 /* signals 1..64 */

typedef void (*handler_fn)(int, siginfo_t *, void *);

// The kernel's disposition for a wrapped handler is one of HW_TRAMPOLINES
// trampolines, each with its own entry per signal: every install through
// libc takes the next one. A program that reads the disposition with a raw
// rt_sigaction holds the trampoline of that install, so writing it back
// later (raw, or through libc) restores that install's handler, not the
// latest one, for as long as fewer than HW_TRAMPOLINES installs of that
// signal came in between.
#define HW_TRAMPOLINES 8
static uintptr_t program_handler[HW_NSIG][HW_TRAMPOLINES];
static uint32_t installs[HW_NSIG]; // atomic: the last install used trampoline installs % HW_TRAMPOLINES

// SIGNAL-SAFE: one TLS add, one atomic load, the handler call; when the
// signal found the thread in its loop's wait, the heartbeat around the call
// (engine/handler_in_wait.c: the handler may siglongjmp out of the wait).
static inline __attribute__((always_inline)) void run_program_handler(int sig, siginfo_t *si, void *uc, int k) {
    hw_signal_count_program();
    uintptr_t h = (unsigned)sig < HW_NSIG ? __atomic_load_n(&program_handler[sig][k], __ATOMIC_ACQUIRE) : 0;
    if (h <= (uintptr_t)SIG_IGN) return;
    hw_slot *waited = hw_handler_enters();
    if (!waited) {
        ((handler_fn)h)(sig, si, uc); // a tail call: the handler returns straight to the restorer
        return;
    }
    ((handler_fn)h)(sig, si, uc);
    hw_handler_returns(waited);
}

#define TRAMPOLINE(k) \
    static void trampoline_##k(int sig, siginfo_t *si, void *uc) { run_program_handler(sig, si, uc, k); }
TRAMPOLINE(0) TRAMPOLINE(1) TRAMPOLINE(2) TRAMPOLINE(3) TRAMPOLINE(4) TRAMPOLINE(5) TRAMPOLINE(6) TRAMPOLINE(7)
static const handler_fn trampolines[HW_TRAMPOLINES] = {
    trampoline_0, trampoline_1, trampoline_2, trampoline_3, trampoline_4, trampoline_5, trampoline_6, trampoline_7,
};

/// Which trampoline `h` is, or -1.
static int trampoline_index(uintptr_t h) {
    for (int k = 0; k < HW_TRAMPOLINES; k++)
        if (h == (uintptr_t)trampolines[k]) return k;
    return -1;
}

static bool wrappable(int sig) { return sig > 0 && sig < HW_NSIG && sig != SIGPROF; }

/// What the program must read for a kernel handler `h` of `sig`: a
/// trampoline means the handler its install put behind it. `replaced`: the
/// trampoline this call is installing, and the handler it held until now.
static uintptr_t as_program_sees(int sig, uintptr_t h, int replaced, uintptr_t prev) {
    int k = wrappable(sig) ? trampoline_index(h) : -1;
    if (k < 0) return h;
    return k == replaced ? prev : __atomic_load_n(&program_handler[sig][k], __ATOMIC_ACQUIRE);
}

/// The handler to keep in the table for a `handler` the program installs. A
/// program that read the kernel's disposition with a raw rt_sigaction holds
/// a trampoline, and hands it back to restore what it read: that is the
/// handler behind it, never the trampoline (which would call itself).
static uintptr_t table_value(int sig, uintptr_t handler) { return as_program_sees(sig, handler, -1, 0); }

/// Puts `handler` behind the next trampoline of `sig`: returns its index, and in *prev what it held.
static int claim_trampoline(int sig, uintptr_t handler, uintptr_t *prev) {
    int k = (int)(__atomic_add_fetch(&installs[sig], 1, __ATOMIC_ACQ_REL) % HW_TRAMPOLINES);
    // The table first: from the moment the kernel calls the trampoline it must find this handler.
    *prev = __atomic_exchange_n(&program_handler[sig][k], handler, __ATOMIC_ACQ_REL);
    return k;
}

/// The install failed: the trampoline holds what it held.
static void unclaim_trampoline(int sig, int k, uintptr_t handler, uintptr_t prev) {
    __atomic_compare_exchange_n(&program_handler[sig][k], &handler, prev, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void ensure_real(void) { HW_ENSURE_REAL_CALLS(); }

HW_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof()) return hw_signal_set_chained(act, old);
    uintptr_t handler = act ? (uintptr_t)act->sa_handler : 0;
    if (!wrappable(sig) || handler <= (uintptr_t)SIG_IGN) {
        int rc = hw_real.sigaction(sig, act, old);
        if (rc == 0 && old) old->sa_handler = (__sighandler_t)as_program_sees(sig, (uintptr_t)old->sa_handler, -1, 0);
        return rc;
    }
    handler = table_value(sig, handler);
    struct sigaction k = *act; // act and old may be the same struct
    uintptr_t prev;
    int t = claim_trampoline(sig, handler, &prev);
    k.sa_sigaction = trampolines[t];
    int rc = hw_real.sigaction(sig, &k, old);
    if (rc != 0) {
        int saved = errno;
        unclaim_trampoline(sig, t, handler, prev);
        errno = saved;
        return rc;
    }
    if (old) old->sa_handler = (__sighandler_t)as_program_sees(sig, (uintptr_t)old->sa_handler, t, prev);
    return 0;
}

HW_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    return sigaction(sig, act, old);
}

// ---- SIGPROF through the older interfaces: done on the engine's chain, the
// way glibc builds each sigaction.

static bool sigprof_interrupts; // siginterrupt(SIGPROF, 1) was called: signal() then omits SA_RESTART

static __sighandler_t sigprof_install(__sighandler_t handler, int flags, bool mask_self) {
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = flags;
    if (mask_self) sigaddset(&act.sa_mask, SIGPROF);
    if (hw_signal_set_chained(&act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/// sigset(SIGPROF, disp), as glibc does it, with the engine's chain.
static __sighandler_t sigprof_sigset(__sighandler_t disp) {
    sigset_t set, oset;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &oset) < 0) return SIG_ERR;
        if (sigismember(&oset, SIGPROF)) return SIG_HOLD;
        struct sigaction old;
        hw_signal_set_chained(NULL, &old);
        return old.sa_handler;
    }
    __sighandler_t old = sigprof_install(disp, 0, false);
    if (old == SIG_ERR || sigprocmask(SIG_UNBLOCK, &set, &oset) < 0) return SIG_ERR;
    return sigismember(&oset, SIGPROF) ? SIG_HOLD : old;
}

// ---- signal(), sysv_signal(), sigset() for every other signal: glibc builds
// the sigaction (flags, mask, and for sigset the change of the signal mask);
// the kernel gets the trampoline in place of the handler.

typedef __sighandler_t (*install_fn)(int, __sighandler_t);

static bool is_handler(__sighandler_t h) {
    return h != SIG_ERR && h != SIG_DFL && h != SIG_IGN && h != SIG_HOLD;
}

static __sighandler_t install_through(install_fn real, int sig, __sighandler_t handler) {
    if (!wrappable(sig) || !is_handler(handler))
        return (__sighandler_t)as_program_sees(sig, (uintptr_t)real(sig, handler), -1, 0);
    uintptr_t h = table_value(sig, (uintptr_t)handler), prev;
    int t = claim_trampoline(sig, h, &prev);
    __sighandler_t r = real(sig, (__sighandler_t)(void (*)(void))trampolines[t]);
    if (r == SIG_ERR) {
        int saved = errno;
        unclaim_trampoline(sig, t, h, prev);
        errno = saved;
        return r;
    }
    return (__sighandler_t)as_program_sees(sig, (uintptr_t)r, t, prev);
}

static __sighandler_t bsd_signal_common(int sig, __sighandler_t handler) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof() && handler != SIG_ERR)
        return sigprof_install(handler, sigprof_interrupts ? 0 : SA_RESTART, true);
    return install_through(hw_real.signal, sig, handler);
}

HW_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) { return bsd_signal_common(sig, handler); }
HW_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler) { return bsd_signal_common(sig, handler); }
HW_EXPORT __sighandler_t ssignal(int sig, __sighandler_t handler) { return bsd_signal_common(sig, handler); }

static __sighandler_t sysv_signal_common(int sig, __sighandler_t handler) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof() && handler != SIG_ERR)
        return sigprof_install(handler, SA_RESETHAND | SA_NODEFER, false);
    return install_through(hw_real.sysv_signal, sig, handler);
}

HW_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler) { return sysv_signal_common(sig, handler); }
HW_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler) { return sysv_signal_common(sig, handler); }

HW_EXPORT __sighandler_t sigset(int sig, __sighandler_t disp) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof() && disp != SIG_ERR) return sigprof_sigset(disp);
    return install_through(hw_real.sigset, sig, disp);
}

HW_EXPORT int sigignore(int sig) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof()) return sigprof_install(SIG_IGN, 0, false) == SIG_ERR ? -1 : 0;
    return hw_real.sigignore(sig);
}

// For other signals glibc re-reads the disposition (the trampoline) and sets
// it again with SA_RESTART changed: the program's handler stays in the table.
HW_EXPORT int siginterrupt(int sig, int interrupt) {
    ensure_real();
    if (sig == SIGPROF) __atomic_store_n(&sigprof_interrupts, interrupt != 0, __ATOMIC_RELAXED);
    if (sig != SIGPROF || !hw_signal_owns_sigprof()) return hw_real.siginterrupt(sig, interrupt);
    struct sigaction act;
    memset(&act, 0, sizeof act);
    hw_signal_set_chained(NULL, &act);
    if (interrupt) act.sa_flags &= ~SA_RESTART;
    else act.sa_flags |= SA_RESTART;
    return hw_signal_set_chained(&act, NULL);
}
