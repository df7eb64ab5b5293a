/*
 * Shared by the C demos: the measure file (`<name> <startNs> <endNs> <durationMs>`,
 * one write(2) per line), the pid file, --verbose logging and the clock.
 * Each demo defines DEMO_NAME before including this file.
 */
#ifndef DEMO_SUPPORT_H
#define DEMO_SUPPORT_H
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int measure_fd = -1;
static int verbose = 0;
static uint64_t t_start;            /* program start, CLOCK_MONOTONIC ns */
static volatile uint64_t sink;      /* keeps results alive */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    if (!verbose)
        return;
    char buf[512];
    int n = snprintf(buf, sizeof buf, DEMO_NAME "[%d] %.3f ", (int)getpid(), (now_ns() - t_start) / 1e6);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = sizeof buf - 2;
    buf[n++] = '\n';
    (void)!write(2, buf, n);
}

static void write_all(int fd, const char *buf, size_t len)
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

/* One line per piece of work, one write(2) each (O_APPEND: safe from any thread). */
static void record(const char *name, uint64_t start, uint64_t end)
{
    char line[256];
    uint64_t us = (end - start + 500) / 1000;
    int n = snprintf(line, sizeof line, "%s %llu %llu %llu.%03llu\n", name,
                     (unsigned long long)start, (unsigned long long)end,
                     (unsigned long long)(us / 1000), (unsigned long long)(us % 1000));
    if (measure_fd >= 0)
        write_all(measure_fd, line, (size_t)n);
    logf_("work %.*s", n - 1, line);
}

static void write_pid_file(const char *path)
{
    char tmp[4096], text[32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, DEMO_NAME ": cannot create %s: %s\n", tmp, strerror(errno));
        return;
    }
    int n = snprintf(text, sizeof text, "%d\n", (int)getpid());
    write_all(fd, text, (size_t)n);
    close(fd);
    if (rename(tmp, path) != 0) {
        fprintf(stderr, DEMO_NAME ": cannot rename %s: %s\n", tmp, strerror(errno));
        unlink(tmp);
    }
}


#endif
