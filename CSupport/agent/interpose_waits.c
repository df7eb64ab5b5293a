// Wrappers around the fd-set and epoll waits. For a watched thread each one
// is either
//  - the loop's own idle wait: it ends the busy period before waiting and
//    starts the next one after (the heartbeat), or
//  - a wait inside a callback (poll with a timeout, ...): part of the busy
//    period. The registers are captured first so the watchdog can sample this
//    thread without a signal while it blocks.
// Either way the program must never see an EINTR caused by our sampling
// signal. A sample lands in a wait only when it raced with the thread
// entering it; wait_scope.h tells that case apart from the program's own
// signals, and the wait resumes for the time that was left, on the same
// clock and with the same call the program made. Sleeps are in
// interpose_sleeps.c, signal waits in interpose_sigwaits.c.
#include "wait_scope.h"

#define SITE() ((uintptr_t)__builtin_return_address(0))

static int ppoll_common(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask,
                        uintptr_t site) {
    if (tmo && (!ts_valid(tmo) || (tmo->tv_sec == 0 && tmo->tv_nsec == 0))) return hw_real.ppoll(fds, n, tmo, mask);
    wait_scope w;
    scope_enter(&w, site, HW_WAIT_FDSET, n > 0, HW_CALL_PPOLL);
    hw_deadline d = { 0 };
    if (tmo) d = deadline_after_ts_from(scope_monotonic_ns(&w), tmo);
    int rc = hw_real.ppoll(fds, n, tmo, mask);
    while (scope_resume(&w, rc)) {
        struct timespec left = tmo ? deadline_left_ts(&d, tmo) : (struct timespec){ 0, 0 };
        if (!scope_arm(&w)) break;
        rc = hw_real.ppoll(fds, n, tmo ? &left : NULL, mask);
    }
    scope_exit(&w, rc >= 0);
    return rc;
}

HW_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask) {
    HW_ENSURE_REAL_CALLS();
    return ppoll_common(fds, n, tmo, mask, SITE());
}

// poll and its fortified form (`chk` is then the real __poll_chk, which
// aborts when n exceeds the array: the same check on every attempt).
static int poll_common(struct pollfd *fds, nfds_t n, int timeout, uintptr_t site,
                       int (*chk)(struct pollfd *, nfds_t, int, size_t), size_t fdslen) {
    wait_scope w;
    if (timeout == 0) return chk ? chk(fds, n, timeout, fdslen) : hw_real.poll(fds, n, timeout);
    scope_enter(&w, site, HW_WAIT_FDSET, n > 0, HW_CALL_POLL);
    hw_deadline d = { 0 };
    if (timeout > 0) d = deadline_after_ns_from(scope_monotonic_ns(&w), (uint64_t)timeout * 1000000ull);
    int rc = chk ? chk(fds, n, timeout, fdslen) : hw_real.poll(fds, n, timeout);
    while (scope_resume(&w, rc)) {
        int left = timeout > 0 ? deadline_left_ms(&d) : timeout;
        if (!scope_arm(&w)) break;
        rc = chk ? chk(fds, n, left, fdslen) : hw_real.poll(fds, n, left);
    }
    scope_exit(&w, rc >= 0);
    return rc;
}

HW_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout) {
    HW_ENSURE_REAL_CALLS();
    return poll_common(fds, n, timeout, SITE(), NULL, 0);
}

HW_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen) {
    HW_ENSURE_REAL_CALLS();
    return poll_common(fds, n, timeout, SITE(), hw_real.poll_chk, fdslen);
}

HW_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask,
                          size_t fdslen) {
    HW_ENSURE_REAL_CALLS();
    // The fortify check guards against n exceeding the array: the real one aborts as it would.
    if (hw_real.ppoll_chk && n > fdslen / sizeof *fds) return hw_real.ppoll_chk(fds, n, tmo, mask, fdslen);
    return ppoll_common(fds, n, tmo, mask, SITE());
}

/// The deadline of a select timeval, which glibc accepts with tv_usec of a
/// million or more (it normalizes them).
static hw_deadline timeval_deadline(const struct timeval *tv) {
    uint64_t extra_s = (uint64_t)tv->tv_usec / 1000000u;
    hw_deadline d = { 0, CLOCK_MONOTONIC, true };
    if (tv->tv_sec >= HW_FOREVER_S || extra_s >= (uint64_t)(HW_FOREVER_S - tv->tv_sec)) return d;
    uint64_t ns = ((uint64_t)tv->tv_sec + extra_s) * HW_NS_PER_S + ((uint64_t)tv->tv_usec % 1000000u) * 1000u;
    return deadline_after_ns(CLOCK_MONOTONIC, ns);
}

// The fd sets are never copied: select(2) leaves them unmodified when it
// fails (the kernel writes them back only on success), so a resumed call
// finds them as the program set them. A copy would have to guess their
// size; the program may have allocated exactly the bytes nfds needs.
HW_EXPORT int select(int nfds, fd_set *r, fd_set *wr, fd_set *e, struct timeval *tv) {
    HW_ENSURE_REAL_CALLS();
    if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0 || (tv->tv_sec == 0 && tv->tv_usec == 0)))
        return hw_real.select(nfds, r, wr, e, tv);
    wait_scope w;
    scope_enter(&w, SITE(), HW_WAIT_FDSET, nfds > 0, HW_CALL_SELECT);
    hw_deadline d = { 0 };
    if (tv) d = timeval_deadline(tv);
    int rc = hw_real.select(nfds, r, wr, e, tv);
    while (scope_resume(&w, rc)) {
        // Linux wrote the time left into *tv; when the deadline is for ever
        // that is already the request to resume with.
        if (tv && !d.forever) {
            uint64_t us = (deadline_left_ns(&d) + 999) / 1000; // up: never time out early
            tv->tv_sec = (time_t)(us / 1000000u);
            tv->tv_usec = (suseconds_t)(us % 1000000u);
        }
        if (!scope_arm(&w)) break;
        rc = hw_real.select(nfds, r, wr, e, tv);
    }
    scope_exit(&w, rc >= 0);
    return rc;
}

HW_EXPORT int pselect(int nfds, fd_set *r, fd_set *wr, fd_set *e, const struct timespec *tmo, const sigset_t *mask) {
    HW_ENSURE_REAL_CALLS();
    if (tmo && (!ts_valid(tmo) || (tmo->tv_sec == 0 && tmo->tv_nsec == 0)))
        return hw_real.pselect(nfds, r, wr, e, tmo, mask);
    wait_scope w;
    scope_enter(&w, SITE(), HW_WAIT_FDSET, nfds > 0, HW_CALL_PSELECT);
    hw_deadline d = { 0 };
    if (tmo) d = deadline_after_ts_from(scope_monotonic_ns(&w), tmo);
    int rc = hw_real.pselect(nfds, r, wr, e, tmo, mask);
    while (scope_resume(&w, rc)) { // fd sets: see select
        struct timespec left = tmo ? deadline_left_ts(&d, tmo) : (struct timespec){ 0, 0 };
        if (!scope_arm(&w)) break;
        rc = hw_real.pselect(nfds, r, wr, e, tmo ? &left : NULL, mask);
    }
    scope_exit(&w, rc >= 0);
    return rc;
}

static int epoll_call(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask, bool with_mask) {
    return with_mask ? hw_real.epoll_pwait(epfd, ev, max, timeout, mask) : hw_real.epoll_wait(epfd, ev, max, timeout);
}

static int epoll_common(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask,
                        bool with_mask, uintptr_t site) {
    wait_scope w;
    if (timeout == 0) return epoll_call(epfd, ev, max, timeout, mask, with_mask);
    scope_enter(&w, site, HW_WAIT_EPOLL, true, with_mask ? HW_CALL_EPOLL_PWAIT : HW_CALL_EPOLL_WAIT);
    hw_deadline d = { 0 };
    if (timeout > 0) d = deadline_after_ns_from(scope_monotonic_ns(&w), (uint64_t)timeout * 1000000ull);
    int rc = epoll_call(epfd, ev, max, timeout, mask, with_mask);
    while (scope_resume(&w, rc)) {
        int left = timeout > 0 ? deadline_left_ms(&d) : timeout;
        if (!scope_arm(&w)) break;
        rc = epoll_call(epfd, ev, max, left, mask, with_mask);
    }
    scope_exit(&w, rc >= 0);
    return rc;
}

HW_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout) {
    HW_ENSURE_REAL_CALLS();
    return epoll_common(epfd, ev, max, timeout, NULL, false, SITE());
}

HW_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask) {
    HW_ENSURE_REAL_CALLS();
    return epoll_common(epfd, ev, max, timeout, mask, true, SITE());
}
