// Wrappers around the calls a thread waits in. For a watched thread each one
// is either
//  - the loop's own idle wait: it ends the busy period before waiting and
//    starts the next one after (the heartbeat), or
//  - a wait inside a callback (usleep, poll with a timeout, ...): part of the
//    busy period. The registers are captured first so the watchdog can
//    sample this thread without a signal while it blocks.
// Either way the host must never see an EINTR caused by our sampling signal.
// A signal lands in a wait only when it raced with the thread entering it;
// we tell that case apart by the handler's hit counter and resume the wait
// for the time that was left. The program's own signals still interrupt.
#include "agent_internal.h"

#include <errno.h>
#include <stdint.h>

#define NS_PER_S 1000000000ull

// Another library's constructor may wait before ours has run.
#define ENSURE_REAL_CALLS() \
    do { if (__builtin_expect(!hw_real.clock_nanosleep, 0)) hw_resolve_real_calls(); } while (0)

typedef struct wait_scope {
    hw_slot *slot;
    bool loop;
    hw_blocked_context ctx;
    uint32_t hits;
} wait_scope;

// Enter a wait made from `site`. Returns false when the thread is not watched.
// always_inline: the register capture must describe the wrapper's own frame.
static inline __attribute__((always_inline)) bool scope_enter(wait_scope *w, uintptr_t site,
                                                              enum hw_wait_kind kind, bool has_fds,
                                                              int call) {
    w->slot = hw_current_slot();
    if (!w->slot) return false;
    w->loop = hw_is_loop_wait(w->slot, site, kind, has_fds);
    if (w->loop) {
        hw_heartbeat_wait_begin(w->slot);
    } else {
        hw_capture_context(&w->ctx);
        hw_blocked_begin(w->slot, &w->ctx, call);
    }
    return true;
}

static void scope_exit(wait_scope *w) {
    int saved = errno;
    if (w->loop) hw_heartbeat_wait_end(w->slot);
    else hw_blocked_end(w->slot);
    errno = saved;
}

/// Before each attempt at the real call.
static inline void scope_arm(wait_scope *w) { w->hits = hw_signal_hits(w->slot); }
/// True when the call failed with EINTR and only our sampler could have caused it.
static inline bool interrupted_by_us(const wait_scope *w, int rc) {
    return rc < 0 && errno == EINTR && hw_signal_hits(w->slot) != w->hits;
}

static uint64_t ts_ns(const struct timespec *ts) {
    return (uint64_t)ts->tv_sec * NS_PER_S + (uint64_t)ts->tv_nsec;
}
static struct timespec ns_ts(uint64_t ns) {
    struct timespec ts = { (time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S) };
    return ts;
}
/// Nanoseconds left until `deadline`, 0 when passed.
static uint64_t left_ns(uint64_t deadline) {
    uint64_t now = hw_now_ns();
    return deadline > now ? deadline - now : 0;
}
static int left_ms(uint64_t deadline) {
    uint64_t ns = left_ns(deadline);
    return (int)((ns + 999999) / 1000000);
}

// ---- fd-set and epoll waits -------------------------------------------------

HW_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask) {
    ENSURE_REAL_CALLS();
    if (tmo && tmo->tv_sec == 0 && tmo->tv_nsec == 0) return hw_real.ppoll(fds, n, tmo, mask);
    wait_scope w;
    if (!scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_FDSET, n > 0, HW_CALL_PPOLL))
        return hw_real.ppoll(fds, n, tmo, mask);
    uint64_t deadline = tmo ? hw_now_ns() + ts_ns(tmo) : 0;
    struct timespec left = tmo ? *tmo : (struct timespec){0, 0};
    int rc;
    for (;;) {
        scope_arm(&w);
        rc = hw_real.ppoll(fds, n, tmo ? &left : NULL, mask);
        if (!interrupted_by_us(&w, rc)) break;
        if (tmo) left = ns_ts(left_ns(deadline));
    }
    scope_exit(&w);
    return rc;
}

static int poll_common(struct pollfd *fds, nfds_t n, int timeout, uintptr_t site,
                       int (*real)(struct pollfd *, nfds_t, int, size_t), size_t fdslen) {
    wait_scope w;
    if (timeout == 0 || !scope_enter(&w, site, HW_WAIT_FDSET, n > 0, HW_CALL_POLL))
        return real ? real(fds, n, timeout, fdslen) : hw_real.poll(fds, n, timeout);
    uint64_t deadline = timeout > 0 ? hw_now_ns() + (uint64_t)timeout * 1000000ull : 0;
    int left = timeout, rc;
    for (;;) {
        scope_arm(&w);
        rc = real ? real(fds, n, left, fdslen) : hw_real.poll(fds, n, left);
        if (!interrupted_by_us(&w, rc)) break;
        if (timeout > 0) left = left_ms(deadline);
    }
    scope_exit(&w);
    return rc;
}

HW_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout) {
    ENSURE_REAL_CALLS();
    return poll_common(fds, n, timeout, (uintptr_t)__builtin_return_address(0), NULL, 0);
}

HW_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen) {
    ENSURE_REAL_CALLS();
    return poll_common(fds, n, timeout, (uintptr_t)__builtin_return_address(0), hw_real.poll_chk, fdslen);
}

HW_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask,
                size_t fdslen) {
    (void)fdslen; // the fortify check only guards against n exceeding the array
    if (hw_real.ppoll_chk && (!tmo || tmo->tv_sec || tmo->tv_nsec) && !hw_current_slot())
        return hw_real.ppoll_chk(fds, n, tmo, mask, fdslen);
    return ppoll(fds, n, tmo, mask);
}

HW_EXPORT int select(int nfds, fd_set *r, fd_set *wr, fd_set *e, struct timeval *tv) {
    ENSURE_REAL_CALLS();
    if (tv && tv->tv_sec == 0 && tv->tv_usec == 0) return hw_real.select(nfds, r, wr, e, tv);
    wait_scope w;
    if (!scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_FDSET, nfds > 0, HW_CALL_SELECT))
        return hw_real.select(nfds, r, wr, e, tv);
    // Linux select() updates *tv with the time left, so a retry just reuses it;
    // the fd sets are rewritten on return, so keep the caller's copies.
    fd_set rs, ws, es;
    if (r) rs = *r;
    if (wr) ws = *wr;
    if (e) es = *e;
    int rc;
    for (;;) {
        scope_arm(&w);
        rc = hw_real.select(nfds, r, wr, e, tv);
        if (!interrupted_by_us(&w, rc)) break;
        if (r) *r = rs;
        if (wr) *wr = ws;
        if (e) *e = es;
    }
    scope_exit(&w);
    return rc;
}

HW_EXPORT int pselect(int nfds, fd_set *r, fd_set *wr, fd_set *e, const struct timespec *tmo, const sigset_t *mask) {
    ENSURE_REAL_CALLS();
    if (tmo && tmo->tv_sec == 0 && tmo->tv_nsec == 0) return hw_real.pselect(nfds, r, wr, e, tmo, mask);
    wait_scope w;
    if (!scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_FDSET, nfds > 0, HW_CALL_PSELECT))
        return hw_real.pselect(nfds, r, wr, e, tmo, mask);
    uint64_t deadline = tmo ? hw_now_ns() + ts_ns(tmo) : 0;
    struct timespec left = tmo ? *tmo : (struct timespec){0, 0};
    fd_set rs, ws, es;
    if (r) rs = *r;
    if (wr) ws = *wr;
    if (e) es = *e;
    int rc;
    for (;;) {
        scope_arm(&w);
        rc = hw_real.pselect(nfds, r, wr, e, tmo ? &left : NULL, mask);
        if (!interrupted_by_us(&w, rc)) break;
        if (tmo) left = ns_ts(left_ns(deadline));
        if (r) *r = rs;
        if (wr) *wr = ws;
        if (e) *e = es;
    }
    scope_exit(&w);
    return rc;
}

static int epoll_common(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask,
                        bool with_mask, uintptr_t site) {
    wait_scope w;
    if (timeout == 0 || !scope_enter(&w, site, HW_WAIT_EPOLL, true, with_mask ? HW_CALL_EPOLL_PWAIT : HW_CALL_EPOLL_WAIT))
        return with_mask ? hw_real.epoll_pwait(epfd, ev, max, timeout, mask)
                         : hw_real.epoll_wait(epfd, ev, max, timeout);
    uint64_t deadline = timeout > 0 ? hw_now_ns() + (uint64_t)timeout * 1000000ull : 0;
    int left = timeout, rc;
    for (;;) {
        scope_arm(&w);
        rc = with_mask ? hw_real.epoll_pwait(epfd, ev, max, left, mask) : hw_real.epoll_wait(epfd, ev, max, left);
        if (!interrupted_by_us(&w, rc)) break;
        if (timeout > 0) left = left_ms(deadline);
    }
    scope_exit(&w);
    return rc;
}

HW_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout) {
    ENSURE_REAL_CALLS();
    return epoll_common(epfd, ev, max, timeout, NULL, false, (uintptr_t)__builtin_return_address(0));
}

HW_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask) {
    ENSURE_REAL_CALLS();
    return epoll_common(epfd, ev, max, timeout, mask, true, (uintptr_t)__builtin_return_address(0));
}

// ---- sleeps -----------------------------------------------------------------

/// After our signal cut a sleep short: sleep on to `deadline` (CLOCK_MONOTONIC).
/// Returns 0, or -1 with EINTR when one of the program's own signals arrives.
static int sleep_on_until(wait_scope *w, uint64_t deadline) {
    struct timespec until = ns_ts(deadline);
    for (;;) {
        scope_arm(w);
        int err = hw_real.clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
        if (err == 0) return 0;
        if (err != EINTR) { errno = err; return -1; }
        if (hw_signal_hits(w->slot) == w->hits) { errno = EINTR; return -1; }
    }
}

HW_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem) {
    ENSURE_REAL_CALLS();
    wait_scope w;
    if (!req || !scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_SLEEP, false, HW_CALL_NANOSLEEP))
        return hw_real.nanosleep(req, rem);
    uint64_t deadline = hw_now_ns() + ts_ns(req);
    scope_arm(&w);
    int rc = hw_real.nanosleep(req, rem);
    if (interrupted_by_us(&w, rc)) {
        rc = sleep_on_until(&w, deadline);
        if (rc < 0 && errno == EINTR && rem) *rem = ns_ts(left_ns(deadline));
    }
    scope_exit(&w);
    return rc;
}

HW_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    ENSURE_REAL_CALLS();
    wait_scope w;
    if (!req || !scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_SLEEP, false, HW_CALL_CLOCK_NANOSLEEP))
        return hw_real.clock_nanosleep(clock, flags, req, rem);
    // Returns an error number, not -1/errno.
    int err;
    for (;;) {
        uint32_t hits = hw_signal_hits(w.slot);
        err = hw_real.clock_nanosleep(clock, flags, req, rem);
        if (err != EINTR || hw_signal_hits(w.slot) == hits) break;
        if (!(flags & TIMER_ABSTIME)) {
            // Relative sleep: the kernel wrote the time left to rem, if given.
            if (!rem) break; // cannot know the time left: report as the kernel did
            static __thread struct timespec carry;
            carry = *rem;
            req = &carry;
        }
    }
    scope_exit(&w);
    return err;
}

HW_EXPORT int usleep(useconds_t usec) {
    ENSURE_REAL_CALLS();
    wait_scope w;
    if (usec == 0 || !scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_SLEEP, false, HW_CALL_USLEEP))
        return hw_real.usleep(usec);
    uint64_t deadline = hw_now_ns() + (uint64_t)usec * 1000ull;
    scope_arm(&w);
    int rc = hw_real.usleep(usec);
    if (interrupted_by_us(&w, rc)) rc = sleep_on_until(&w, deadline);
    scope_exit(&w);
    return rc;
}

HW_EXPORT unsigned sleep(unsigned seconds) {
    ENSURE_REAL_CALLS();
    wait_scope w;
    if (seconds == 0 || !scope_enter(&w, (uintptr_t)__builtin_return_address(0), HW_WAIT_SLEEP, false, HW_CALL_SLEEP))
        return hw_real.sleep(seconds);
    uint64_t deadline = hw_now_ns() + (uint64_t)seconds * NS_PER_S;
    scope_arm(&w);
    unsigned left = hw_real.sleep(seconds);
    if (left > 0 && hw_signal_hits(w.slot) != w.hits) {
        left = sleep_on_until(&w, deadline) == 0 ? 0 : (unsigned)((left_ns(deadline) + NS_PER_S - 1) / NS_PER_S);
    }
    scope_exit(&w);
    return left;
}
