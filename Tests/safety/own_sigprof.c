/*
 * own_sigprof: a program with its own profiler on SIGPROF (issue 8, item 9).
 *
 *   own_sigprof [--measure FILE]
 *
 * It installs a SIGPROF handler with sigaction: no SA_RESTART, no
 * SA_ONSTACK, sa_mask = {SIGUSR2}, and an alternate signal stack (which the
 * handler must therefore not run on). ITIMER_PROF ticks every 5 ms of the
 * process's CPU time, burnt by a worker thread that blocks SIGPROF, so every
 * tick is delivered to the main thread, which sits in a blocking read() on an
 * empty pipe: without SA_RESTART the first tick ends that read with EINTR.
 * (A watchdog fallback writes one byte after 1.5 s so a restarted read ends.)
 *
 * Inside its handler the program looks at its signal mask (SIGUSR2 must be
 * blocked: its sa_mask) and at its stack (not the alternate one).
 *
 * stdout: the read's result, and what the handler saw.
 */
#include "safety.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks, usr2_blocked, usr2_open, on_altstack, off_altstack;
static char altstack[64 * 1024];

static void on_prof(int sig)
{
    (void)sig;
    ticks++;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    if (sigismember(&now, SIGUSR2))
        usr2_blocked++;
    else
        usr2_open++;
    char here;
    if (&here >= altstack && &here < altstack + sizeof altstack)
        on_altstack++;
    else
        off_altstack++;
}

static int stop;
static int pipefd[2];

static void *burner(void *arg)
{
    (void)arg;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    uint64_t start = now_ns();
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        spin_ms(1);
        if (now_ns() - start > 1500 * MS_NS) {
            (void)!write(pipefd[1], "x", 1); /* end a read that was restarted */
            break;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = 0; /* no SA_RESTART, no SA_ONSTACK */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGPROF, &sa, NULL);
    struct sigaction back;
    sigaction(SIGPROF, NULL, &back);
    out("sigaction reads back: flags restart=%d onstack=%d siginfo=%d, sa_mask has SIGUSR2=%d",
        !!(back.sa_flags & SA_RESTART), !!(back.sa_flags & SA_ONSTACK), !!(back.sa_flags & SA_SIGINFO),
        sigismember(&back.sa_mask, SIGUSR2));

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return 1;
    loop_wait(1);
    pthread_t t;
    pthread_create(&t, NULL, burner, NULL);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_PROF, &it, NULL);
    char c;
    uint64_t s = now_ns();
    ssize_t n = read(pipefd[0], &c, 1);
    int e = errno;
    double ms = ms_since(s);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    measure_line("read_ms %.3f", ms);
    out("blocking read with the profiler ticking: rc %zd %s, %s", n, errname(n < 0 ? e : 0),
        ms < 500 ? "ended by the first ticks" : "ran until the fallback byte");
    out("handler: ran %s, SIGUSR2 blocked in %s of them, on the alternate stack in %s",
        ticks > 0 ? "yes" : "no", usr2_open == 0 ? "all" : usr2_blocked == 0 ? "none" : "some",
        on_altstack == 0 ? "none" : off_altstack == 0 ? "all" : "some");
    loop_wait(10);
    return 0;
}
