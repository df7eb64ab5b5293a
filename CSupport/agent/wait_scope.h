// What every interposed wait shares: the heartbeat / blocked-call bookkeeping
// around the real call, and the rule that decides whether an EINTR was ours.
//
// A wait is resumed only when it failed with EINTR, one of our sampling
// signals (or another signal the program never sees, such as a SIGPROF it
// ignores) ran its handler during that attempt, and none of the program's
// own handlers ran since the wait began. The counts come from the handlers
// themselves (engine/sampler_signal.c for ours, the agent's trampolines in
// interpose_signals.c for the program's), per thread, so the rule is exact:
// a program signal that lands in the same attempt as ours still ends the
// wait, and a handler we do not know (installed with a raw syscall) is
// treated as the program's. What is left: a program signal that lands
// between our decision to resume and the resumed syscall's entry (a few
// hundred ns, only after one of ours) is handled without ending the wait.
// Waits that take a signal mask (ppoll, pselect, epoll_pwait, sigsuspend)
// have no such window for the signals that mask blocks.
//
// Everything here is async-signal-safe: TLS loads, atomics, TSC stamps, clock_gettime.
#ifndef HANGWATCH_WAIT_SCOPE_H
#define HANGWATCH_WAIT_SCOPE_H
#include "agent_internal.h"

#include <errno.h>
#include <stdint.h>

typedef struct wait_scope {
    hw_slot *slot;
    bool loop;
    int saved_errno;           // errno at entry: what a successful call leaves
    hw_signal_counts start;    // at entry: a program handler after this ran during the wait
    hw_signal_counts attempt;  // before the attempt in progress
    uint64_t entered_ns;       // CLOCK_MONOTONIC at entry, when the heartbeat read it; else 0
    bool entered_by_tsc;       // entered_ns is a TSC stamp (within tens of µs of the clock)
} wait_scope;

// Enter a wait made from `site`. On a watched thread it is also a heartbeat
// or a blocked call; on any other thread only the resume rule applies (our
// signals mostly go to watched threads, but the watchdog also samples the
// thread holding a lock a watched thread waits for). always_inline: the
// register capture must describe the wrapper's own frame.
static inline __attribute__((always_inline)) void scope_enter(wait_scope *w, uintptr_t site,
                                                              enum hw_wait_kind kind, bool has_fds,
                                                              int call) {
    w->saved_errno = errno;
    w->start = w->attempt = hw_signal_counts_now();
    w->slot = hw_current_slot();
    w->loop = false;
    w->entered_ns = 0;
    w->entered_by_tsc = false;
    if (!w->slot) return;
    w->loop = hw_is_loop_wait(w->slot, site, kind, has_fds);
    if (w->loop) {
        // One clock read serves the heartbeat and the wait's deadline (scope_monotonic_ns).
        w->entered_ns = hw_stamp_ns(&w->entered_by_tsc);
        hw_heartbeat_wait_begin_at(w->slot, w->entered_ns);
        // From here a program handler that jumps out of the wait ends it (handler_in_wait.c).
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        hw_tls_in_loop_wait = w->slot;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } else {
        hw_blocked_context ctx;
        hw_capture_context(&ctx);
        hw_blocked_begin(w->slot, &ctx, call);
    }
}

/// Leave the wait. `ok`: the call succeeded, so errno is what it was at entry
/// (an EINTR of ours on the way must not show).
static inline void scope_exit(wait_scope *w, bool ok) {
    int saved = ok ? w->saved_errno : errno;
    if (w->loop) {
        hw_tls_in_loop_wait = NULL;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        hw_heartbeat_wait_end(w->slot);
    }
    else if (w->slot) hw_blocked_end(w->slot);
    errno = saved;
}

/// After an attempt failed with EINTR: true when only our signals can have caused it.
static inline bool scope_ours_only(const wait_scope *w) {
    hw_signal_counts now = hw_signal_counts_now();
    return now.n.unseen != w->attempt.n.unseen && now.n.program == w->start.n.program;
}

/// Just before a resumed attempt. False when a program handler ran since the
/// wait began: the wait would have ended, so the caller returns EINTR.
static inline bool scope_arm(wait_scope *w) {
    w->attempt = hw_signal_counts_now();
    return w->attempt.n.program == w->start.n.program;
}

/// The attempt failed with EINTR and should be resumed.
static inline bool scope_resume(wait_scope *w, int rc) {
    return rc < 0 && errno == EINTR && scope_ours_only(w);
}

// ---- time left ---------------------------------------------------------------

#define HW_NS_PER_S 1000000000ll
// Timeouts at least this long are "for ever": the kernel's own clocks
// saturate at about 292 years. A resumed wait passes the original request
// again instead of doing arithmetic that could overflow.
#define HW_FOREVER_S (200ll * 366 * 24 * 3600)

/// A point in time on one clock, or "for ever".
typedef struct hw_deadline {
    uint64_t at_ns;
    clockid_t clock;
    bool forever;
} hw_deadline;

// SIGNAL-SAFE.
static inline uint64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * HW_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/// A relative timespec the kernel accepts (others get EINVAL from the real call).
static inline bool ts_valid(const struct timespec *ts) {
    return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < HW_NS_PER_S;
}

static inline struct timespec ns_ts(uint64_t ns) {
    struct timespec ts = { (time_t)(ns / HW_NS_PER_S), (long)(ns % HW_NS_PER_S) };
    return ts;
}

/// The deadline `rel` (valid) from now on `clock`.
static inline hw_deadline deadline_after(clockid_t clock, const struct timespec *rel) {
    hw_deadline d = { 0, clock, rel->tv_sec >= HW_FOREVER_S };
    if (!d.forever) d.at_ns = clock_ns(clock) + (uint64_t)rel->tv_sec * HW_NS_PER_S + (uint64_t)rel->tv_nsec;
    return d;
}

/// A TSC stamp is within HW_STAMP_MAX_ERROR_NS (20 µs) of CLOCK_MONOTONIC, or
/// stamps are clock_gettime (tsc_clock.c): a deadline built on a TSC stamp
/// is pushed this much later, so that a resumed wait never ends before the
/// program's deadline (and ends at most about 0.1 ms after it).
#define HW_STAMP_SLACK_NS (100 * 1000ull)

/// CLOCK_MONOTONIC at the wait's entry when the heartbeat already stamped it
/// there (a TSC stamp plus HW_STAMP_SLACK_NS), else now. Saves the loop's
/// wait a clock read.
static inline uint64_t scope_monotonic_ns(const wait_scope *w) {
    if (!w->entered_ns) return clock_ns(CLOCK_MONOTONIC);
    return w->entered_by_tsc ? w->entered_ns + HW_STAMP_SLACK_NS : w->entered_ns;
}

/// A CLOCK_MONOTONIC deadline `rel_ns` after `now`.
static inline hw_deadline deadline_after_ns_from(uint64_t now, uint64_t rel_ns) {
    hw_deadline d = { 0, CLOCK_MONOTONIC, rel_ns >= (uint64_t)HW_FOREVER_S * HW_NS_PER_S };
    if (!d.forever) d.at_ns = now + rel_ns;
    return d;
}

/// A CLOCK_MONOTONIC deadline a (valid) relative timespec after `now`.
static inline hw_deadline deadline_after_ts_from(uint64_t now, const struct timespec *rel) {
    if (rel->tv_sec >= HW_FOREVER_S) return (hw_deadline){ 0, CLOCK_MONOTONIC, true };
    return deadline_after_ns_from(now, (uint64_t)rel->tv_sec * HW_NS_PER_S + (uint64_t)rel->tv_nsec);
}

static inline hw_deadline deadline_after_ns(clockid_t clock, uint64_t rel_ns) {
    hw_deadline d = { 0, clock, rel_ns >= (uint64_t)HW_FOREVER_S * HW_NS_PER_S };
    if (!d.forever) d.at_ns = clock_ns(clock) + rel_ns;
    return d;
}

/// Nanoseconds left until a (not for ever) deadline, 0 once passed.
static inline uint64_t deadline_left_ns(const hw_deadline *d) {
    uint64_t now = clock_ns(d->clock);
    return d->at_ns > now ? d->at_ns - now : 0;
}

/// The relative timeout for a resumed attempt: the time left, or the original
/// request when the deadline is for ever.
static inline struct timespec deadline_left_ts(const hw_deadline *d, const struct timespec *original) {
    return d->forever ? *original : ns_ts(deadline_left_ns(d));
}

/// Milliseconds left for poll-style timeouts, rounded up so that a resumed
/// wait never times out before the deadline.
static inline int deadline_left_ms(const hw_deadline *d) {
    return (int)((deadline_left_ns(d) + 999999) / 1000000);
}
#endif
