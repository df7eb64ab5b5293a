/*
 * ring_flood: more samples than the sample log can hold (issue 8, item 18).
 *
 *   ring_flood [THREADS [FIRST_MS SECOND_MS]] [--measure FILE]
 *   (run with --thread 'flood-*')
 *
 * THREADS threads (default 4) named flood-N each run a loop and, all at the
 * same time, hang twice: FIRST_MS (default 1500) then SECOND_MS (default
 * 700). Even-numbered threads compute at the bottom of a 400-frame recursion
 * (each frame holds 200 bytes, so every sample copies the largest stack
 * slice hangwatch takes, 48 KiB); odd-numbered ones block in usleep() inside
 * their hangs, which hangwatch logs as a small record per sampling tick, so
 * they fill whatever room the big samples leave. That is more data than the
 * log holds (64 MiB) when the reader falls behind (the test stops it for a
 * while, and samples at 10 kHz), so the log fills up to its last bytes; the
 * hangs' starts and ends must still all arrive. The threads then wait in
 * their loops until every thread is done, so that no thread ends while
 * another one hangs. The measure file has every hang: flood_hang_N.
 */
#include "safety.h"

#include <pthread.h>

#define DEPTH 400

static int start_gate, done_count, threads;
static double lengths[2] = {1500, 700};

__attribute__((noinline)) static uint64_t deep(int depth, double ms)
{
    volatile char frame[200];
    frame[0] = (char)depth;
    if (depth == 0) {
        spin_ms(ms);
        return frame[0];
    }
    uint64_t r = deep(depth - 1, ms) + frame[0];
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) static void blocked_hang(double ms)
{
    uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
    spin_ms(2);
    uint64_t now = now_ns();
    if (now < end)
        usleep((useconds_t)((end - now) / 1000));
    __asm__ volatile("" ::: "memory");
}

static void *flood(void *arg)
{
    int id = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "flood-%d", id);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < 3; i++)
        loop_wait(5);
    while (!__atomic_load_n(&start_gate, __ATOMIC_ACQUIRE))
        loop_wait(1);
    for (int h = 0; h < 2; h++) {
        char label[32];
        snprintf(label, sizeof label, "flood_hang_%d", id);
        if (id % 2)
            MEASURED(label, blocked_hang(lengths[h]));
        else
            MEASURED(label, sf_sink += deep(DEPTH, lengths[h]));
        for (int i = 0; i < 5; i++)
            loop_wait(10);
    }
    __atomic_add_fetch(&done_count, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) < threads)
        loop_wait(10);
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (n < 1 || n > 64)
        n = 4;
    threads = n;
    if (argc > 3) {
        lengths[0] = atof(argv[2]);
        lengths[1] = atof(argv[3]);
    }
    pthread_t t[64];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, flood, (void *)(intptr_t)i);
    loop_wait(50);
    __atomic_store_n(&start_gate, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    out("%d threads hung twice each", n);
    return 0;
}
