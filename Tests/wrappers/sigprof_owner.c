/*
 * sigprof_owner: a program that profiles itself with SIGPROF, with every
 * sigaction detail it may rely on (issue 8, item 9). Prints what it
 * observed; the test runs it plain and under hangwatch and compares.
 *
 *   - its sa_mask is in force while its handler runs, SIGPROF itself blocked
 *     unless SA_NODEFER;
 *   - without SA_RESTART its profiling signal cuts a blocking read short
 *     (EINTR); with SA_RESTART the read goes on;
 *   - its handler runs on the alternate stack exactly when it asked for
 *     SA_ONSTACK;
 *   - SA_RESETHAND: one delivery, then it reads SIG_DFL back;
 *   - what sigaction, signal, sigset and siginterrupt return and report is
 *     what it installed.
 * Its SIGPROF is sent by a helper thread with pthread_kill (not ours: no
 * sampler cookie), 100 ms into a read that data ends at 400 ms.
 */
#include "wrap_support.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset, siginterrupt... on purpose */

#include <fcntl.h>

static volatile sig_atomic_t ticks, usr2_blocked, prof_blocked, on_altstack;
static char altstack[64 * 1024];

static void note_state(void)
{
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    usr2_blocked = sigismember(&now, SIGUSR2);
    prof_blocked = sigismember(&now, SIGPROF);
    char here;
    on_altstack = &here >= altstack && &here < altstack + sizeof altstack;
}

static void on_prof(int sig) { (void)sig; ticks++; note_state(); }
static void on_prof2(int sig) { (void)sig; ticks++; note_state(); }

static void install(int flags, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGPROF, &sa, NULL);
}

static void describe(const char *check, void (*expected)(int))
{
    struct sigaction q;
    memset(&q, 0xa5, sizeof q); /* glibc fills only the kernel's 8 mask bytes */
    int rc = sigaction(SIGPROF, NULL, &q);
    unsigned long mask0; /* the kernel's 64 signals (glibc fills the rest from its stack) */
    memcpy(&mask0, &q.sa_mask, sizeof mask0);
    const char *h = q.sa_handler == SIG_DFL ? "dfl" : q.sa_handler == SIG_IGN ? "ign"
                  : q.sa_handler == expected ? "installed" : "other";
    report(check, "rc=%d handler=%s flags=%#x mask=%#lx restorer=%d", rc, h, (unsigned)q.sa_flags,
           mask0, q.sa_restorer != NULL);
}

/* A blocking read (right after the loop's wait: no sample can race into it)
 * that the program's SIGPROF reaches at 100 ms; data arrives at 400 ms. */
static void read_with_tick(const char *check, int fds[2])
{
    loop_wait();
    ticks = 0;
    struct action a[] = { { 100, ACT_SIGNAL, SIGPROF }, { 400, ACT_WRITE, fds[1] } };
    char c;
    uint64_t t0 = schedule(a, 2);
    errno = 0;
    ssize_t n = read(fds[0], &c, 1);
    int err = errno;
    double took = ms_since(t0);
    schedule_done();
    if (n < 0) (void)!read(fds[0], &c, 1); /* the byte written at 400 ms */
    report(check, "rc=%zd errno=%d ms=%.0f ticks=%d usr2_blocked=%d prof_blocked=%d on_altstack=%d", n, err, took,
           (int)ticks, (int)usr2_blocked, (int)prof_blocked, (int)on_altstack);
}

int main(void)
{
    helper_start();
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); return 1; }
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack(&ss, NULL);
    loop_wait();
    spin_ms(150); /* a hang: hangwatch samples it with its own SIGPROF meanwhile */

    install(0, on_prof);
    describe("query-plain", on_prof);
    read_with_tick("read-no-restart", fds);
    install(SA_RESTART, on_prof);
    read_with_tick("read-restart", fds);
    install(SA_ONSTACK, on_prof);
    describe("query-onstack", on_prof);
    read_with_tick("read-onstack", fds);
    install(SA_NODEFER, on_prof);
    read_with_tick("read-nodefer", fds);
    install(SA_RESETHAND, on_prof);
    describe("query-resethand", on_prof);
    read_with_tick("read-resethand", fds);
    describe("after-resethand", on_prof);

    /* The older interfaces. */
    loop_wait();
    spin_ms(150);
    void (*prev)(int) = signal(SIGPROF, on_prof);
    report("signal-1", "returned=%s", prev == SIG_DFL ? "dfl" : "other");
    prev = signal(SIGPROF, on_prof2);
    report("signal-2", "returned=%s", prev == on_prof ? "previous" : "other");
    describe("query-signal", on_prof2);
    siginterrupt(SIGPROF, 1);
    describe("query-siginterrupt", on_prof2);
    prev = signal(SIGPROF, on_prof);
    describe("query-signal-after-siginterrupt", on_prof);
    read_with_tick("read-after-siginterrupt", fds);
    prev = sigset(SIGPROF, SIG_HOLD);
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    report("sigset-hold", "returned=%s blocked=%d", prev == on_prof ? "previous" : "other", sigismember(&now, SIGPROF));
    prev = sigset(SIGPROF, on_prof2);
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    report("sigset-handler", "returned=%s blocked=%d", prev == SIG_HOLD ? "hold" : "other", sigismember(&now, SIGPROF));
    describe("query-sigset", on_prof2);
    prev = sysv_signal(SIGPROF, on_prof);
    describe("query-sysv", on_prof);
    read_with_tick("read-sysv", fds);
    describe("after-sysv", on_prof);
    sigignore(SIGPROF);
    describe("query-ignore", on_prof);
    loop_wait();
    return 0;
}
