/*
 * What the bench's CPU programs share (cpu_hang.c, sample_ab.c, delayed_hang.c): a clock
 * read, the work itself, and the self-signalling floor. Static, header only:
 * each program is still built alone with `cc -O2 -pthread -o X X.c`.
 */
#ifndef HANGWATCH_BENCH_SUPPORT_H
#define HANGWATCH_BENCH_SUPPORT_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The work: a dependent xorshift chain, no memory traffic, so a slowdown is
 * what happens to the thread, not to its caches. Inlined into the caller's
 * own noinline frame (cpu_hang's call trees name leaf_kernel). */
static inline __attribute__((always_inline)) uint64_t xorshift_chain(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x += i;
    }
    return x;
}

/* ---- the signal floor: a helper thread sends SIGPROF to the main thread on
 * an absolute clock_nanosleep grid (rt_tgsigqueueinfo, as hangwatch's
 * watchdog does), to a handler that only counts; only while sig_gate is set.
 * sig_stop ends the helper (and any other helper thread of the program). ---- */
static volatile int sig_stop, sig_gate = 1;
static volatile uint32_t sig_hits;
static pid_t main_tid;
static uint64_t sig_period_ns;

static void count_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    if (sig_gate) sig_hits++;
}

static void *signal_sender(void *arg)
{
    (void)arg;
    uint64_t next = clock_ns(CLOCK_MONOTONIC);
    while (!sig_stop) {
        next += sig_period_ns;
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        if (!sig_gate) continue;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGPROF;
        si.si_code = SI_QUEUE;
        si.si_pid = getpid();
        si.si_uid = getuid();
        syscall(SYS_rt_tgsigqueueinfo, getpid(), main_tid, SIGPROF, &si);
    }
    return NULL;
}

/* Installs the counting handler and starts the sender at `hz`, aimed at the
 * calling thread. Returns pthread_create's result. */
__attribute__((unused)) static int self_signal_start(pthread_t *sender, uint64_t hz)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = count_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    main_tid = (pid_t)syscall(SYS_gettid);
    sig_period_ns = 1000000000ull / hz;
    return pthread_create(sender, NULL, signal_sender, NULL);
}

#endif
