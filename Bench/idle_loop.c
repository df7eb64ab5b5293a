/*
 * idle_loop: an idle event loop, for Bench/run.sh measure (b).
 *
 *   cc -O2 -o idle_loop idle_loop.c
 *   idle_loop [--ms 4000] [--tick-ms 100] [--out FILE]
 *
 * The main thread sits in epoll_wait(-1) on a timerfd that ticks every
 * tick-ms; each tick's callback only reads the timerfd. After `ms` it exits.
 * This is what an idle RunLoop/CFRunLoop with a repeating Timer does.
 * With --out FILE, one line is appended at exit:
 *   wall_ns=<loop wall time> proc_cpu_ns=<CLOCK_PROCESS_CPUTIME_ID: every
 *   thread, an injected watchdog included> main_cpu_ns=<main thread only>
 *   ticks=<callbacks run> other_switches=<context switches of every thread
 *   but the main one: an injected watchdog's wakeups, counted by the kernel>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* voluntary + involuntary context switches of every thread but the caller:
 * each wakeup of a thread that sleeps between wakeups is one switch away. */
static unsigned long long other_threads_switches(void)
{
    unsigned long long total = 0;
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return 0;
    char self[32];
    snprintf(self, sizeof self, "%d", gettid());
    struct dirent *d;
    while ((d = readdir(dir))) {
        if (d->d_name[0] == '.' || !strcmp(d->d_name, self)) continue;
        char path[64], line[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", d->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long long n;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
                total += n;
        }
        fclose(f);
    }
    closedir(dir);
    return total;
}

int main(int argc, char **argv)
{
    uint64_t total_ms = 4000, tick_ms = 100;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ms") && i + 1 < argc) total_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--tick-ms") && i + 1 < argc) tick_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else { fprintf(stderr, "idle_loop: bad argument '%s'\n", argv[i]); return 2; }
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (ep < 0 || tfd < 0) { perror("idle_loop"); return 1; }
    struct itimerspec its = {
        .it_interval = { (time_t)(tick_ms / 1000), (long)(tick_ms % 1000) * 1000000L },
        .it_value = { (time_t)(tick_ms / 1000), (long)(tick_ms % 1000) * 1000000L },
    };
    timerfd_settime(tfd, 0, &its, NULL);
    struct epoll_event e = { .events = EPOLLIN, .data.fd = tfd };
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &e);

    uint64_t t0 = clock_ns(CLOCK_MONOTONIC), end = t0 + total_ms * 1000000ull;
    unsigned ticks = 0;
    while (clock_ns(CLOCK_MONOTONIC) < end) {
        struct epoll_event got;
        int n = epoll_wait(ep, &got, 1, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { perror("idle_loop: epoll_wait"); return 1; }
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) == (ssize_t)sizeof expirations) ticks++;
    }
    uint64_t wall = clock_ns(CLOCK_MONOTONIC) - t0;
    if (out) {
        char line[320];
        unsigned long long switches = other_threads_switches();
        int len = snprintf(line, sizeof line,
                           "wall_ns=%llu proc_cpu_ns=%llu main_cpu_ns=%llu ticks=%u other_switches=%llu\n",
                           (unsigned long long)wall, (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID),
                           (unsigned long long)clock_ns(CLOCK_THREAD_CPUTIME_ID), ticks, switches);
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) { perror(out); return 1; }
        (void)!write(fd, line, (size_t)len);
        close(fd);
    }
    return 0;
}
