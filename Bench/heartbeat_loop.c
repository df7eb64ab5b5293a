/*
 * heartbeat_loop: a loop whose every wait returns at once, for Bench/run.sh
 * measure (c): the cost hangwatch adds to each loop iteration.
 *
 *   cc -O2 -pthread -o heartbeat_loop heartbeat_loop.c
 *   heartbeat_loop [--iters 1000000] [--call epoll|poll|clock|tsc] [--timeout MS] [--idle-thread] [--out FILE]
 *   heartbeat_loop --paired ROUNDS [--block 500] [--call epoll|poll] [--idle-thread] [--out FILE]
 *
 * An eventfd holding 1 is never read, so it stays readable and every wait
 * returns immediately with one event. The waits use timeout -1 (epoll_wait)
 * or -1 (poll) unless --timeout says otherwise: a real loop wait for hangwatch (a zero timeout is passed
 * through untouched and would not exercise the heartbeat). 1000 warm-up
 * iterations, then `iters` timed ones. With --out FILE one line is appended:
 *   loop_ns=<wall ns of the timed iterations> iters=<n> call=<epoll|poll|clock>
 * --call clock times clock_gettime(CLOCK_MONOTONIC) instead (no wait at all):
 * the price of one clock read; --call tsc times one rdtsc, the heartbeat's
 * own clock (tsc_clock.c), which it reads twice per iteration.
 * --idle-thread starts a second thread that only sleeps, as every program under
 * hangwatch has one (the watchdog) and every Swift program has several: once
 * a process has two threads its file table is shared and each fd syscall
 * pays for reference counting, which is not hangwatch's cost.
 *
 * --paired ROUNDS measures the same thing inside one process, where the VM's
 * drift between runs cannot reach it: each round times a block of --block
 * waits through libc (the calls hangwatch interposes) and a block of the same
 * waits made with the syscall instruction itself (which nothing interposes),
 * in alternating order. It appends
 *   paired_diff_ns=<median over rounds of (libc block - raw block) / block>
 *   libc_ns=<median libc wait> raw_ns=<median raw wait> rounds=<n> call=<epoll|poll>
 * Run plain, the difference is libc's own wrapper; under hangwatch, that plus
 * the interposed wrapper and its heartbeat. The two differences' gap is what
 * hangwatch adds to an iteration, with the kernel's part (the same in both
 * blocks) cancelled.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;) pause();
    return NULL;
}

/* The wait as a bare syscall instruction: no libc, so no interposer either. */
static long raw_syscall4(long nr, long a, long b, long c, long d)
{
    long rc;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(rc) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return rc;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, compare_u64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iters = 1000000, rounds = 0, block = 500;
    int use_poll = 0, use_clock = 0, use_tsc = 0, extra_thread = 0, timeout_ms = -1;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--call") && i + 1 < argc) {
            i++;
            use_poll = !strcmp(argv[i], "poll");
            use_clock = !strcmp(argv[i], "clock");
            use_tsc = !strcmp(argv[i], "tsc");
        }
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout_ms = atoi(argv[++i]); /* a loop with timers */
        else if (!strcmp(argv[i], "--idle-thread")) extra_thread = 1;
        else if (!strcmp(argv[i], "--paired") && i + 1 < argc) rounds = atol(argv[++i]);
        else if (!strcmp(argv[i], "--block") && i + 1 < argc) block = atol(argv[++i]);
        else { fprintf(stderr, "heartbeat_loop: bad argument '%s'\n", argv[i]); return 2; }
    }
    pthread_t idle;
    if (extra_thread && pthread_create(&idle, NULL, idle_thread, NULL) != 0) { perror("heartbeat_loop"); return 1; }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int ev = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ep < 0 || ev < 0) { perror("heartbeat_loop"); return 1; }
    struct epoll_event e = { .events = EPOLLIN, .data.fd = ev };
    epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
    struct pollfd pfd = { .fd = ev, .events = POLLIN };

    if (rounds > 0) {
        if (use_clock || use_tsc || block <= 0) { fprintf(stderr, "heartbeat_loop: --paired times epoll or poll, in blocks > 0\n"); return 2; }
        uint64_t *diff = calloc((size_t)rounds, sizeof *diff), *libc_ns = calloc((size_t)rounds, sizeof *libc_ns);
        uint64_t *raw_ns = calloc((size_t)rounds, sizeof *raw_ns);
        if (!diff || !libc_ns || !raw_ns) { perror("heartbeat_loop"); return 1; }
        long bad = 0;
        for (long r = -20; r < rounds; r++) { /* 20 warm-up rounds */
            uint64_t took[2];
            for (int k = 0; k < 2; k++) {
                int raw = (k + (int)(r & 1)) & 1; /* alternate which block goes first */
                uint64_t t = mono_ns();
                for (long i = 0; i < block; i++) {
                    struct epoll_event got;
                    long n = use_poll ? (raw ? raw_syscall4(SYS_poll, (long)&pfd, 1, timeout_ms, 0) : poll(&pfd, 1, timeout_ms))
                                      : (raw ? raw_syscall4(SYS_epoll_wait, ep, (long)&got, 1, timeout_ms)
                                             : epoll_wait(ep, &got, 1, timeout_ms));
                    bad += n != 1;
                }
                took[raw] = mono_ns() - t;
            }
            if (r < 0) continue;
            libc_ns[r] = took[0] / (uint64_t)block;
            raw_ns[r] = took[1] / (uint64_t)block;
            /* Signed difference, stored offset so that it sorts: a round may go either way. */
            diff[r] = (uint64_t)((int64_t)took[0] - (int64_t)took[1] + ((int64_t)1 << 40));
        }
        if (bad) { fprintf(stderr, "heartbeat_loop: %ld waits did not return one event\n", bad); return 1; }
        double d = ((double)median_u64(diff, rounds) - (double)((uint64_t)1 << 40)) / (double)block;
        char line[200];
        int len = snprintf(line, sizeof line, "paired_diff_ns=%.2f libc_ns=%llu raw_ns=%llu rounds=%ld call=%s\n", d,
                           (unsigned long long)median_u64(libc_ns, rounds), (unsigned long long)median_u64(raw_ns, rounds),
                           rounds, use_poll ? "poll" : "epoll");
        int fd = out ? open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : 1;
        if (fd < 0) { perror(out); return 1; }
        (void)!write(fd, line, (size_t)len);
        return 0;
    }

    long events = 0;
    uint64_t t0 = 0;
    for (long i = -1000; i < iters; i++) {
        if (i == 0) t0 = mono_ns();
        if (use_tsc) {
            events += 1 + (__rdtsc() == 0);
        } else if (use_clock) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            events += 1 + (ts.tv_nsec < 0);
        } else if (use_poll) {
            events += poll(&pfd, 1, timeout_ms);
        } else {
            struct epoll_event got;
            events += epoll_wait(ep, &got, 1, timeout_ms);
        }
    }
    uint64_t dt = mono_ns() - t0;
    if (events != iters + 1000) { fprintf(stderr, "heartbeat_loop: a wait did not return one event\n"); return 1; }
    if (out) {
        char line[128];
        int len = snprintf(line, sizeof line, "loop_ns=%llu iters=%ld call=%s\n", (unsigned long long)dt, iters,
                           use_tsc ? "tsc" : use_clock ? "clock" : use_poll ? "poll" : "epoll");
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) { perror(out); return 1; }
        (void)!write(fd, line, (size_t)len);
        close(fd);
    }
    return 0;
}
