// Sleeps. A sleep cut short by one of our sampling signals sleeps on to its
// deadline, kept on the clock the kernel measures the sleep with, and
// resumed with the same call the program made (so a sandbox that allows
// that call allows the resumption). What the program reads back is what it
// would have read: `rem` is written only when the program's own signal ends
// the sleep, sleep() returns glibc's whole seconds left (rounded down), and
// errno is untouched by a sleep that completed.
//
// Relative sleeps on CLOCK_REALTIME run on the monotonic clock in the kernel
// (hrtimer_init turns them into CLOCK_MONOTONIC timers), so nanosleep, usleep
// and sleep, which glibc makes with CLOCK_REALTIME, keep a monotonic deadline.
// Absolute sleeps resume with the very same request, on any clock.
//
// The request goes to the kernel as the program gave it; the wrapper reads
// its own copy, and writes `rem`, only through user_memory.h, so a pointer
// the kernel refuses gives the program EFAULT, never a fault.
#include "../engine/user_memory.h"
#include "wait_scope.h"

#define SITE() ((uintptr_t)__builtin_return_address(0))

/// After a first attempt failed with EINTR: sleep on to `d` while only our
/// signals cut it short. Returns the result of the last attempt (0, or -1
/// with errno); `rem` (never NULL) gets the time left when the program's
/// signal ends the sleep.
static int nanosleep_on(wait_scope *w, const hw_deadline *d, const struct timespec *original,
                        struct timespec *rem) {
    int rc = -1; // the first attempt's EINTR, still in errno
    while (scope_resume(w, rc)) {
        struct timespec left = deadline_left_ts(d, original);
        if (!scope_arm(w)) {
            *rem = left; // a program handler ran while we decided: it ends the sleep here
            errno = EINTR;
            return -1;
        }
        rc = hw_real.nanosleep(&left, rem);
    }
    return rc;
}

/// Hands the time left to the program's `rem` as the kernel does: a `rem` it
/// cannot write turns the EINTR into EFAULT.
static int give_time_left(int rc, struct timespec *rem, const struct timespec *left) {
    if (rc < 0 && errno == EINTR && rem && !user_write(rem, left, sizeof *left)) return -1; // errno EFAULT
    return rc;
}

HW_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem) {
    HW_ENSURE_REAL_CALLS();
    wait_scope w;
    struct timespec r;
    if (!req || !user_read(&r, req, sizeof r) || !ts_valid(&r)) return hw_real.nanosleep(req, rem);
    scope_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_NANOSLEEP);
    hw_deadline d = deadline_after(CLOCK_MONOTONIC, &r);
    // The kernel writes the time left on every interrupted attempt; the
    // program's `rem` only gets the one that ends the sleep.
    struct timespec scratch;
    int rc = hw_real.nanosleep(req, &scratch);
    if (rc < 0 && errno == EINTR) rc = nanosleep_on(&w, &d, &r, &scratch);
    rc = give_time_left(rc, rem, &scratch);
    scope_exit(&w, rc == 0);
    return rc;
}

HW_EXPORT int usleep(useconds_t usec) {
    HW_ENSURE_REAL_CALLS();
    wait_scope w;
    if (usec == 0) return hw_real.usleep(usec);
    scope_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_USLEEP);
    hw_deadline d = deadline_after_ns(CLOCK_MONOTONIC, (uint64_t)usec * 1000u);
    int rc = hw_real.usleep(usec);
    if (rc < 0 && errno == EINTR) {
        struct timespec original = ns_ts((uint64_t)usec * 1000u), scratch;
        rc = nanosleep_on(&w, &d, &original, &scratch);
    }
    scope_exit(&w, rc == 0);
    return rc;
}

HW_EXPORT unsigned sleep(unsigned seconds) {
    HW_ENSURE_REAL_CALLS();
    wait_scope w;
    if (seconds == 0) return hw_real.sleep(seconds);
    scope_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_SLEEP);
    hw_deadline d = deadline_after_ns(CLOCK_MONOTONIC, (uint64_t)seconds * HW_NS_PER_S);
    // glibc's sleep() returns the whole seconds left, rounded down: 0 when it
    // was interrupted less than a second before the end. errno tells: glibc
    // restores it on success and leaves EINTR when interrupted.
    errno = 0;
    unsigned left = hw_real.sleep(seconds);
    bool interrupted = errno == EINTR;
    if (interrupted && scope_ours_only(&w)) {
        struct timespec original = { (time_t)seconds, 0 }, scratch;
        if (nanosleep_on(&w, &d, &original, &scratch) == 0) {
            left = 0;
            interrupted = false;
        } else {
            left = (unsigned)(deadline_left_ns(&d) / HW_NS_PER_S); // as glibc rounds it
        }
    }
    scope_exit(&w, !interrupted);
    return left;
}

/// The clock a relative clock_nanosleep on `clock` is measured with, or -1
/// when we cannot keep its deadline exactly (the call then passes through).
static clockid_t relative_sleep_clock(clockid_t clock) {
    switch (clock) {
    case CLOCK_REALTIME: // the kernel sleeps relative REALTIME on the monotonic clock
    case CLOCK_MONOTONIC: return CLOCK_MONOTONIC;
    case CLOCK_BOOTTIME: return CLOCK_BOOTTIME;
    default: return (clockid_t)-1;
    }
}

// Returns an error number, not -1 with errno, and leaves errno alone.
HW_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    HW_ENSURE_REAL_CALLS();
    bool absolute = (flags & TIMER_ABSTIME) != 0;
    clockid_t measured = absolute ? clock : relative_sleep_clock(clock);
    wait_scope w;
    struct timespec r;
    if (!req || measured == (clockid_t)-1 || !user_read(&r, req, sizeof r) || !ts_valid(&r))
        return hw_real.clock_nanosleep(clock, flags, req, rem);
    scope_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_CLOCK_NANOSLEEP);
    hw_deadline d = { 0 };
    if (!absolute) d = deadline_after(measured, &r);
    struct timespec scratch, left = r;
    int err = hw_real.clock_nanosleep(clock, flags, req, &scratch);
    for (;;) {
        if (err != EINTR || !scope_ours_only(&w)) break;
        if (!absolute) left = deadline_left_ts(&d, &r);
        if (!scope_arm(&w)) {
            scratch = left; // a program handler ran while we decided: the sleep ends here
            break;
        }
        err = hw_real.clock_nanosleep(clock, flags, &left, &scratch);
    }
    if (err == EINTR && rem && !absolute && !user_write(rem, &scratch, sizeof scratch)) err = EFAULT;
    scope_exit(&w, true); // clock_nanosleep never sets errno
    return err;
}
