/*
 * perf_hooks: what the kernel's per-task perf hooks cost, with and without a
 * process that keeps them on as `hangwatch run` does (CSupport/cli/perf_warm.c).
 * BENCHMARKS.md, "The first hang after a quiet spell".
 *
 *   cc -O2 -pthread -o perf_hooks perf_hooks.c
 *   perf_hooks [--rounds 4] [--trips 200000] [--only open|switch]
 *
 * Two measures, each without and then with a holder: a child process that
 * opens one disabled PERF_COUNT_SW_DUMMY event on itself and sleeps.
 *  open:   after 2 s with no per-task event anywhere (unless the holder runs),
 *          the time one perf_event_open of a per-task event takes (the kernel
 *          switches its hooks on and waits out an RCU grace period), then
 *          the same open 0.6 s after a close (the hooks' switch-off is due
 *          one second after the close that left no event, and is not put off
 *          by later opens), and again 0.6 s later.
 *  switch: two threads pinned to one CPU pass a byte back and forth through
 *          pipes; ns per round trip (two context switches), the hooks' cost
 *          to every task on the machine while they are on.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A disabled dummy event on the calling thread: a per-task event that counts nothing. */
static int dummy_event(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static double timed_open_ms(void)
{
    uint64_t start = now_ns();
    int fd = dummy_event();
    double ms = (double)(now_ns() - start) / 1e6;
    if (fd < 0) {
        perror("perf_event_open");
        exit(1);
    }
    close(fd);
    return ms;
}

static pid_t start_holder(void)
{
    int ready[2];
    if (pipe(ready) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = dummy_event();
        char c = fd >= 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1) _exit(1);
        for (;;) pause();
    }
    char c = 'n';
    if (read(ready[0], &c, 1) != 1 || c != 'y') {
        fprintf(stderr, "perf_hooks: the holder could not open its event\n");
        exit(1);
    }
    close(ready[0]);
    close(ready[1]);
    return pid;
}

static void stop_holder(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static int ping[2], pong[2], trips;

static void pin_to_cpu0(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void *ponger(void *arg)
{
    (void)arg;
    pin_to_cpu0();
    char c;
    for (int i = 0; i < trips; i++)
        if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) break;
    return NULL;
}

static double round_trip_ns(void)
{
    if (pipe(ping) != 0 || pipe(pong) != 0) exit(1);
    pthread_t t;
    pthread_create(&t, NULL, ponger, NULL);
    pin_to_cpu0();
    char c = 0;
    uint64_t start = now_ns();
    for (int i = 0; i < trips; i++)
        if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) break;
    double ns = (double)(now_ns() - start) / trips;
    pthread_join(t, NULL);
    close(ping[0]), close(ping[1]), close(pong[0]), close(pong[1]);
    return ns;
}

int main(int argc, char **argv)
{
    int rounds = 4;
    const char *only = "";
    trips = 200000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--trips")) trips = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--only")) only = argv[i + 1];
    }
    for (int r = 0; r < rounds && strcmp(only, "switch") != 0; r++) {
        for (int held = 0; held < 2; held++) {
            pid_t holder = held ? start_holder() : 0;
            sleep(2);
            double quiet = timed_open_ms();
            usleep(600000);
            double first = timed_open_ms();
            usleep(600000);
            double second = timed_open_ms();
            printf("open %s: after 2 s quiet %.3f ms; +0.6 s %.3f ms; +1.2 s %.3f ms\n",
                   held ? "held  " : "alone ", quiet, first, second);
            if (holder) stop_holder(holder);
        }
    }
    for (int r = 0; r < rounds && strcmp(only, "open") != 0; r++) {
        for (int held = 0; held < 2; held++) {
            pid_t holder = held ? start_holder() : 0;
            if (!held) sleep(2); /* the hooks off: nothing held for more than a second */
            printf("switch %s: %.1f ns a round trip\n", held ? "held  " : "alone ", round_trip_ns());
            if (holder) stop_holder(holder);
        }
    }
    return 0;
}
