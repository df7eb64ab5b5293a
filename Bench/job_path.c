/*
 * job_path: the agent's pool-job path alone, with no libdispatch and no Swift
 * runtime (Bench/job_path.sh). A worker thread enqueues a job with
 * dispatch_async_f N times; the agent's wrapper swaps the job function for its
 * trampoline and hands it on to job_path_dispatch.so, preloaded after the
 * agent, which keeps it; the worker then runs what was kept. Prints the
 * worker's CPU ns per job for each round. Plain, it is the loop's own floor;
 * under `hangwatch run` with LD_PRELOAD=job_path_dispatch.so, the difference
 * is what the agent costs per job: the enqueue wrapper, the trampoline and
 * both clock reads (start stamp and end check).
 *
 *   cc -O2 -fPIC -shared -o job_path_dispatch.so job_path_dispatch.c
 *   cc -O2 -pthread -o job_path job_path.c ./job_path_dispatch.so -Wl,-rpath,'$ORIGIN'
 *   job_path [JOBS [ROUNDS]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*work_fn)(void *);
extern void dispatch_async_f(void *queue, void *ctx, work_fn fn);
extern void dispatch_queue_set_width(void *queue, long width);
extern __thread work_fn job_path_kept_fn;
extern __thread void *job_path_kept_ctx;

static long queue_object; /* the "queue": only its address counts */
static volatile uint64_t ran;
static long jobs = 1000000, rounds = 9;

static void job(void *ctx) { (void)ctx; ran++; }

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Not the main thread: the agent never makes that one a pool worker. */
static void *worker(void *arg)
{
    (void)arg;
    void *queue = &queue_object;
    dispatch_queue_set_width(queue, -3); /* DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS: a pool queue */
    for (long r = 0; r < rounds; r++) {
        uint64_t start = thread_cpu_ns();
        for (long i = 0; i < jobs; i++) {
            dispatch_async_f(queue, NULL, job);
            job_path_kept_fn(job_path_kept_ctx);
        }
        printf("%.2f%s\n", (double)(thread_cpu_ns() - start) / (double)jobs,
               job_path_kept_fn == job ? " (not bracketed)" : "");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) jobs = atol(argv[1]);
    if (argc > 2) rounds = atol(argv[2]);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_join(thread, NULL);
    return 0;
}
