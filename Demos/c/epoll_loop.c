/*
 * epoll_loop: a plain C event loop with known hangs, for the hangwatch tests.
 *
 *   cc -O2 -o epoll_loop epoll_loop.c      (add -pthread on old glibc)
 *   epoll_loop [--measure FILE] [--worker NAME] [--pid-file FILE] [--verbose]
 *
 * Default mode: the main thread runs an epoll loop on a 50 ms periodic timerfd
 * and, at fixed times after start, runs CPU-bound work on the main thread:
 *
 *     t=200 ms   handle_small_event()   40 ms   (below the 100 ms hang threshold)
 *     t=400 ms   process_batch()       320 ms   (a reported hang)
 *     t=900 ms   compress_block()      180 ms   (a hang below the 250 ms report threshold)
 *     t=1250 ms  handle_small_event()   40 ms
 *     t=1500 ms  exit 0
 *
 * --worker NAME: the main thread does no work at all; it waits in epoll_wait
 * (one-shot timerfd) until t=1500 ms, then stops and joins a thread named NAME
 * (pthread_setname_np, truncated to 15 bytes) which runs its own epoll loop on
 * a 50 ms timerfd and at t=500 ms runs worker_stall() for 260 ms.
 *
 * --measure FILE: one line per piece of work, written when it ends:
 *     <function> <startNs> <endNs> <durationMs>
 * (CLOCK_MONOTONIC nanoseconds; duration in ms with three decimals).
 * Nothing is written to stdout; diagnostics go to stderr with --verbose only.
 *
 * Work functions are noinline and do real arithmetic until a CLOCK_MONOTONIC
 * deadline, in chunks of a few microseconds, so durations are accurate even
 * on a noisy machine. Built with plain -O2 (no frame pointers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ULL

#define DEMO_NAME "epoll_loop"
#include "demo_support.h"

/* ---- work ------------------------------------------------------------- */

/* A small buffer the work functions chew on. */
static uint32_t data[4096];

static void init_data(void)
{
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        data[i] = x;
    }
}

/* Mix the data buffer (a few microseconds per pass) until the deadline.
   Always inlined: the time is self time of the named caller. */
static inline __attribute__((always_inline)) uint64_t mix_until(uint64_t deadline, uint64_t h)
{
    do {
        for (size_t i = 0; i < 1024; i++) {
            h ^= data[(i * 7 + h) & 4095];
            h *= 0x100000001b3ULL;
            h ^= h >> 29;
        }
    } while (now_ns() < deadline);
    return h;
}

__attribute__((noinline)) void handle_small_event(void)
{
    uint64_t start = now_ns();
    sink += mix_until(start + 40 * MS, start);
}

__attribute__((noinline)) void process_batch(void)
{
    uint64_t start = now_ns();
    sink += mix_until(start + 320 * MS, start ^ 0x5bd1e995);
}

/* Run-length + rolling hash over the buffer, ~180 ms. */
__attribute__((noinline)) void compress_block(void)
{
    uint64_t start = now_ns(), deadline = start + 180 * MS;
    uint64_t runs = 0, h = 0xcbf29ce484222325ULL;
    do {
        uint32_t prev = 0;
        for (size_t i = 0; i < 2048; i++) {
            uint32_t b = data[i] & 0x0f;
            runs += b != prev;
            prev = b;
            h = (h ^ b) * 0x100000001b3ULL;
        }
    } while (now_ns() < deadline);
    sink += runs + h;
}

__attribute__((noinline)) void worker_stall(void)
{
    uint64_t start = now_ns();
    sink += mix_until(start + 260 * MS, start ^ 0x27d4eb2f);
}

/* ---- loops -------------------------------------------------------------- */

static int make_timerfd(uint64_t first_ns, uint64_t interval_ns)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) {
        perror("epoll_loop: timerfd_create");
        exit(1);
    }
    struct itimerspec its = {
        .it_value = {(time_t)(first_ns / 1000000000ULL), (long)(first_ns % 1000000000ULL)},
        .it_interval = {(time_t)(interval_ns / 1000000000ULL), (long)(interval_ns % 1000000000ULL)},
    };
    if (timerfd_settime(fd, 0, &its, NULL) != 0) {
        perror("epoll_loop: timerfd_settime");
        exit(1);
    }
    return fd;
}

static int make_epoll(int fd1, int fd2)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) {
        perror("epoll_loop: epoll_create1");
        exit(1);
    }
    int fds[2] = {fd1, fd2};
    for (int i = 0; i < 2; i++) {
        if (fds[i] < 0)
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            perror("epoll_loop: epoll_ctl");
            exit(1);
        }
    }
    return ep;
}

/* Waits for one batch of events; EINTR (e.g. a profiling signal) is retried. */
static int wait_events(int ep, struct epoll_event *evs, int max, int *eintr)
{
    for (;;) {
        int n = epoll_wait(ep, evs, max, -1);
        if (n >= 0)
            return n;
        if (errno != EINTR) {
            perror("epoll_loop: epoll_wait");
            exit(1);
        }
        (*eintr)++;
    }
}

static uint64_t drain(int fd)
{
    uint64_t expirations = 0;
    if (read(fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
        return 0;
    return expirations;
}

struct scheduled {
    uint64_t at_ms;
    void (*fn)(void);
    const char *name;
};

static void run_measured(void (*fn)(void), const char *name)
{
    uint64_t s = now_ns();
    fn();
    uint64_t e = now_ns();
    record(name, s, e);
}

#define END_MS 1500

static void main_loop(void)
{
    static const struct scheduled plan[] = {
        {200, handle_small_event, "handle_small_event"},
        {400, process_batch, "process_batch"},
        {900, compress_block, "compress_block"},
        {1250, handle_small_event, "handle_small_event"},
    };
    size_t next = 0;
    int tfd = make_timerfd(50 * MS, 50 * MS);
    int ep = make_epoll(tfd, -1);
    int eintr = 0;
    uint64_t ticks = 0;
    for (;;) {
        struct epoll_event evs[4];
        int n = wait_events(ep, evs, 4, &eintr);
        for (int i = 0; i < n; i++)
            ticks += drain(evs[i].data.fd);
        uint64_t elapsed_ms = (now_ns() - t_start) / MS;
        if (next < sizeof plan / sizeof plan[0] && elapsed_ms >= plan[next].at_ms) {
            run_measured(plan[next].fn, plan[next].name);
            next++;
        }
        if (elapsed_ms >= END_MS && next == sizeof plan / sizeof plan[0])
            break;
    }
    logf_("main loop done: %llu ticks, %d EINTR", (unsigned long long)ticks, eintr);
    close(ep);
    close(tfd);
}

static int stop_fd = -1;

static void *worker_main(void *arg)
{
    (void)arg;
    int tfd = make_timerfd(50 * MS, 50 * MS);
    int ep = make_epoll(tfd, stop_fd);
    int stalled = 0, eintr = 0;
    uint64_t ticks = 0;
    for (int stop = 0; !stop;) {
        struct epoll_event evs[4];
        int n = wait_events(ep, evs, 4, &eintr);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == stop_fd)
                stop = 1;
            else
                ticks += drain(evs[i].data.fd);
        }
        if (!stop && !stalled && now_ns() - t_start >= 500 * MS) {
            run_measured(worker_stall, "worker_stall");
            stalled = 1;
        }
    }
    logf_("worker loop done: %llu ticks, %d EINTR", (unsigned long long)ticks, eintr);
    close(ep);
    close(tfd);
    return NULL;
}

static void worker_mode(const char *name)
{
    char short_name[16];
    snprintf(short_name, sizeof short_name, "%s", name); /* the kernel limit is 15 bytes */
    stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd < 0) {
        perror("epoll_loop: eventfd");
        exit(1);
    }
    pthread_t worker;
    int err = pthread_create(&worker, NULL, worker_main, NULL);
    if (err != 0) {
        fprintf(stderr, "epoll_loop: pthread_create: %s\n", strerror(err));
        exit(1);
    }
    err = pthread_setname_np(worker, short_name);
    if (err != 0)
        fprintf(stderr, "epoll_loop: pthread_setname_np(%s): %s\n", short_name, strerror(err));
    logf_("worker thread '%s' started", short_name);

    /* The main thread only idles: one epoll_wait on a one-shot timer until the end. */
    uint64_t elapsed = now_ns() - t_start;
    int tfd = make_timerfd(elapsed < END_MS * MS ? END_MS * MS - elapsed : 1, 0);
    int ep = make_epoll(tfd, -1);
    int eintr = 0;
    struct epoll_event evs[1];
    wait_events(ep, evs, 1, &eintr);
    drain(tfd);
    logf_("main thread woke (%d EINTR); stopping worker", eintr);

    uint64_t one = 1;
    (void)!write(stop_fd, &one, sizeof one);
    pthread_join(worker, NULL);
    close(ep);
    close(tfd);
    close(stop_fd);
}

static void usage(int status)
{
    fprintf(stderr, "usage: epoll_loop [--measure FILE] [--worker NAME] [--pid-file FILE] [--verbose]\n");
    exit(status);
}

int main(int argc, char **argv)
{
    t_start = now_ns();
    const char *measure = NULL, *worker = NULL, *pid_file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--measure") && i + 1 < argc)
            measure = argv[++i];
        else if (!strcmp(a, "--worker") && i + 1 < argc)
            worker = argv[++i];
        else if (!strcmp(a, "--pid-file") && i + 1 < argc)
            pid_file = argv[++i];
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
            verbose = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            usage(0);
        else {
            fprintf(stderr, "epoll_loop: unknown or incomplete argument: %s\n", a);
            usage(2);
        }
    }
    if (measure) {
        measure_fd = open(measure, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (measure_fd < 0) {
            fprintf(stderr, "epoll_loop: cannot open %s: %s\n", measure, strerror(errno));
            return 2;
        }
    }
    if (pid_file)
        write_pid_file(pid_file);
    init_data();

    if (worker)
        worker_mode(worker);
    else
        main_loop();

    logf_("exit 0");
    if (measure_fd >= 0)
        close(measure_fd);
    return 0;
}
