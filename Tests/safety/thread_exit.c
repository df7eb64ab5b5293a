/*
 * thread_exit: watched threads that end (issue 8, item 13).
 *
 *   thread_exit returns [--measure FILE]   (watch with --thread evloop)
 *       A thread named "evloop" runs an event loop (ten 10 ms waits), does
 *       20 ms of work and returns. The main thread joins it and idles in its
 *       own loop for 1.2 s. Nothing here is a hang.
 *   thread_exit workers [--measure FILE]   (watch with --thread main --thread 'worker-*' --thread late-loop)
 *       70 short-lived threads named worker-N, one after the other: each
 *       waits once in its own loop, works 2 ms and ends. Then the main loop
 *       does 400 ms of work in main_loop_stall() (a real hang), and a thread
 *       named late-loop, started after the workers, does 300 ms of work in
 *       late_loop_stall() between two loop waits (another real hang).
 *
 * The measure file has every real hang; the report must have exactly those.
 */
#include "safety.h"

#include <pthread.h>

static void *evloop(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "evloop");
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    spin_ms(20);
    return NULL;
}

static int returns_mode(void)
{
    loop_wait(1);
    pthread_t t;
    pthread_create(&t, NULL, evloop, NULL);
    pthread_join(t, NULL);
    out("evloop returned");
    uint64_t end = now_ns() + 1200 * MS_NS;
    while (now_ns() < end)
        loop_wait(20);
    out("main loop idled 1.2 s");
    return 0;
}

static void *short_worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    loop_wait(1);
    spin_ms(2);
    return NULL;
}

__attribute__((noinline)) static void main_loop_stall(void)
{
    spin_ms(400);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void late_loop_stall(void)
{
    spin_ms(300);
    __asm__ volatile("" ::: "memory");
}

static int late_stop;

static void *late_loop(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "late-loop");
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    MEASURED("late_loop_stall", late_loop_stall());
    while (!__atomic_load_n(&late_stop, __ATOMIC_ACQUIRE))
        loop_wait(10);
    return NULL;
}

static int workers_mode(void)
{
    loop_wait(1);
    for (int i = 0; i < 70; i++) {
        pthread_t t;
        pthread_create(&t, NULL, short_worker, (void *)(intptr_t)i);
        pthread_join(t, NULL);
        loop_wait(1);
    }
    out("70 workers ended");
    for (int i = 0; i < 5; i++)
        loop_wait(20);
    MEASURED("main_loop_stall", main_loop_stall());
    for (int i = 0; i < 5; i++)
        loop_wait(20);
    pthread_t late;
    pthread_create(&late, NULL, late_loop, NULL);
    for (int i = 0; i < 25; i++)
        loop_wait(20);
    __atomic_store_n(&late_stop, 1, __ATOMIC_RELEASE);
    pthread_join(late, NULL);
    out("late loop ended");
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "returns"))
        return returns_mode();
    if (!strcmp(mode, "workers"))
        return workers_mode();
    fprintf(stderr, "usage: thread_exit returns|workers [--measure FILE]\n");
    return 2;
}
