/*
 * wait_resume: every wrapped wait, run inside a busy period of the watched
 * loop (30 ms of CPU work, then the wait, in the same callback), with
 * samples landing inside it. Prints what the program observed; the test
 * runs it plain and under hangwatch and compares (see wrap_support.h).
 *
 *   wait_resume --group quiet     samples land in each wait: it must last as
 *                                 long and return what it returns plain
 *   wait_resume --group program   the program's own signal ends each wait, a
 *                                 sample landing in the same attempt (its
 *                                 handler sends one): EINTR at once, as plain
 * Waits ended by an event (a signal, a write) are timed from that event, as
 * the helper thread that makes it may be late on a loaded machine.
 *   wait_resume --group huge      timeouts near LONG_MAX with samples landing
 *   wait_resume --group natural   a ppoll/pselect/epoll_pwait/sigsuspend that
 *                                 waits for SIGUSR1 as its quit signal, with
 *                                 real samples left pending by a blocked SIGPROF
 *   wait_resume --group fdsets    select/pselect with fd sets of exactly the
 *                                 bytes nfds needs, ending a page
 */
#include "wrap_support.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>

#define SAVED_ERRNO 77 /* errno before each call: a call that succeeds leaves it */

static volatile sig_atomic_t usr1_seen, usr2_seen;
static int quiet_pipe[2], epfd;

/* The program's quit signal. Under hangwatch it also sends a sample to its
 * own thread, so that ours and the program's land in the same attempt. */
static void on_usr1(int sig) { (void)sig; usr1_seen++; forge_sample(main_tid); }
static void on_usr2(int sig) { (void)sig; usr2_seen++; }

static void install(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigaction(sig, &sa, NULL);
}

static void block(int sig, int how)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(how, &s, NULL);
}

static double ts_ms(const struct timespec *ts) { return ts->tv_sec * 1e3 + ts->tv_nsec / 1e6; }
static const char *huge_or(long sec) { return sec > LONG_MAX / 4 ? "huge" : "small"; }

/* ---- one wait of each kind, with a timeout of `ms` (sleep: whole seconds) ---- */

typedef struct { int rc, err; char extra[160]; } outcome;

static outcome do_wait(const char *call, unsigned ms)
{
    outcome o = { 0, 0, "" };
    struct timespec req = { ms / 1000, (long)(ms % 1000) * 1000000L }, rem = { -1, -1 };
    struct pollfd p = { .fd = quiet_pipe[0], .events = POLLIN };
    errno = SAVED_ERRNO;
    if (!strcmp(call, "nanosleep")) {
        o.rc = nanosleep(&req, &rem);
        o.err = errno;
        snprintf(o.extra, sizeof o.extra, "rem_ms=%.0f", rem.tv_sec < 0 ? -1.0 : ts_ms(&rem));
    } else if (!strcmp(call, "usleep")) {
        o.rc = usleep(ms * 1000u);
        o.err = errno;
    } else if (!strcmp(call, "sleep")) {
        o.rc = (int)sleep(ms / 1000);
        o.err = errno;
    } else if (!strncmp(call, "clock_nanosleep", 15)) {
        clockid_t clock = strstr(call, "boottime") ? CLOCK_BOOTTIME : strstr(call, "realtime") ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        int flags = 0;
        struct timespec at = req;
        if (strstr(call, "abs")) {
            clock_gettime(clock, &at);
            at.tv_sec += req.tv_sec;
            at.tv_nsec += req.tv_nsec;
            if (at.tv_nsec >= 1000000000L) { at.tv_sec++; at.tv_nsec -= 1000000000L; }
            flags = TIMER_ABSTIME;
        }
        o.rc = clock_nanosleep(clock, flags, &at, strstr(call, "norem") ? NULL : &rem);
        o.err = errno;
        snprintf(o.extra, sizeof o.extra, "rem_ms=%.0f", rem.tv_sec < 0 ? -1.0 : ts_ms(&rem));
    } else if (!strcmp(call, "poll")) {
        o.rc = poll(&p, 1, (int)ms);
        o.err = errno;
    } else if (!strcmp(call, "ppoll")) {
        o.rc = ppoll(&p, 1, &req, NULL);
        o.err = errno;
    } else if (!strcmp(call, "select") || !strcmp(call, "pselect")) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(quiet_pipe[0], &r);
        struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
        if (call[0] == 's') o.rc = select(quiet_pipe[0] + 1, &r, NULL, NULL, &tv);
        else o.rc = pselect(quiet_pipe[0] + 1, &r, NULL, NULL, &req, NULL);
        o.err = errno;
        snprintf(o.extra, sizeof o.extra, "set=%d tv_ms=%.0f", FD_ISSET(quiet_pipe[0], &r) ? 1 : 0,
                 call[0] == 's' ? tv.tv_sec * 1e3 + tv.tv_usec / 1e3 : 0.0);
    } else if (!strcmp(call, "epoll_wait") || !strcmp(call, "epoll_pwait")) {
        struct epoll_event ev;
        o.rc = call[6] == 'w' ? epoll_wait(epfd, &ev, 1, (int)ms) : epoll_pwait(epfd, &ev, 1, (int)ms, NULL);
        o.err = errno;
    } else if (!strcmp(call, "sigtimedwait") || !strcmp(call, "sigwaitinfo") || !strcmp(call, "sigwait")) {
        /* SIGUSR2 is blocked here and wanted; SIGUSR1 (handled) may interrupt. */
        sigset_t want;
        sigemptyset(&want);
        sigaddset(&want, SIGUSR2);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        int sig = 0;
        if (call[3] == 't') o.rc = sigtimedwait(&want, &si, &req);
        else if (call[3] == 'w' && call[7] == 'i') o.rc = sigwaitinfo(&want, &si);
        else { o.rc = sigwait(&want, &sig); si.si_signo = sig; }
        o.err = errno;
        snprintf(o.extra, sizeof o.extra, "signo=%d", si.si_signo);
    } else if (!strcmp(call, "sigsuspend")) {
        sigset_t none;
        sigemptyset(&none);
        o.rc = sigsuspend(&none);
        o.err = errno;
    } else if (!strcmp(call, "pause")) {
        o.rc = pause();
        o.err = errno;
    } else {
        fprintf(stderr, "wait_resume: unknown call %s\n", call);
        exit(2);
    }
    return o;
}

/* Waits that only a signal ends get one at the timeout: SIGUSR2, wanted by
 * the sigwait family; SIGALRM, handled, for sigsuspend and pause. */
static int ending_signal(const char *call)
{
    return !strcmp(call, "sigsuspend") || !strcmp(call, "pause") ? SIGALRM : SIGUSR2;
}

static bool ended_by_signal_only(const char *call)
{
    return !strcmp(call, "sigsuspend") || !strcmp(call, "pause") || !strcmp(call, "sigwaitinfo") || !strcmp(call, "sigwait");
}

static const char *all_calls[] = {
    "nanosleep", "usleep", "clock_nanosleep-monotonic", "clock_nanosleep-realtime-norem",
    "clock_nanosleep-monotonic-norem", "clock_nanosleep-boottime", "clock_nanosleep-monotonic-abs",
    "clock_nanosleep-realtime-abs", "poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait",
    "sigtimedwait", "sigwaitinfo", "sigwait", "sigsuspend", "pause", "sleep",
};
#define NCALLS (sizeof all_calls / sizeof all_calls[0])

/* Samples land in each wait, twice; nothing else happens until its timeout. */
static void group_quiet(void)
{
    for (size_t i = 0; i < NCALLS; i++) {
        const char *call = all_calls[i];
        unsigned ms = !strcmp(call, "sleep") ? 1000 : 180; /* samples land at 20 and 120 ms */
        loop_wait();
        spin_ms(30);
        struct action a[] = { { 20, ACT_FORGE, 0 }, { 120, ACT_FORGE, 0 }, { ms, ACT_SIGNAL, ending_signal(call) } };
        bool by_signal = ended_by_signal_only(call);
        uint64_t t0 = schedule(a, by_signal ? 3 : 2);
        outcome o = do_wait(call, ms);
        uint64_t end = now_ns();
        schedule_done();
        /* A wait that only a signal ends is timed from that signal. */
        if (by_signal) report(call, "rc=%d errno=%d after_signal_ms=%.0f %s", o.rc, o.err, ms_after_action(2, end), o.extra);
        else report(call, "rc=%d errno=%d ms=%.0f %s", o.rc, o.err, (double)(end - t0) / 1e6, o.extra);
    }
}

/* The program's SIGUSR1 ends each wait at 80 ms; its handler sends a sample
 * to its own thread (under hangwatch), and one more landed at 20 ms. */
static void group_program(void)
{
    for (size_t i = 0; i < NCALLS; i++) {
        const char *call = all_calls[i];
        if (!strcmp(call, "sigwait")) continue; /* glibc's sigwait retries EINTR itself */
        unsigned ms = !strcmp(call, "sleep") ? 1000 : 400;
        loop_wait();
        spin_ms(30);
        usr1_seen = 0;
        struct action a[] = { { 20, ACT_FORGE, 0 }, { 80, ACT_SIGNAL, SIGUSR1 } };
        schedule(a, 2);
        outcome o = do_wait(call, ms);
        uint64_t end = now_ns();
        schedule_done();
        report(call, "rc=%d errno=%d after_signal_ms=%.0f handler=%d %s", o.rc, o.err, ms_after_action(1, end),
               (int)usr1_seen, o.extra);
    }
}

/* Timeouts the deadline arithmetic must not overflow. Samples land at 20
 * and 60 ms; the wait ends at 150 ms by the pipe or the program's signal. */
static void group_huge(void)
{
    struct timespec huge = { LONG_MAX, 999999999L };
    const char *calls[] = { "nanosleep", "clock_nanosleep", "clock_nanosleep-norem", "ppoll", "pselect",
                            "select", "select-usec", "sigtimedwait" };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        const char *call = calls[i];
        int by_pipe = !strcmp(call, "ppoll") || !strncmp(call, "select", 6) || !strcmp(call, "pselect");
        int by_usr2 = !strcmp(call, "sigtimedwait");
        loop_wait();
        spin_ms(30);
        usr1_seen = 0;
        struct action a[] = { { 20, ACT_FORGE, 0 }, { 60, ACT_FORGE, 0 },
                              { 150, by_pipe ? ACT_WRITE : ACT_SIGNAL, by_pipe ? quiet_pipe[1] : by_usr2 ? SIGUSR2 : SIGUSR1 } };
        struct timespec rem = { 0, 0 };
        struct pollfd p = { .fd = quiet_pipe[0], .events = POLLIN };
        fd_set r;
        FD_ZERO(&r);
        FD_SET(quiet_pipe[0], &r);
        struct timeval tv = { LONG_MAX, 999999 };
        if (!strcmp(call, "select-usec")) { tv.tv_sec = 0; tv.tv_usec = LONG_MAX; }
        sigset_t want;
        sigemptyset(&want);
        sigaddset(&want, SIGUSR2);
        char extra[128] = "";
        int rc;
        uint64_t t0 = schedule(a, 3);
        errno = SAVED_ERRNO;
        if (!strcmp(call, "nanosleep")) rc = nanosleep(&huge, &rem);
        else if (!strcmp(call, "clock_nanosleep")) rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &huge, &rem);
        else if (!strcmp(call, "clock_nanosleep-norem")) rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &huge, NULL);
        else if (!strcmp(call, "ppoll")) rc = ppoll(&p, 1, &huge, NULL);
        else if (!strcmp(call, "pselect")) rc = pselect(quiet_pipe[0] + 1, &r, NULL, NULL, &huge, NULL);
        else if (!strcmp(call, "sigtimedwait")) rc = sigtimedwait(&want, NULL, &huge);
        else rc = select(quiet_pipe[0] + 1, &r, NULL, NULL, &tv);
        int err = errno;
        uint64_t end = now_ns();
        (void)t0;
        schedule_done();
        if (by_pipe) { char c; (void)!read(quiet_pipe[0], &c, 1); }
        if (strstr(call, "nanosleep") && !strstr(call, "norem")) snprintf(extra, sizeof extra, "rem_years=%ld", (long)(rem.tv_sec / (365L * 86400)));
        if (!strncmp(call, "select", 6)) snprintf(extra, sizeof extra, "tv=%s", huge_or(tv.tv_sec));
        /* select-usec fails at once (EINVAL), before the event. */
        report(call, "rc=%d errno=%d after_event_ms=%.0f handler=%d %s", rc, err,
               rc < 0 && err == EINVAL ? 0.0 : ms_after_action(2, end), (int)usr1_seen, extra);
    }
}

/* Item 7 of issue 8, as a program meets it: SIGUSR1 is the quit signal,
 * blocked except while the loop waits. Here it arrived during a critical
 * section that also blocked SIGPROF, so the samples sent meanwhile are
 * pending too: both are delivered as the wait starts. */
static void group_natural(void)
{
    const char *calls[] = { "ppoll", "pselect", "epoll_pwait", "sigsuspend" };
    int pending_seen = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
            const char *call = calls[i];
            loop_wait();
            spin_ms(30); /* sampled: the watchdog sends SIGPROF */
            block(SIGPROF, SIG_BLOCK);
            spin_ms(8); /* samples pile up as pending */
            usr1_seen = 0;
            raise(SIGUSR1);
            sigset_t pending, open;
            sigpending(&pending);
            pending_seen += sigismember(&pending, SIGPROF);
            pthread_sigmask(SIG_BLOCK, NULL, &open);
            sigdelset(&open, SIGUSR1);
            sigdelset(&open, SIGPROF);
            struct pollfd p = { .fd = quiet_pipe[0], .events = POLLIN };
            struct timespec three = { 3, 0 };
            fd_set r;
            FD_ZERO(&r);
            FD_SET(quiet_pipe[0], &r);
            struct epoll_event ev;
            uint64_t t0 = now_ns();
            errno = SAVED_ERRNO;
            int rc = !strcmp(call, "ppoll") ? ppoll(&p, 1, &three, &open)
                   : !strcmp(call, "pselect") ? pselect(quiet_pipe[0] + 1, &r, NULL, NULL, &three, &open)
                   : !strcmp(call, "epoll_pwait") ? epoll_pwait(epfd, &ev, 1, 3000, &open)
                   : sigsuspend(&open);
            int err = errno;
            double took = ms_since(t0);
            block(SIGPROF, SIG_UNBLOCK);
            report(call, "rc=%d errno=%d ms=%.0f handler=%d", rc, err, took, (int)usr1_seen);
        }
    }
    printf("info sample-pending %d\n", pending_seen);
}

/* Fd sets of exactly FDS_BYTES(nfds) bytes, the last bytes before an
 * inaccessible page, as OpenSSH allocates them. A sample lands at 20 ms, the
 * descriptor becomes readable at 100 ms. */
static fd_set *set_at_page_end(char *page, int nfds)
{
    size_t bytes = (size_t)(nfds + 63) / 64 * 8;
    return (fd_set *)(page + 4096 - bytes);
}

static void group_fdsets(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 3100 && rl.rlim_max >= 3100) { rl.rlim_cur = 3100; setrlimit(RLIMIT_NOFILE, &rl); }
    int far_fd = dup2(quiet_pipe[0], 3000) == 3000 ? 3000 : -1;
    char *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || mprotect(pages + 4096, 4096, PROT_NONE) != 0) { perror("mmap"); exit(1); }
    const char *calls[] = { "select", "pselect" };
    for (int far = 0; far < 2; far++) {
        int fd = far ? far_fd : quiet_pipe[0];
        if (fd < 0) { printf("info no-fd-3000 1\n"); continue; }
        for (size_t i = 0; i < 2; i++) {
            loop_wait();
            spin_ms(30);
            int nfds = fd + 1;
            fd_set *r = set_at_page_end(pages, nfds);
            memset(r, 0, (size_t)(nfds + 63) / 64 * 8);
            r->fds_bits[fd / 64] |= 1ul << (fd % 64);
            struct action a[] = { { 20, ACT_FORGE, 0 }, { 100, ACT_WRITE, quiet_pipe[1] } };
            struct timeval tv = { 1, 0 };
            struct timespec ts = { 1, 0 };
            uint64_t t0 = schedule(a, 2);
            errno = SAVED_ERRNO;
            int rc = i == 0 ? select(nfds, r, NULL, NULL, &tv) : pselect(nfds, r, NULL, NULL, &ts, NULL);
            int err = errno;
            uint64_t end = now_ns();
            (void)t0;
            schedule_done();
            int set = (int)((r->fds_bits[fd / 64] >> (fd % 64)) & 1);
            char c;
            (void)!read(quiet_pipe[0], &c, 1);
            char name[32];
            snprintf(name, sizeof name, "%s-fd%d", calls[i], far ? 3000 : 0);
            report(name, "rc=%d errno=%d after_write_ms=%.0f set=%d", rc, err, ms_after_action(1, end), set);
        }
    }
    if (far_fd >= 0) close(far_fd);
}

int main(int argc, char **argv)
{
    const char *group = argc == 3 && !strcmp(argv[1], "--group") ? argv[2] : NULL;
    if (!group) { fprintf(stderr, "usage: wait_resume --group quiet|program|huge|natural|fdsets\n"); return 2; }
    helper_start();
    install(SIGUSR1, on_usr1);
    install(SIGUSR2, on_usr2);
    install(SIGALRM, on_usr2);
    if (pipe(quiet_pipe) != 0) { perror("pipe"); return 1; }
    epfd = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = quiet_pipe[0] };
    epoll_ctl(epfd, EPOLL_CTL_ADD, quiet_pipe[0], &ev);
    loop_wait(); /* the loop's wait comes first: every later wait is inside a callback */
    if (!strcmp(group, "quiet")) {
        block(SIGUSR2, SIG_BLOCK); /* wanted by the sigwait family; sigsuspend/pause unblock it */
        group_quiet();
    } else if (!strcmp(group, "program")) {
        block(SIGUSR2, SIG_BLOCK);
        group_program();
    } else if (!strcmp(group, "huge")) {
        block(SIGUSR2, SIG_BLOCK);
        group_huge();
    } else if (!strcmp(group, "natural")) {
        block(SIGUSR1, SIG_BLOCK);
        group_natural();
    } else if (!strcmp(group, "fdsets")) {
        group_fdsets();
    } else {
        fprintf(stderr, "wait_resume: unknown group %s\n", group);
        return 2;
    }
    printf("info forged %u\n", forged);
    return 0;
}
