/*
 * bad_pointers: wrapped calls handed memory the kernel refuses (issue 31).
 *
 *   bad_pointers [--measure FILE]
 *
 * Inside a hang (so every wrapper takes its blocked-call path), each wait is
 * given a pointer to an unmapped page where it reads (a timeout, an fd array,
 * a signal set) or writes (the time left, a siginfo, events): plain, the
 * kernel refuses it with EFAULT. A wrapper that reads or writes the pointer
 * itself dies with SIGSEGV instead. (ppoll, pselect and select are not given
 * a bad timeout: glibc itself copies it, and faults, plain.)
 *
 * stdout: each call's result and errno, and whether a signal it was given
 * was consumed.
 */
#include "safety.h"

#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

/* An address with nothing mapped there. */
/* A page the kernel refuses to read or write (EFAULT), kept reserved: an
 * unmapped one could be handed out again by any later mmap, hangwatch's own
 * sampler ring included, and then hold a readable fd set. */
static void *unmapped_page(void)
{
    void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static void show(const char *what, int rc, int err)
{
    out("%s: rc %d %s", what, rc, rc < 0 ? errname(err) : "0");
}

#define CALL(what, call)                  \
    do {                                  \
        errno = 0;                        \
        int rc_ = (call);                 \
        show(what, rc_, errno);           \
    } while (0)

/* A call that returns an error number (clock_nanosleep). */
#define CALL_ERR(what, call)                    \
    do {                                        \
        int e_ = (call);                        \
        out("%s: returned %s", what, errname(e_)); \
    } while (0)

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    void *gone = unmapped_page();
    struct timespec *bad_ts = gone;
    struct timespec ok = {0, 20 * 1000000};

    loop_wait(1);
    loop_wait(20);
    spin_ms(30);

    CALL("nanosleep(unmapped req)", nanosleep(bad_ts, NULL));
    struct timespec rem;
    CALL("nanosleep(unmapped req, rem)", nanosleep(bad_ts, &rem));
    CALL_ERR("clock_nanosleep(relative, unmapped req)", clock_nanosleep(CLOCK_MONOTONIC, 0, bad_ts, NULL));
    CALL_ERR("clock_nanosleep(absolute, unmapped req)",
             clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, bad_ts, NULL));

    /* The time left, written only when the program's own signal ends the sleep. */
    struct itimerval it = {{0, 0}, {0, 10000}};
    struct timespec long_sleep = {0, 300 * 1000000};
    setitimer(ITIMER_REAL, &it, NULL);
    CALL("nanosleep(300 ms, unmapped rem) cut by SIGALRM", nanosleep(&long_sleep, gone));
    setitimer(ITIMER_REAL, &it, NULL);
    CALL_ERR("clock_nanosleep(300 ms, unmapped rem) cut by SIGALRM",
             clock_nanosleep(CLOCK_MONOTONIC, 0, &long_sleep, gone));
    CALL("nanosleep(20 ms, unmapped rem)", nanosleep(&ok, gone));
    out("alarms %d", (int)alarms);

    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    CALL("sigtimedwait(unmapped timeout)", sigtimedwait(&usr1, NULL, bad_ts));
    CALL("sigtimedwait(unmapped set)", sigtimedwait((sigset_t *)gone, NULL, &ok));
    raise(SIGUSR1);
    CALL("sigtimedwait(SIGUSR1 pending, unmapped siginfo)", sigtimedwait(&usr1, gone, &ok));
    sigset_t pending;
    sigpending(&pending);
    out("SIGUSR1 still pending: %s", sigismember(&pending, SIGUSR1) ? "yes" : "no");
    raise(SIGUSR1);
    CALL("sigwaitinfo(SIGUSR1 pending, unmapped siginfo)", sigwaitinfo(&usr1, gone));

    CALL("ppoll(unmapped fds)", ppoll(gone, 1, &ok, NULL));
    CALL("poll(unmapped fds)", poll(gone, 1, 20));
    CALL("select(unmapped fd set)", select(1, (fd_set *)gone, NULL, NULL, NULL));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    int wake[2];
    pipe2(wake, O_CLOEXEC);
    epoll_ctl(ep, EPOLL_CTL_ADD, wake[0], &ev);
    write(wake[1], "x", 1);
    CALL("epoll_wait(ready, unmapped events)", epoll_wait(ep, gone, 1, 20));
    CALL("epoll_pwait(ready, unmapped events)", epoll_pwait(ep, gone, 1, 20, NULL));
    loop_wait(20);
    return 0;
}
