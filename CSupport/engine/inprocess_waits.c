// The in-process library's heartbeat for loops the program does not mark:
// the event-loop waits (epoll_wait, epoll_pwait, poll, ppoll) of every loaded
// image are redirected here (got_redirect.c), so a thread the thread list
// names (a SwiftNIO event loop, `NIO-ELT-*`) gets the same heartbeat as under
// the preload agent, with no code in its loop. The sleeps (usleep, nanosleep,
// clock_nanosleep) are redirected too, so a sleep inside a handler or a job
// is sampled from its saved registers and named as under the agent.
//
// The rules are the agent's (heartbeat.c decides what a loop wait is):
//  - on a loop thread (HW_ROLE_LOOP) that no LoopHeartbeat or FrameMonitor
//    marks, the loop's own wait ends the busy period before it waits and
//    starts the next one after;
//  - on any other watched thread (a pool job, the main thread, whose loop
//    the run-loop observer marks), and for waits inside a callback, the wait
//    is a blocked call: its registers are saved for the watchdog's sample;
//  - on a thread that is not watched it is the real call and nothing else.
// Unlike the agent's wrappers these never resume a wait a signal cut short:
// the library does not wrap the program's signal handlers, so it cannot
// tell an EINTR of its own from the program's. With the kernel's sampler no
// signal of ours reaches a thread at all; with the fallback sampler the
// race docs/LIMITS.md describes stays as it was. The real call's result and
// errno reach the program unchanged: nothing here touches errno after it.
#include "engine_internal.h"
#include "user_memory.h"
#include "wrapper_text.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static struct {
    int (*epoll_wait)(int, struct epoll_event *, int, int);
    int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    int (*usleep)(useconds_t);
    int (*nanosleep)(const struct timespec *, struct timespec *);
    int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
} real;

typedef struct inprocess_wait {
    hw_slot *slot;
    bool loop;
} inprocess_wait;

/// Enters a wait made from `site`; false when the calling thread is not
/// watched (then only the real call runs). always_inline: the registers
/// saved must describe the wrapper's own frame.
static inline __attribute__((always_inline)) bool wait_enter(inprocess_wait *w, uintptr_t site,
                                                             enum hw_wait_kind kind, bool has_fds, int call) {
    int saved_errno = errno; // deciding may read the thread's name or register it
    w->slot = hw_current_slot();
    w->loop = false;
    if (!w->slot) { errno = saved_errno; return false; }
    w->loop = w->slot->role == HW_ROLE_LOOP && !__atomic_load_n(&w->slot->program_marks, __ATOMIC_RELAXED)
              && hw_is_loop_wait(w->slot, site, kind, has_fds);
    if (w->loop) {
        // Already waiting: this wait is nested in the loop's own (a signal
        // handler's, which the library does not see begin), or the loop left
        // its last wait without returning through it (siglongjmp). The time
        // since the last busy period began was idle, not busy: a new, empty
        // busy period starts here, so no phantom hang is told.
        if (__atomic_load_n(&w->slot->state, __ATOMIC_ACQUIRE) == HW_STATE_WAITING) hw_heartbeat_wait_end(w->slot);
        hw_heartbeat_wait_begin(w->slot);
    } else {
        hw_blocked_context ctx;
        hw_capture_context(&ctx);
        hw_blocked_begin(w->slot, &ctx, call);
    }
    errno = saved_errno;
    return true;
}

/// Leaves it: the real call's errno is what the program gets.
static inline void wait_exit(inprocess_wait *w) {
    int saved_errno = errno;
    if (w->loop) hw_heartbeat_wait_end(w->slot);
    else hw_blocked_end(w->slot);
    errno = saved_errno;
}

#define SITE() ((uintptr_t)__builtin_return_address(0))

HW_WRAPPER_TEXT static int inprocess_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout) {
    inprocess_wait w;
    if (timeout == 0 || !wait_enter(&w, SITE(), HW_WAIT_EPOLL, true, HW_CALL_EPOLL_WAIT))
        return real.epoll_wait(epfd, ev, max, timeout);
    int rc = real.epoll_wait(epfd, ev, max, timeout);
    wait_exit(&w);
    return rc;
}

HW_WRAPPER_TEXT static int inprocess_epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask) {
    inprocess_wait w;
    if (timeout == 0 || !wait_enter(&w, SITE(), HW_WAIT_EPOLL, true, HW_CALL_EPOLL_PWAIT))
        return real.epoll_pwait(epfd, ev, max, timeout, mask);
    int rc = real.epoll_pwait(epfd, ev, max, timeout, mask);
    wait_exit(&w);
    return rc;
}

HW_WRAPPER_TEXT static int inprocess_poll(struct pollfd *fds, nfds_t n, int timeout) {
    inprocess_wait w;
    if (timeout == 0 || !wait_enter(&w, SITE(), HW_WAIT_FDSET, n > 0, HW_CALL_POLL))
        return real.poll(fds, n, timeout);
    int rc = real.poll(fds, n, timeout);
    wait_exit(&w);
    return rc;
}

/// A ppoll that returns at once (a zero timeout) is no wait; the timeout is
/// read only on a watched thread, and never where the kernel would refuse it.
static bool zero_timeout(const struct timespec *tmo) {
    if (!tmo) return false;
    int saved_errno = errno;
    struct timespec t;
    bool zero = hw_current_slot() && (!user_read(&t, tmo, sizeof t) || (t.tv_sec == 0 && t.tv_nsec == 0));
    errno = saved_errno;
    return zero;
}

HW_WRAPPER_TEXT static int inprocess_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask) {
    inprocess_wait w;
    if (zero_timeout(tmo) || !wait_enter(&w, SITE(), HW_WAIT_FDSET, n > 0, HW_CALL_PPOLL))
        return real.ppoll(fds, n, tmo, mask);
    int rc = real.ppoll(fds, n, tmo, mask);
    wait_exit(&w);
    return rc;
}

// The sleeps: a frame loop's idle wait (HANGWATCH_FRAME_MS), as for the
// agent; elsewhere a blocked call whose registers give its sample.
HW_WRAPPER_TEXT static int inprocess_usleep(useconds_t us) {
    inprocess_wait w;
    if (us == 0 || !wait_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_USLEEP)) return real.usleep(us);
    int rc = real.usleep(us);
    wait_exit(&w);
    return rc;
}

HW_WRAPPER_TEXT static int inprocess_nanosleep(const struct timespec *req, struct timespec *rem) {
    inprocess_wait w;
    if (!wait_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_NANOSLEEP)) return real.nanosleep(req, rem);
    int rc = real.nanosleep(req, rem);
    wait_exit(&w);
    return rc;
}

HW_WRAPPER_TEXT static int inprocess_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    inprocess_wait w;
    if (!wait_enter(&w, SITE(), HW_WAIT_SLEEP, false, HW_CALL_CLOCK_NANOSLEEP))
        return real.clock_nanosleep(clock, flags, req, rem);
    int rc = real.clock_nanosleep(clock, flags, req, rem);
    wait_exit(&w);
    return rc;
}

/// Images whose imports are never redirected: the C library and the loader
/// (their calls to these functions are internal), the vDSO, and the preload
/// agent, which wraps them already.
bool hw_inprocess_skips_image(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *const skipped[] = { "libc.so", "ld-linux", "linux-vdso", "libhangwatch-agent" };
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (strncmp(base, skipped[i], strlen(skipped[i])) == 0) return true;
    return false;
}

static bool wants_image(const char *path) { return !hw_inprocess_skips_image(path); }

/// Each redirected call: its name, where its real function is kept, its wrapper.
static const struct redirected {
    const char *name;
    void **real;
    void *wrapper;
} redirected[] = {
    { "epoll_wait", (void **)&real.epoll_wait, (void *)inprocess_epoll_wait },
    { "epoll_pwait", (void **)&real.epoll_pwait, (void *)inprocess_epoll_pwait },
    { "poll", (void **)&real.poll, (void *)inprocess_poll },
    { "ppoll", (void **)&real.ppoll, (void *)inprocess_ppoll },
    { "usleep", (void **)&real.usleep, (void *)inprocess_usleep },
    { "nanosleep", (void **)&real.nanosleep, (void *)inprocess_nanosleep },
    { "clock_nanosleep", (void **)&real.clock_nanosleep, (void *)inprocess_clock_nanosleep },
};
#define REDIRECTED (sizeof redirected / sizeof redirected[0])

uint32_t hw_inprocess_waits_install(void) {
    hw_got_target targets[REDIRECTED];
    for (size_t i = 0; i < REDIRECTED; i++) {
        *redirected[i].real = dlsym(RTLD_DEFAULT, redirected[i].name);
        targets[i] = (hw_got_target){ redirected[i].name, *redirected[i].real ? redirected[i].wrapper : NULL };
    }
    return hw_got_redirect(targets, REDIRECTED, wants_image);
}
