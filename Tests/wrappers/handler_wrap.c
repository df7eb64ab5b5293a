/*
 * handler_wrap: a program's own signal handlers, installed every way libc
 * offers, must behave and read back exactly as without hangwatch, which puts
 * a counting trampoline in front of each. Prints what it observed; the test
 * runs it plain and under hangwatch and compares.
 *
 *   - sigaction/signal/sysv_signal/sigset/bsd_signal report the program's
 *     handler, flags, mask and restorer, never the trampoline;
 *   - an SA_SIGINFO handler gets the siginfo the signal carried;
 *   - every handler runs on the same stack, at the same depth, and returns
 *     straight to the kernel's restorer (the trampoline is not a frame);
 *   - sa_mask, SA_NODEFER, SA_ONSTACK, SA_RESETHAND, SA_RESTART as asked;
 *   - a SysV handler that re-installs itself from inside the handler.
 */
#include "wrap_support.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, siginterrupt... on purpose */

extern __sighandler_t bsd_signal(int, __sighandler_t); /* exported by glibc, declared only for old standards */

static char altstack[64 * 1024];

struct seen {
    int sig, code, value, depth, to_restorer, self_blocked, usr2_blocked, on_altstack;
};
static volatile struct seen last;
static void *restorer;

__attribute__((noinline)) static void record(int sig, siginfo_t *si, void *uc, void *frame, void *ret)
{
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    char here;
    last.sig = sig;
    last.code = si ? si->si_code : 0;
    last.value = si ? si->si_value.sival_int : 0;
    last.depth = (int)((char *)uc - (char *)frame);
    last.to_restorer = ret == restorer;
    last.self_blocked = sigismember(&now, sig);
    last.usr2_blocked = sigismember(&now, SIGUSR2);
    last.on_altstack = &here >= altstack && &here < altstack + sizeof altstack;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
    record(sig, si, uc, __builtin_frame_address(0), __builtin_return_address(0));
}

static void on_plain(int sig)
{
    record(sig, NULL, NULL, NULL, __builtin_return_address(0));
}

static void on_sysv(int sig)
{
    record(sig, NULL, NULL, NULL, __builtin_return_address(0));
    sysv_signal(sig, on_sysv); /* the SysV idiom: re-arm from inside the handler */
}

static const char *name_of(void (*h)(int))
{
    if (h == SIG_DFL) return "dfl";
    if (h == SIG_IGN) return "ign";
    if (h == SIG_HOLD) return "hold";
    if (h == SIG_ERR) return "err";
    if (h == on_plain) return "on_plain";
    if (h == on_sysv) return "on_sysv";
    if ((void *)h == (void *)on_info) return "on_info";
    return "other";
}

static void describe(const char *check, int sig)
{
    struct sigaction q;
    memset(&q, 0xa5, sizeof q);
    int rc = sigaction(sig, NULL, &q);
    unsigned long mask0; /* the kernel's 64 signals (glibc fills the rest from its stack) */
    memcpy(&mask0, &q.sa_mask, sizeof mask0);
    report(check, "rc=%d handler=%s flags=%#x mask=%#lx restorer_same=%d", rc, name_of(q.sa_handler),
           (unsigned)q.sa_flags, mask0, q.sa_restorer == restorer);
}

static void delivered(const char *check)
{
    report(check, "sig=%d code=%d value=%d depth=%d to_restorer=%d self_blocked=%d usr2_blocked=%d on_altstack=%d",
           last.sig, last.code, last.value, last.depth, last.to_restorer, last.self_blocked, last.usr2_blocked,
           last.on_altstack);
    memset((void *)&last, 0, sizeof last);
}

static void send_queued(int sig, int value)
{
    union sigval v = { .sival_int = value };
    pthread_sigqueue(pthread_self(), sig, v);
}

/* A blocking read (right after the loop's wait) that signal `sig` reaches at
 * 100 ms; data arrives at 400 ms. */
static void read_with_signal(const char *check, int fds[2], int sig)
{
    loop_wait();
    struct action a[] = { { 100, ACT_SIGNAL, sig }, { 400, ACT_WRITE, fds[1] } };
    char c;
    uint64_t t0 = schedule(a, 2);
    errno = 0;
    ssize_t n = read(fds[0], &c, 1);
    int err = errno;
    double took = ms_since(t0);
    schedule_done();
    if (n < 0) (void)!read(fds[0], &c, 1);
    report(check, "rc=%zd errno=%d ms=%.0f ran=%d", n, err, took, last.sig == sig);
    memset((void *)&last, 0, sizeof last);
}

int main(void)
{
    helper_start();
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); return 1; }
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
    loop_wait();
    spin_ms(150);

    /* glibc's restorer, as the kernel reports it for a handler glibc installed. */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGKILL); /* the kernel drops it */
    memset(&old, 0xa5, sizeof old);
    int rc = sigaction(SIGUSR1, &sa, &old);
    report("sigaction-install", "rc=%d old=%s", rc, name_of(old.sa_handler));
    struct sigaction q;
    sigaction(SIGUSR1, NULL, &q);
    restorer = (void *)q.sa_restorer;
    describe("query-siginfo-restart", SIGUSR1);
    memset(&old, 0xa5, sizeof old);
    rc = sigaction(SIGUSR1, &sa, &old);
    report("sigaction-again", "rc=%d old=%s old_flags=%#x", rc, name_of(old.sa_handler), (unsigned)old.sa_flags);
    send_queued(SIGUSR1, 42);
    delivered("deliver-siginfo");
    read_with_signal("read-sa-restart", fds, SIGUSR1);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_plain;
    sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    sigaction(SIGURG, &sa, NULL);
    describe("query-nodefer-onstack", SIGURG);
    raise(SIGURG);
    delivered("deliver-nodefer-onstack");

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_plain;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGTERM, &sa, NULL);
    describe("query-resethand", SIGTERM);
    read_with_signal("read-no-restart", fds, SIGTERM);
    describe("after-resethand", SIGTERM);

    void (*prev)(int) = signal(SIGUSR2, on_plain);
    report("signal-1", "returned=%s", name_of(prev));
    prev = signal(SIGUSR2, on_sysv);
    report("signal-2", "returned=%s", name_of(prev));
    prev = bsd_signal(SIGUSR2, on_plain);
    report("bsd_signal", "returned=%s", name_of(prev));
    describe("query-signal", SIGUSR2);
    raise(SIGUSR2);
    delivered("deliver-signal");
    siginterrupt(SIGUSR2, 1);
    describe("query-siginterrupt", SIGUSR2);
    read_with_signal("read-siginterrupt", fds, SIGUSR2);

    prev = sysv_signal(SIGHUP, on_sysv);
    report("sysv_signal", "returned=%s", name_of(prev));
    describe("query-sysv", SIGHUP);
    raise(SIGHUP);
    delivered("deliver-sysv-1");
    describe("after-sysv-rearmed", SIGHUP);
    raise(SIGHUP);
    delivered("deliver-sysv-2");

    prev = sigset(SIGWINCH, on_plain);
    report("sigset-1", "returned=%s", name_of(prev));
    prev = sigset(SIGWINCH, SIG_HOLD);
    report("sigset-hold", "returned=%s", name_of(prev));
    raise(SIGWINCH); /* held: pending until released */
    delivered("sigset-held");
    prev = sigset(SIGWINCH, on_plain);
    report("sigset-release", "returned=%s", name_of(prev));
    delivered("sigset-released");
    describe("query-sigset", SIGWINCH);

    prev = signal(SIGRTMIN + 3, on_plain);
    send_queued(SIGRTMIN + 3, 7);
    delivered("deliver-rt");
    prev = signal(SIGRTMIN + 3, SIG_DFL);
    report("signal-dfl", "returned=%s", name_of(prev));
    describe("query-dfl", SIGRTMIN + 3);
    loop_wait();
    return 0;
}
