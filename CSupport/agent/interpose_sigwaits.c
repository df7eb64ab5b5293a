// Waits for signals: sigtimedwait, sigwaitinfo, sigwait, sigsuspend, pause
// and the sigpause family. Two ways our sampling signal could reach the
// program through them:
//  - its handler runs during the wait: sigsuspend and pause return EINTR
//    after any handler, sigtimedwait and sigwaitinfo after one whose signal
//    is not in their set. As for every wait (wait_scope.h) they resume when
//    only our signals ran; sigsuspend and pause therefore return only after
//    a program handler ran, as they would without us.
//  - the wait takes it off the queue: a set holding SIGPROF, on a thread that
//    blocks SIGPROF, receives our pending sample as if it were the program's.
//    The siginfo tells ours apart (engine/signal_request.c); it is dropped
//    and the wait goes on. The program's siginfo buffer is written only with
//    what it would have received.
// glibc's sigwaitinfo, sigwait and sigpause call its sigtimedwait and
// sigsuspend internally, not through the PLT, so each is wrapped on its own.
// The set and timeout go to the kernel as given; the wrapper's copy of the
// timeout and its write of the siginfo go through user_memory.h (EFAULT, as
// from the kernel, never a fault).
#include "../engine/user_memory.h"
#include "wait_scope.h"

#define SITE() ((uintptr_t)__builtin_return_address(0))

/// A wait whose set holds SIGPROF took our sampling signal off the queue.
static bool took_ours(int rc, const siginfo_t *si) { return rc == SIGPROF && hw_signal_is_ours(si); }

static int sigwait_call(const sigset_t *set, siginfo_t *si, const struct timespec *tmo, bool timed) {
    return timed ? hw_real.sigtimedwait(set, si, tmo) : hw_real.sigwaitinfo(set, si);
}

static int sigtimedwait_common(const sigset_t *set, siginfo_t *info, const struct timespec *tmo, bool timed,
                               uintptr_t site) {
    struct timespec t = { 0, 0 };
    if (timed && tmo && (!user_read(&t, tmo, sizeof t) || !ts_valid(&t)))
        return hw_real.sigtimedwait(set, info, tmo); // EFAULT or EINVAL
    if (!timed || !tmo) tmo = NULL;
    bool zero = tmo && t.tv_sec == 0 && t.tv_nsec == 0;
    wait_scope w;
    scope_enter(&w, site, HW_WAIT_SLEEP, false, timed ? HW_CALL_SIGTIMEDWAIT : HW_CALL_SIGWAITINFO);
    hw_deadline d = { 0 };
    if (tmo && !zero) d = deadline_after(CLOCK_MONOTONIC, &t);
    siginfo_t si;
    int rc = sigwait_call(set, &si, tmo, timed);
    while (took_ours(rc, &si) || scope_resume(&w, rc)) {
        struct timespec left = tmo && !zero ? deadline_left_ts(&d, &t) : t;
        if (!scope_arm(&w)) { rc = -1; errno = EINTR; break; }
        rc = sigwait_call(set, &si, tmo ? &left : NULL, timed);
    }
    // The kernel took the signal off the queue before it failed to write the siginfo.
    if (rc > 0 && info && !user_write(info, &si, sizeof si)) rc = -1; // errno EFAULT
    scope_exit(&w, rc > 0);
    return rc;
}

HW_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
    HW_ENSURE_REAL_CALLS();
    return sigtimedwait_common(set, info, timeout, true, SITE());
}

HW_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
    HW_ENSURE_REAL_CALLS();
    return sigtimedwait_common(set, info, NULL, false, SITE());
}

// glibc's sigwait retries every EINTR itself (errno then stays EINTR) and
// returns an error number.
HW_EXPORT int sigwait(const sigset_t *set, int *sig) {
    HW_ENSURE_REAL_CALLS();
    wait_scope w;
    scope_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_SIGWAIT);
    siginfo_t si;
    int rc;
    do rc = hw_real.sigwaitinfo(set, &si);
    while ((rc < 0 && errno == EINTR) || took_ours(rc, &si));
    int err = rc < 0 ? errno : 0;
    // Without us errno would read EINTR only if one of the program's handlers ran.
    bool program_ran = hw_signal_counts_now().n.program != w.start.n.program;
    scope_exit(&w, rc > 0 && !program_ran);
    if (rc > 0 && program_ran) errno = EINTR;
    if (rc < 0) return err;
    *sig = rc;
    return 0;
}

static int suspend_call(const sigset_t *mask, bool is_pause) {
    return is_pause ? hw_real.pause() : hw_real.sigsuspend(mask);
}

/// sigsuspend(mask), or pause().
static int suspend_common(const sigset_t *mask, bool is_pause, uintptr_t site) {
    wait_scope w;
    scope_enter(&w, site, HW_WAIT_SLEEP, false, is_pause ? HW_CALL_PAUSE : HW_CALL_SIGSUSPEND);
    int rc = suspend_call(mask, is_pause);
    while (scope_resume(&w, rc)) {
        if (!scope_arm(&w)) break;
        rc = suspend_call(mask, is_pause);
    }
    scope_exit(&w, false);
    return rc;
}

HW_EXPORT int sigsuspend(const sigset_t *mask) {
    HW_ENSURE_REAL_CALLS();
    return suspend_common(mask, false, SITE());
}

HW_EXPORT int pause(void) {
    HW_ENSURE_REAL_CALLS();
    return suspend_common(NULL, true, SITE());
}

// glibc's sigpause: the X/Open form unblocks one signal of the current mask,
// the BSD form takes a mask of the first 32 signals.
static int sigpause_common(int sig_or_mask, int is_sig, uintptr_t site) {
    sigset_t set;
    if (is_sig != 0) {
        if (sigprocmask(0, NULL, &set) < 0 || sigdelset(&set, sig_or_mask) < 0) return -1;
    } else {
        sigemptyset(&set);
        set.__val[0] = (unsigned int)sig_or_mask;
    }
    return suspend_common(&set, false, site);
}

HW_EXPORT int __sigpause(int sig_or_mask, int is_sig) {
    HW_ENSURE_REAL_CALLS();
    return sigpause_common(sig_or_mask, is_sig, SITE());
}

HW_EXPORT int __xpg_sigpause(int sig) {
    HW_ENSURE_REAL_CALLS();
    return sigpause_common(sig, 1, SITE());
}

// <signal.h> maps the name sigpause to __xpg_sigpause; the symbol
// "sigpause" itself is the BSD form.
HW_EXPORT int hw_bsd_sigpause(int mask) __asm__("sigpause");
HW_EXPORT int hw_bsd_sigpause(int mask) {
    HW_ENSURE_REAL_CALLS();
    return sigpause_common(mask, 0, SITE());
}
