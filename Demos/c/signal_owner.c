/*
 * signal_owner: a plain C poll loop that uses SIGPROF itself, to check that
 * hangwatch leaves a program's own signals alone.
 *
 *   cc -O2 -o signal_owner signal_owner.c
 *   signal_owner --own-sigprof   [--measure FILE]   its own ITIMER_PROF handler counts ticks
 *   signal_owner --block-sigprof [--measure FILE]   the main thread blocks SIGPROF
 *
 * Either way: an idle poll loop (50 ms timeouts) with one CPU-bound
 * busy_work() of 300 ms at about 200 ms. --measure writes
 *   busy_work <startNs> <endNs> <durationMs>
 *   prof-ticks <count> <cpuMs>      (with --own-sigprof: ticks its handler saw)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t prof_ticks;
static void on_prof(int sig) { (void)sig; prof_ticks++; }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t busy_work(uint64_t ms) {
    uint64_t end = now_ns() + ms * 1000000ull, x = 1;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

int main(int argc, char **argv) {
    int own = 0, block = 0, measure = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--own-sigprof")) own = 1;
        else if (!strcmp(argv[i], "--block-sigprof")) block = 1;
        else if (!strcmp(argv[i], "--measure") && i + 1 < argc) measure = open(argv[++i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    if (own) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_prof;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGPROF, &sa, NULL);
        struct itimerval it = { { 0, 10000 }, { 0, 10000 } }; /* every 10 ms of CPU */
        setitimer(ITIMER_PROF, &it, NULL);
    }
    if (block) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPROF);
        sigprocmask(SIG_BLOCK, &set, NULL);
    }
    uint64_t start = now_ns(), sink = 0;
    int worked = 0;
    while (now_ns() - start < 800000000ull) {
        poll(NULL, 0, 0); /* a non-blocking check: not a wait */
        struct pollfd pfd = { .fd = 0, .events = 0 };
        poll(&pfd, 1, 50); /* the loop's wait (stdin, never readable here) */
        if (!worked && now_ns() - start > 200000000ull) {
            uint64_t t0 = now_ns();
            sink += busy_work(300);
            uint64_t t1 = now_ns();
            if (measure >= 0) dprintf(measure, "busy_work %llu %llu %.3f\n", (unsigned long long)t0,
                                      (unsigned long long)t1, (double)(t1 - t0) / 1e6);
            worked = 1;
        }
    }
    if (own && measure >= 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu_ms = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
        dprintf(measure, "prof-ticks %d %.1f\n", (int)prof_ticks, cpu_ms);
    }
    return sink == 42 ? 1 : 0;
}
