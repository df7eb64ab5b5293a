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
// (engine/sampler_signal.c). Handlers installed with a raw rt_sigaction are
// not seen; their runs count as unknown, so a wait they cut short ends as it
// would without us.
//
// Everything here is async-signal-safe (sigaction may be called from a
// handler): a table indexed by signal number, atomics, no locks.
#include "agent_internal.h"
#include "../engine/engine_internal.h"

#include <errno.h>
#include <string.h>

#define HW_NSIG 65 /* signals 1..64 */

typedef void (*handler_fn)(int, siginfo_t *, void *);

// The program's handler of each signal whose kernel disposition is the trampoline.
static uintptr_t program_handler[HW_NSIG];

// SIGNAL-SAFE: one TLS add, one atomic load, the handler call; when the
// signal found the thread in its loop's wait, the heartbeat around the call
// (engine/handler_in_wait.c: the handler may siglongjmp out of the wait).
static void trampoline(int sig, siginfo_t *si, void *uc) {
    hw_signal_count_program();
    uintptr_t h = (unsigned)sig < HW_NSIG ? __atomic_load_n(&program_handler[sig], __ATOMIC_ACQUIRE) : 0;
    if (h <= (uintptr_t)SIG_IGN || h == (uintptr_t)trampoline) return;
    hw_slot *waited = hw_handler_enters();
    if (!waited) {
        ((handler_fn)h)(sig, si, uc); // a tail call: the handler returns straight to the restorer
        return;
    }
    ((handler_fn)h)(sig, si, uc);
    hw_handler_returns(waited);
}

/// The handler to keep in the table for a `handler` the program installs. A
/// program that read the kernel's disposition with a raw rt_sigaction holds
/// the trampoline itself, and hands it back to restore what it read: that is
/// the handler the table holds, never the trampoline (which would call itself).
static uintptr_t table_value(int sig, uintptr_t handler) {
    return handler == (uintptr_t)trampoline ? __atomic_load_n(&program_handler[sig], __ATOMIC_ACQUIRE) : handler;
}

static bool wrappable(int sig) { return sig > 0 && sig < HW_NSIG && sig != SIGPROF; }

/// The handler value that was in the table before a call replaced the kernel's disposition.
static uintptr_t current_handler(int sig) {
    return wrappable(sig) ? __atomic_load_n(&program_handler[sig], __ATOMIC_ACQUIRE) : 0;
}

/// What the program must read back for a kernel handler `h`.
static uintptr_t as_program_sees(uintptr_t h, uintptr_t program) {
    return h == (uintptr_t)trampoline ? program : h;
}

static void ensure_real(void) { HW_ENSURE_REAL_CALLS(); }

HW_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    ensure_real();
    if (sig == SIGPROF && hw_signal_owns_sigprof()) return hw_signal_set_chained(act, old);
    uintptr_t handler = act ? (uintptr_t)act->sa_handler : 0;
    if (!wrappable(sig) || handler <= (uintptr_t)SIG_IGN) {
        uintptr_t before = current_handler(sig);
        int rc = hw_real.sigaction(sig, act, old);
        if (rc == 0 && old) old->sa_handler = (__sighandler_t)as_program_sees((uintptr_t)old->sa_handler, before);
        return rc;
    }
    handler = table_value(sig, handler);
    struct sigaction k = *act; // act and old may be the same struct
    k.sa_sigaction = trampoline;
    // The table first: from the moment the kernel calls the trampoline it must find this handler.
    uintptr_t prev = __atomic_exchange_n(&program_handler[sig], handler, __ATOMIC_ACQ_REL);
    int rc = hw_real.sigaction(sig, &k, old);
    if (rc != 0) {
        int saved = errno;
        __atomic_compare_exchange_n(&program_handler[sig], &handler, prev, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        errno = saved;
        return rc;
    }
    if (old) old->sa_handler = (__sighandler_t)as_program_sees((uintptr_t)old->sa_handler, prev);
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
    if (!wrappable(sig) || !is_handler(handler)) {
        uintptr_t before = current_handler(sig);
        return (__sighandler_t)as_program_sees((uintptr_t)real(sig, handler), before);
    }
    uintptr_t h = table_value(sig, (uintptr_t)handler);
    uintptr_t prev = __atomic_exchange_n(&program_handler[sig], h, __ATOMIC_ACQ_REL);
    __sighandler_t r = real(sig, (__sighandler_t)(void (*)(void))trampoline);
    if (r == SIG_ERR) {
        int saved = errno;
        __atomic_compare_exchange_n(&program_handler[sig], &h, prev, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        errno = saved;
        return r;
    }
    return (__sighandler_t)as_program_sees((uintptr_t)r, prev);
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
