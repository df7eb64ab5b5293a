/*
 * epoll_variants: event loops the agent's epoll wrappers must read right
 * (issue 14).
 *
 *   epoll_variants pwait|modal [--measure FILE]
 *
 * pwait: the main loop waits in epoll_pwait (with a signal mask) on a 20 ms
 *   periodic timerfd; 200 ms in, one tick runs pwait_stall() for 300 ms of
 *   CPU; the loop ends 700 ms in. The stall is the one hang.
 * modal: the main loop waits in epoll_wait on a 20 ms timerfd; 150 ms in, a
 *   tick opens a modal loop (run_modal_loop): a nested epoll_wait loop on an
 *   epoll descriptor and timerfd of its own that runs for 600 ms, like a
 *   dialog's loop. 200 ms into it, one of its ticks runs modal_stall() for
 *   260 ms; the others take nothing. The modal loop is waiting, not hung: the
 *   one hang is modal_stall. The main loop ends 1000 ms in.
 * stdout: `ticks N` (main loop ticks) and, for modal, `modal ticks N`.
 */
#include "safety.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

static uint64_t t0;

__attribute__((noinline)) static void pwait_stall(void) { spin_ms(300); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void modal_stall(void) { spin_ms(260); __asm__ volatile("" ::: "memory"); }

/* An epoll descriptor watching a periodic timerfd of `ms`. */
static int ticking_epoll(int ms, int *timer)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    *timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {{0, ms * 1000000L}, {0, ms * 1000000L}};
    timerfd_settime(*timer, 0, &its, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = *timer};
    if (ep < 0 || *timer < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, *timer, &ev) != 0) {
        out("epoll setup: %s", errname(errno));
        exit(1);
    }
    return ep;
}

static void drain_timer(int timer)
{
    uint64_t n;
    while (read(timer, &n, sizeof n) == (ssize_t)sizeof n) {}
}

__attribute__((noinline)) static int run_modal_loop(void)
{
    int timer, ep = ticking_epoll(20, &timer);
    uint64_t start = now_ns();
    int ticks = 0, stalled = 0;
    while (now_ns() < start + 600 * MS_NS) {
        struct epoll_event ev;
        int n = epoll_wait(ep, &ev, 1, 100);
        if (n <= 0)
            continue;
        drain_timer(timer);
        ticks++;
        if (!stalled && now_ns() >= start + 200 * MS_NS) {
            stalled = 1;
            MEASURED("modal_stall", modal_stall());
        }
    }
    close(timer);
    close(ep);
    return ticks;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    int pwait = !strcmp(mode, "pwait");
    if (!pwait && strcmp(mode, "modal")) {
        fprintf(stderr, "usage: epoll_variants pwait|modal [--measure FILE]\n");
        return 2;
    }
    t0 = now_ns();
    int timer, ep = ticking_epoll(20, &timer);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    uint64_t end = t0 + (pwait ? 700 : 1000) * MS_NS;
    int ticks = 0, done = 0, modal_ticks = -1;
    while (now_ns() < end) {
        struct epoll_event ev;
        int n = pwait ? epoll_pwait(ep, &ev, 1, 100, &mask) : epoll_wait(ep, &ev, 1, 100);
        if (n <= 0)
            continue;
        drain_timer(timer);
        ticks++;
        if (!done && pwait && now_ns() >= t0 + 200 * MS_NS) {
            done = 1;
            MEASURED("pwait_stall", pwait_stall());
        }
        if (!done && !pwait && now_ns() >= t0 + 150 * MS_NS) {
            done = 1;
            uint64_t s = now_ns();
            modal_ticks = run_modal_loop();
            record("modal_loop", s, now_ns());
        }
    }
    out("ticks %s", ticks > 0 ? "some" : "none");
    if (!pwait)
        out("modal ticks %s", modal_ticks > 10 ? "many" : "few");
    return 0;
}
