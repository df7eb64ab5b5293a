/*
 * wake_floor: what one timer wake-up of a sleeping thread costs here, in CPU
 * time of that thread, with no hangwatch. For Bench/run.sh: the watchdog's
 * idle cost is its wake-ups times this, whatever it does once awake.
 *
 *   cc -O2 -pthread -o wake_floor wake_floor.c
 *   wake_floor [--period-ms 20] [--ms 2000]
 *
 * A thread sleeps to absolute CLOCK_MONOTONIC deadlines period-ms apart (as
 * the watchdog polls) while the main thread waits; at the end it prints
 *   wakes=<N> cpu_ns=<the thread's CPU> per_wake_ns=<cpu_ns / N>
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long period_ns = 20000000L, run_ms = 2000;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    long wakes = run_ms * 1000000L / period_ns;
    /* The first wake-up starts the count, so thread creation is not in it. */
    at.tv_nsec += period_ns;
    while (at.tv_nsec >= 1000000000L) { at.tv_nsec -= 1000000000L; at.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    uint64_t start = thread_cpu_ns();
    for (long i = 0; i < wakes; i++) {
        at.tv_nsec += period_ns;
        while (at.tv_nsec >= 1000000000L) { at.tv_nsec -= 1000000000L; at.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
    uint64_t cpu = thread_cpu_ns() - start;
    printf("wakes=%ld cpu_ns=%llu per_wake_ns=%llu\n", wakes, (unsigned long long)cpu,
           (unsigned long long)(wakes > 0 ? cpu / (uint64_t)wakes : 0));
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--period-ms")) period_ns = atol(argv[i + 1]) * 1000000L;
        else if (!strcmp(argv[i], "--ms")) run_ms = atol(argv[i + 1]);
        else { fprintf(stderr, "usage: wake_floor [--period-ms N] [--ms N]\n"); return 2; }
    }
    if (period_ns <= 0 || run_ms <= 0) { fprintf(stderr, "wake_floor: periods and lengths are positive\n"); return 2; }
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) != 0) return 1;
    pthread_join(t, NULL);
    return 0;
}
