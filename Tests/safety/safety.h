/*
 * Shared by the host-safety programs (the C files in Tests/safety).
 *
 * Each program is run twice by the Swift tests, plain and under
 * `hangwatch run`, and must print the same stdout both times. So stdout only
 * carries stable facts: syscall results, errno names, durations classified
 * against tolerances ("ok", "short", "long"), counts. Raw timings go to the
 * measure file (`--measure FILE`, the demos' format: `name startNs endNs
 * durationMs`, or `name field...`), which the tests compare with the report.
 *
 * Lines are written with one write(2) each (safe from any thread, after fork,
 * and never lost in a stdio buffer when the program execs or dies).
 */
#ifndef SAFETY_H
#define SAFETY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MS_NS 1000000ull

static int sf_measure_fd = -1;
static const char *sf_measure_path;
static int sf_loop_pipe[2] = {-1, -1}; /* see loop_wait() */
static volatile uint64_t sf_sink; /* keeps busy work alive */

static __attribute__((unused)) uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((unused)) double ms_since(uint64_t start) { return (double)(now_ns() - start) / 1e6; }

static __attribute__((unused)) void sf_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

/* One stdout line (the observable behaviour the tests compare). */
static __attribute__((unused)) void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static __attribute__((unused)) void out(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    sf_write_all(1, buf, (size_t)n);
}

/* One free-form measure line (`name field...`). */
static __attribute__((unused)) void measure_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static __attribute__((unused)) void measure_line(const char *fmt, ...)
{
    if (sf_measure_fd < 0)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    sf_write_all(sf_measure_fd, buf, (size_t)n);
}

/* `name startNs endNs durationMs`, the demos' format. */
static __attribute__((unused)) void record(const char *name, uint64_t start, uint64_t end)
{
    uint64_t us = (end - start + 500) / 1000;
    measure_line("%s %llu %llu %llu.%03llu", name, (unsigned long long)start, (unsigned long long)end,
                 (unsigned long long)(us / 1000), (unsigned long long)(us % 1000));
}

/*
 * Takes `--measure FILE` out of argv (anywhere) and opens it for appending, so
 * that generations of an exec chain and forked children add to one file.
 * O_CLOEXEC: a program that execs reopens it from its own argv. Also resets
 * the signal mask and ignored signals, and makes the loops' pipe, before
 * any thread starts.
 */
static __attribute__((unused)) void safety_init(int *argc, char **argv)
{
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--measure") && i + 1 < *argc) {
            sf_measure_path = argv[++i];
            continue;
        }
        argv[w++] = argv[i];
    }
    argv[w] = NULL;
    *argc = w;
    if (sf_measure_path) {
        sf_measure_fd = open(sf_measure_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (sf_measure_fd < 0) {
            fprintf(stderr, "cannot open %s: %s\n", sf_measure_path, strerror(errno));
            exit(2);
        }
    }
    /*
     * Start from a clean signal state: a parent (a test runner, a shell) may
     * leave signals blocked or ignored, and both survive exec. SIGPROF is
     * left alone: whatever the parent left there is part of the experiment.
     */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sig == SIGPROF || sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            signal(sig, SIG_DFL);
    }
    if (pipe2(sf_loop_pipe, O_CLOEXEC) != 0) {
        perror("pipe2");
        exit(2);
    }
}

static __attribute__((unused)) const char *errname(int e)
{
    switch (e) {
    case 0: return "0";
    case EINTR: return "EINTR";
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    case EBADF: return "EBADF";
    case EFAULT: return "EFAULT";
    case EMFILE: return "EMFILE";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case ECHILD: return "ECHILD";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ENOSYS: return "ENOSYS";
    case EACCES: return "EACCES";
    default: {
        static __thread char buf[16];
        snprintf(buf, sizeof buf, "E%d", e);
        return buf;
    }
    }
}

/*
 * A duration against what the program asked for: "short" below lo, "long"
 * above hi, else "ok". Tolerances are generous on the long side (a busy
 * 2-core VM delays wakeups) and strict on the short side (a wait that returns
 * early is what hangwatch must never cause).
 */
static __attribute__((unused)) const char *judge(double ms, double lo, double hi)
{
    return ms < lo ? "short" : ms > hi ? "long" : "ok";
}

/* CPU-bound work until `deadline`, in chunks of a few microseconds. */
__attribute__((noinline, unused)) static uint64_t spin_until(uint64_t deadline)
{
    uint64_t h = deadline ^ 0x9e3779b97f4a7c15ull;
    do {
        for (int i = 0; i < 256; i++) {
            h ^= h >> 29;
            h *= 0x100000001b3ull;
        }
    } while (now_ns() < deadline);
    sf_sink += h;
    return h;
}

__attribute__((noinline, unused)) static void spin_ms(double ms)
{
    spin_until(now_ns() + (uint64_t)(ms * 1e6));
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep the caller's frame */
}

/*
 * The loops' wait: one poll on a pipe that never becomes readable, from this
 * one call site, for every thread that runs a loop. hangwatch learns the
 * first fd wait of a thread as its loop wait (and waits from other call sites
 * as waits inside callbacks), so every loop thread waits only through
 * loop_wait(), before any other fd wait.
 */
__attribute__((noinline, unused)) static int loop_wait(int ms)
{
    if (sf_loop_pipe[0] < 0 && pipe2(sf_loop_pipe, O_CLOEXEC) != 0) {
        perror("pipe2");
        exit(2);
    }
    struct pollfd pfd = {.fd = sf_loop_pipe[0], .events = POLLIN};
    /* EINTR (the program's own signals) ends the iteration, as in any event loop. */
    int rc = poll(&pfd, 1, ms);
    __asm__ volatile("" ::: "memory");
    return rc;
}

/* Runs fn() as one piece of measured work on the loop's thread. */
#define MEASURED(name, call)                                                                       \
    do {                                                                                           \
        uint64_t sf_s_ = now_ns();                                                                 \
        call;                                                                                      \
        record(name, sf_s_, now_ns());                                                             \
    } while (0)

#endif
