/*
 * delayed_hang: the workload of cpu_hang.c (a fixed number of xorshift
 * iterations in one callback of an epoll loop), started only after the loop
 * has idled for a while, so that `hangwatch attach` can be pointed at an
 * already running process before the hang begins. For Bench/attach.sh.
 *
 *   cc -O2 -o delayed_hang delayed_hang.c
 *   delayed_hang --iters N [--wait-ms MS] [--idle-s S] [--pid-file FILE] [--out FILE]
 *   delayed_hang --calibrate MS     prints an iteration count that takes about MS ms
 *
 * --wait-ms (default 300): the loop waits in epoll_wait that long before the
 * work. --idle-s S: no work at all; the loop wakes on a 10 ms timerfd for S
 * seconds (the idle cost of a watcher). --out FILE appends one line:
 *   work_ns=<wall ns of the work> work_cpu_ns=<main-thread CPU ns during it>
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t leaf_kernel(uint64_t x, uint32_t n) { return xorshift_chain(x, n); }

__attribute__((noinline)) static void work(uint64_t iters)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t done = 0; done < iters; done += 65536) x = leaf_kernel(x, 65536);
    sink = x;
}

int main(int argc, char **argv)
{
    uint64_t iters = 0, wait_ms = 300;
    double idle_s = 0;
    const char *out = NULL, *pid_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--calibrate") && i + 1 < argc) {
            uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
            work(1u << 26);
            double ns_per = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / (1u << 26);
            printf("%llu\n", (unsigned long long)(atof(argv[++i]) * 1e6 / ns_per));
            return 0;
        }
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--wait-ms") && i + 1 < argc) wait_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--idle-s") && i + 1 < argc) idle_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--pid-file") && i + 1 < argc) pid_file = argv[++i];
        else { fprintf(stderr, "delayed_hang: bad argument %s\n", argv[i]); return 2; }
    }
    if (pid_file) {
        FILE *f = fopen(pid_file, "w");
        if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
    }
    int ep = epoll_create1(0);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    uint64_t period = idle_s > 0 ? 10000000ull : wait_ms * 1000000ull;
    struct itimerspec its = {{0, idle_s > 0 ? (long)period : 0}, {(time_t)(period / 1000000000ull), (long)(period % 1000000000ull)}};
    timerfd_settime(tfd, 0, &its, NULL);
    uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(idle_s * 1e9);
    for (;;) {
        if (epoll_wait(ep, &ev, 1, -1) < 0) continue;
        uint64_t n;
        (void)!read(tfd, &n, sizeof n);
        if (idle_s > 0) {
            if (clock_ns(CLOCK_MONOTONIC) >= end) break;
            continue;
        }
        uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        work(iters);
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0, wall = clock_ns(CLOCK_MONOTONIC) - t0;
        if (out) {
            char line[128];
            int len = snprintf(line, sizeof line, "work_ns=%llu work_cpu_ns=%llu\n", (unsigned long long)wall,
                               (unsigned long long)cpu);
            int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) { (void)!write(fd, line, (size_t)len); close(fd); }
        }
        break;
    }
    /* One more loop wait ends the busy period for any watcher. */
    struct epoll_event none;
    epoll_wait(ep, &none, 1, 20);
    return 0;
}
