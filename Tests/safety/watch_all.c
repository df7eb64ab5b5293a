/*
 * watch_all: a program watched with broad thread globs (issue 8, item 17).
 *
 *   watch_all [--measure FILE]   (run with --thread '*' or --thread 'hang*')
 *
 * The main loop idles (20 ms waits) for 900 ms. A thread named "hang-worker"
 * runs its own loop and does 300 ms of work in hang_worker_stall() once. That
 * is the program's only hang; nothing of hangwatch's own may be reported.
 */
#include "safety.h"

#include <pthread.h>

__attribute__((noinline)) static void hang_worker_stall(void)
{
    spin_ms(300);
    __asm__ volatile("" ::: "memory");
}

static int stop;

static void *hang_worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hang-worker");
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    MEASURED("hang_worker_stall", hang_worker_stall());
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        loop_wait(10);
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    pthread_t t;
    pthread_create(&t, NULL, hang_worker, NULL);
    uint64_t end = now_ns() + 900 * MS_NS;
    while (now_ns() < end)
        loop_wait(20);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    out("done");
    return 0;
}
