// The SIGPROF disposition, shared by our sampler and the program.
//
// The program keeps its own SIGPROF, fully. The kernel holds one disposition
// per signal, so ours stays installed and the program's sigaction(SIGPROF)
// (routed here by the agent) is recorded as `chained`, reported back exactly
// as the kernel would report it, and applied:
//  - a SIGPROF without our cookie goes to the program's handler as if we
//    were not there; SIG_DFL kills the process as it would have; SIG_IGN
//    drops it (and counts it as a signal the program never sees);
//  - SA_RESETHAND is done here: one delivery, then the program reads SIG_DFL;
//  - the rest of the program's sigaction is given to the kernel with our
//    handler, see register_ours.
// Every handler run is counted per thread (hw_tls_signal_counts) so that the
// agent's waits can tell whose signal cut them short.
#include "engine_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* glibc sets it (and its restorer) on every sigaction */
#endif

__thread hw_signal_counts hw_tls_signal_counts __attribute__((tls_model("initial-exec")));

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

// libc's own sigaction, never the agent's exported wrapper. Resolved once,
// outside any handler; sigaction itself is async-signal-safe.
static sigaction_fn libc_sigaction;
static void (*libc_restorer)(void); // what glibc installs as sa_restorer

// The program's disposition for SIGPROF, as the kernel would report it.
static struct {
    uintptr_t handler; // atomic: SIG_DFL, SIG_IGN or the function; stored last
    uint32_t flags;    // atomic
    uint64_t mask;     // atomic: the kernel's 64-signal mask
    void (*restorer)(void);
} chained;
static bool installed; // atomic
// Our handler (sampler_signal.c), set once before it is first installed.
static hw_sigprof_handler ours;

// SIGNAL-SAFE.
bool hw_signal_owns_sigprof(void) { return __atomic_load_n(&installed, __ATOMIC_ACQUIRE); }

// SIGNAL-SAFE: memset and sigaction are async-signal-safe.
//
// The flags our handler is registered with. The kernel applies them to every
// SIGPROF, ours and the program's alike, so:
//  - When the program has a SIGPROF handler, its sa_mask and its SA_RESTART,
//    SA_ONSTACK and SA_NODEFER are the kernel's: its profiling ticks
//    interrupt a blocking read (EINTR) exactly when they would without us,
//    its handler runs on the stack it asked for, with the signals it asked
//    to block blocked from the first instruction (a mask set by hand inside
//    the handler would leave a window open). Our own samples then run under
//    the same rules; that costs nothing the program can see: a sample is only
//    sent to a thread /proc shows running, the agent's waits resume after
//    one, and a program whose profiler runs without SA_RESTART already copes
//    with a SIGPROF cutting any syscall short.
//  - When it ignores SIGPROF, the kernel ignores it too: a SIGPROF sent to
//    the program (by itself, another thread, another process) is then
//    dropped by the kernel as it would be plain, never interrupts a raw
//    sleep or an unwrapped call, /proc/self/status shows it ignored, and the
//    ignore survives exec. Our own samples are dropped with them: with the
//    fallback sampler running threads get no CPU samples while it lasts, and
//    the first request that finds it so writes a note (hw_signal_ignored).
//  - When it has none (SIG_DFL), the program never receives a
//    SIGPROF, so every one must be invisible: SA_RESTART, so that a
//    restartable syscall a sample races into resumes unseen; SA_ONSTACK, so
//    that a thread near the end of its stack takes the sample on its
//    alternate stack (if it has one) instead of faulting; no sa_mask, so no
//    program signal waits behind a sample.
static int register_ours(void) {
    struct sigaction k;
    memset(&k, 0, sizeof k);
    k.sa_sigaction = ours;
    uintptr_t program = __atomic_load_n(&chained.handler, __ATOMIC_ACQUIRE);
    if (program == (uintptr_t)SIG_IGN) {
        k.sa_handler = SIG_IGN;
    } else if (program > (uintptr_t)SIG_IGN) {
        uint64_t mask = __atomic_load_n(&chained.mask, __ATOMIC_RELAXED);
        memcpy(&k.sa_mask, &mask, sizeof mask);
        k.sa_flags = SA_SIGINFO
                   | ((int)__atomic_load_n(&chained.flags, __ATOMIC_RELAXED) & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
    } else {
        k.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    }
    return libc_sigaction(SIGPROF, &k, NULL);
}

// SIGNAL-SAFE: the program's SIGPROF dies of its default action, as it would have.
static void die_by_default(void) {
    // Restore the default and re-raise; the signal stays blocked until this
    // handler returns, then kills. The raw syscall needs no restorer for SIG_DFL.
    struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { 0 };
    dfl.handler = SIG_DFL;
    syscall(SYS_rt_sigaction, SIGPROF, &dfl, NULL, sizeof dfl.mask);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGPROF);
}

// SIGNAL-SAFE: delivers a SIGPROF that is not ours as the kernel would have without us.
void hw_sigprof_chain(int sig, void *siv, void *uc) {
    siginfo_t *si = siv;
    uintptr_t h = __atomic_load_n(&chained.handler, __ATOMIC_ACQUIRE);
    if (h == (uintptr_t)SIG_IGN) { hw_signal_count_unseen(); return; }
    if (h == (uintptr_t)SIG_DFL) { die_by_default(); return; }
    if (__atomic_load_n(&chained.flags, __ATOMIC_ACQUIRE) & SA_RESETHAND) {
        // One delivery, as the kernel does it: from now on the program reads SIG_DFL.
        uintptr_t dfl = (uintptr_t)SIG_DFL;
        if (!__atomic_compare_exchange_n(&chained.handler, &h, dfl, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            hw_sigprof_chain(sig, si, uc); // the program changed it meanwhile: deliver to what is there now
            return;
        }
        int saved = errno;
        register_ours();
        errno = saved;
    }
    hw_signal_count_program();
    // Called with (sig, siginfo, ucontext) whether or not the program asked for
    // SA_SIGINFO: on x86_64 the kernel passes these registers to every handler.
    // It may jump out of the loop's wait (handler_in_wait.c).
    hw_slot *waited = hw_handler_enters();
    ((hw_sigprof_handler)h)(sig, si, uc);
    hw_handler_returns(waited);
}

static void store_chained(const struct sigaction *act, bool via_libc) {
    uint64_t mask = 0;
    memcpy(&mask, &act->sa_mask, sizeof mask);
    // The kernel never keeps SIGKILL or SIGSTOP in a handler's mask.
    mask &= ~((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)));
    uint32_t flags = (uint32_t)act->sa_flags;
    chained.restorer = act->sa_restorer;
    if (via_libc) {
        flags |= SA_RESTORER;
        chained.restorer = libc_restorer;
    }
    __atomic_store_n(&chained.flags, flags, __ATOMIC_RELAXED);
    __atomic_store_n(&chained.mask, mask, __ATOMIC_RELAXED);
    __atomic_store_n(&chained.handler, (uintptr_t)act->sa_handler, __ATOMIC_RELEASE);
}

int hw_sigprof_install(hw_sigprof_handler handler) {
    ours = handler;
    if (!libc_sigaction) {
        libc_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        if (!libc_sigaction) libc_sigaction = sigaction; // no preload agent in front of libc
    }
    struct sigaction current, mine;
    if (libc_sigaction(SIGPROF, NULL, &current) != 0) return -1;
    if (current.sa_sigaction != ours) store_chained(&current, false); // what the program had
    if (register_ours() != 0) return -1;
    if (libc_sigaction(SIGPROF, NULL, &mine) == 0) libc_restorer = mine.sa_restorer;
    __atomic_store_n(&installed, true, __ATOMIC_RELEASE);
    return 0;
}

// SIGNAL-SAFE (sigaction may be called from a handler).
int hw_signal_set_chained(const void *actv, void *oldv) {
    const struct sigaction *act = actv;
    struct sigaction *old = oldv;
    struct sigaction next;
    if (act) next = *act; // act and old may be the same struct
    if (old) {
        // As glibc fills it from the kernel's answer: the kernel knows 64
        // signals (glibc copies the rest of sa_mask from its own stack).
        uint64_t mask = __atomic_load_n(&chained.mask, __ATOMIC_RELAXED);
        old->sa_handler = (__sighandler_t)__atomic_load_n(&chained.handler, __ATOMIC_ACQUIRE);
        memset(&old->sa_mask, 0, sizeof old->sa_mask);
        memcpy(&old->sa_mask, &mask, sizeof mask);
        old->sa_flags = (int)__atomic_load_n(&chained.flags, __ATOMIC_RELAXED);
        old->sa_restorer = chained.restorer;
    }
    if (act) {
        store_chained(&next, true);
        if (register_ours() != 0) return -1;
        if ((uintptr_t)next.sa_handler > (uintptr_t)SIG_IGN) hw_write_note(0, HW_NOTE_SIGNAL_REPLACED, 0);
    }
    return 0;
}

// SIGNAL-SAFE. The program ignores SIGPROF, so the kernel does (register_ours):
// a signal of ours would be dropped. The first caller writes the note.
bool hw_signal_ignored(void) {
    static uint32_t noted;
    if (__atomic_load_n(&chained.handler, __ATOMIC_ACQUIRE) != (uintptr_t)SIG_IGN) return false;
    if (!__atomic_exchange_n(&noted, 1, __ATOMIC_ACQ_REL)) hw_write_note(0, HW_NOTE_SIGPROF_IGNORED, 0);
    return true;
}
