/*
 * idle_join: the cost of watching a thread that does nothing (issue 8, item 12).
 *
 *   idle_join [--measure FILE]
 *
 * A batch program: the main thread starts a worker that computes for 2 s and
 * parks in pthread_join until it ends. The
 * main thread never waits in a loop, so hangwatch sees its whole life as the
 * launch period.
 *
 * The cost of watching is the CPU time the process spent outside the worker:
 * CLOCK_PROCESS_CPUTIME_ID (every thread, hangwatch's included) minus the
 * worker's own CLOCK_THREAD_CPUTIME_ID. Plainly that is the main thread's few
 * microseconds. stdout classifies it against 2 % of the wall time ("small"
 * or "large"); the measure file has the figures:
 *   idle_cost <extraCpuMs> <wallMs> <percent>
 */
#include "safety.h"

#include <pthread.h>

static double worker_cpu_ms;

static double cpu_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static uint64_t compute(uint64_t rounds)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < rounds; i++) {
        h ^= i;
        h *= 0x100000001b3ull;
        h ^= h >> 31;
    }
    return h;
}

static void *worker(void *arg)
{
    (void)arg;
    /* 2 s of wall time (a loaded machine gives it less CPU; the cost below does not depend on it). */
    uint64_t start = now_ns();
    while (now_ns() - start < 2000 * MS_NS)
        sf_sink += compute(20000);
    worker_cpu_ms = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    uint64_t start = now_ns();
    double process_before = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    double extra = cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - process_before - worker_cpu_ms;
    double wall = ms_since(start);
    double percent = 100.0 * extra / wall;
    measure_line("idle_cost %.3f %.3f %.3f", extra, wall, percent);
    out("CPU outside the worker: %s", percent < 2.0 ? "small (under 2 % of a core)" : "large (2 % of a core or more)");
    return 0;
}
