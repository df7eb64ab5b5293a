/*
 * heartbeat_loop: a loop whose every wait returns at once, for Bench/run.sh
 * measure (c): the cost hangwatch adds to each loop iteration.
 *
 *   cc -O2 -pthread -o heartbeat_loop heartbeat_loop.c
 *   heartbeat_loop [--iters 1000000] [--call epoll|poll|clock] [--timeout MS] [--idle-thread] [--out FILE]
 *
 * An eventfd holding 1 is never read, so it stays readable and every wait
 * returns immediately with one event. The waits use timeout -1 (epoll_wait)
 * or -1 (poll) unless --timeout says otherwise: a real loop wait for hangwatch (a zero timeout is passed
 * through untouched and would not exercise the heartbeat). 1000 warm-up
 * iterations, then `iters` timed ones. With --out FILE one line is appended:
 *   loop_ns=<wall ns of the timed iterations> iters=<n> call=<epoll|poll|clock>
 * --call clock times clock_gettime(CLOCK_MONOTONIC) instead (no wait at all):
 * the price of one clock read, which the heartbeat pays twice per iteration.
 * --idle-thread starts a second thread that only sleeps, as every program under
 * hangwatch has one (the watchdog) and every Swift program has several: once
 * a process has two threads its file table is shared and each fd syscall
 * pays for reference counting, which is not hangwatch's cost.
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
#include <time.h>
#include <unistd.h>

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;) pause();
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iters = 1000000;
    int use_poll = 0, use_clock = 0, extra_thread = 0, timeout_ms = -1;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--call") && i + 1 < argc) {
            i++;
            use_poll = !strcmp(argv[i], "poll");
            use_clock = !strcmp(argv[i], "clock");
        }
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout_ms = atoi(argv[++i]); /* a loop with timers */
        else if (!strcmp(argv[i], "--idle-thread")) extra_thread = 1;
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

    long events = 0;
    uint64_t t0 = 0;
    for (long i = -1000; i < iters; i++) {
        if (i == 0) t0 = mono_ns();
        if (use_clock) {
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
                           use_clock ? "clock" : use_poll ? "poll" : "epoll");
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) { perror(out); return 1; }
        (void)!write(fd, line, (size_t)len);
        close(fd);
    }
    return 0;
}
