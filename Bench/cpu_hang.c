/*
 * cpu_hang: one CPU-bound hang of a fixed amount of work inside one callback
 * of an epoll loop, for Bench/run.sh.
 *
 *   cc -O2 -pthread -o cpu_hang cpu_hang.c
 *   cpu_hang --iters N [--depth D] [--variants] [--idle-ms MS] [--self-signal-hz HZ] [--out FILE]
 *   cpu_hang --calibrate MS        prints an iteration count that takes about MS ms
 *
 * The main thread runs an epoll loop (epoll_wait with a timeout, so every wait
 * is a loop wait for hangwatch):
 *   1. the first wait returns at once (an eventfd is readable): the launch
 *      period ends there;
 *   2. its callback runs the work: N iterations of a xorshift chain, in
 *      chunks of 65536, each chunk called through D nested noinline frames
 *      (work() -> level() x D -> leaf_kernel()); with --variants, each level
 *      is one of two functions chosen by the chunk number, so the stacks
 *      (and the call tree) have 16 distinct shapes;
 *      with --idle-ms MS there is no work: the loop waits MS ms instead (a
 *      baseline with the same lifetime and no hang);
 *   3. one more wait (20 ms timeout) ends the busy period, then main returns.
 * The amount of work is a fixed iteration count, never a deadline, so a
 * slower run takes longer.
 *
 * --self-signal-hz HZ (a platform floor, run without hangwatch): during the
 * work a helper thread sends SIGPROF to the main thread HZ times a second
 * (rt_tgsigqueueinfo on an absolute clock_nanosleep grid, as hangwatch's
 * watchdog does) and the handler only counts. The slowdown it causes is what
 * signal delivery alone costs on this machine.
 *
 * Nothing goes to stdout. With --out FILE one line is appended (one write):
 *   work_ns=<wall ns of the work, CLOCK_MONOTONIC>
 *   work_cpu_ns=<main-thread CPU ns during the work, CLOCK_THREAD_CPUTIME_ID>
 *   main_cpu_ns=<main-thread CPU ns at exit>  proc_cpu_ns=<whole-process CPU
 *   ns at exit, CLOCK_PROCESS_CPUTIME_ID (includes any injected thread)>
 *   exit_ns=<CLOCK_MONOTONIC ns just before main returns>
 *   main_minflt=<minor page faults of the main thread> signals=<handled,
 *   with --self-signal-hz>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

#define CHUNK 65536u

static volatile uint64_t sink;

/* The real work, in a frame of its own (the call trees name it). */
__attribute__((noinline)) static uint64_t leaf_kernel(uint64_t x, uint32_t n) { return xorshift_chain(x, n); }

/* Two recursion functions with different bodies (so -fipa-icf keeps both).
 * The empty asm after the call keeps every frame on the stack (no tail call,
 * no accumulator-to-loop rewrite). */
__attribute__((noinline)) static uint64_t level_b(int d, uint32_t pick, uint64_t x, uint32_t n);

__attribute__((noinline)) static uint64_t level_a(int d, uint32_t pick, uint64_t x, uint32_t n)
{
    uint64_t r;
    if (d <= 0) r = leaf_kernel(x, n);
    else if ((pick >> (d & 3)) & 1) r = level_b(d - 1, pick, x + 1, n);
    else r = level_a(d - 1, pick, x + 1, n);
    __asm__ volatile("" : "+r"(r));
    return r ^ (uint64_t)d;
}

__attribute__((noinline)) static uint64_t level_b(int d, uint32_t pick, uint64_t x, uint32_t n)
{
    uint64_t r;
    if (d <= 0) r = leaf_kernel(x ^ 0x9e3779b97f4a7c15ull, n);
    else if ((pick >> (d & 3)) & 1) r = level_b(d - 1, pick, x + 3, n);
    else r = level_a(d - 1, pick, x + 3, n);
    __asm__ volatile("" : "+r"(r));
    return r + (uint64_t)d;
}

/* The hang: the callback of one loop iteration. */
__attribute__((noinline)) static uint64_t work(uint64_t iters, int depth, int variants)
{
    uint64_t x = 88172645463325252ull;
    uint32_t chunk = 0;
    while (iters > 0) {
        uint32_t n = iters > CHUNK ? CHUNK : (uint32_t)iters;
        uint32_t pick = variants ? (chunk & 15u) : 0;
        /* depth counts the level_* frames between work() and leaf_kernel(). */
        x = depth > 0 ? level_a(depth - 1, pick, x, n) : leaf_kernel(x, n);
        iters -= n;
        chunk++;
    }
    return x;
}

static void die(const char *what)
{
    fprintf(stderr, "cpu_hang: %s: %s\n", what, strerror(errno));
    exit(1);
}

int main(int argc, char **argv)
{
    uint64_t iters = 0, idle_ms = 0, calibrate_ms = 0, signal_hz = 0;
    int depth = 1, variants = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc) depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--variants")) variants = 1;
        else if (!strcmp(argv[i], "--idle-ms") && i + 1 < argc) idle_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--self-signal-hz") && i + 1 < argc) signal_hz = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--calibrate") && i + 1 < argc) calibrate_ms = strtoull(argv[++i], NULL, 10);
        else { fprintf(stderr, "cpu_hang: bad argument '%s'\n", argv[i]); return 2; }
    }
    if (calibrate_ms) {
        /* Best of 3 runs of 64 chunks, scaled to the requested time. */
        uint64_t probe = 64ull * CHUNK, best = UINT64_MAX;
        for (int r = 0; r < 3; r++) {
            uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
            sink = work(probe, 1, 0);
            uint64_t dt = clock_ns(CLOCK_MONOTONIC) - t0;
            if (dt < best) best = dt;
        }
        double n = (double)probe * (double)calibrate_ms * 1e6 / (double)best;
        printf("%llu\n", (unsigned long long)((uint64_t)(n / CHUNK) * CHUNK));
        return 0;
    }
    if (!iters && !idle_ms) { fprintf(stderr, "cpu_hang: --iters or --idle-ms needed\n"); return 2; }

    int ep = epoll_create1(EPOLL_CLOEXEC);
    int ev = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ep < 0 || ev < 0) die("epoll/eventfd");
    struct epoll_event e = { .events = EPOLLIN, .data.fd = ev };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) < 0) die("epoll_ctl");

    uint64_t work_ns = 0, work_cpu_ns = 0;
    int state = 0; /* 0: waiting for the event, 1: work done, waiting once more */
    for (;;) {
        struct epoll_event got;
        int timeout = state == 0 ? (idle_ms ? (int)idle_ms : 1000) : 20;
        int n = epoll_wait(ep, &got, 1, timeout);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait");
        if (state == 1) break; /* the wait after the hang: the busy period ended */
        if (n == 1) {
            uint64_t v;
            (void)!read(ev, &v, sizeof v);
            if (idle_ms) continue; /* baseline: the next wait idles idle_ms */
        }
        /* The callback: the hang (or nothing, after an idle wait). */
        pthread_t sender;
        if (signal_hz && self_signal_start(&sender, signal_hz) != 0) die("pthread_create");
        uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (iters) sink = work(iters, depth, variants);
        work_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        work_ns = clock_ns(CLOCK_MONOTONIC) - t0;
        if (signal_hz) {
            sig_stop = 1;
            pthread_join(sender, NULL);
        }
        state = 1;
    }
    if (out) {
        struct rusage ru;
        getrusage(RUSAGE_THREAD, &ru);
        char line[320];
        int len = snprintf(line, sizeof line,
                           "work_ns=%llu work_cpu_ns=%llu main_cpu_ns=%llu proc_cpu_ns=%llu main_minflt=%ld "
                           "signals=%u exit_ns=%llu\n",
                           (unsigned long long)work_ns, (unsigned long long)work_cpu_ns,
                           (unsigned long long)clock_ns(CLOCK_THREAD_CPUTIME_ID),
                           (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID), ru.ru_minflt,
                           (unsigned)sig_hits, (unsigned long long)clock_ns(CLOCK_MONOTONIC));
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) die(out);
        (void)!write(fd, line, (size_t)len);
        close(fd);
    }
    return 0;
}
