/*
 * loader_lock: a hang while holding the dynamic loader's lock
 * (issue 8, item 15).
 *
 *   loader_lock hang|killed [--measure FILE]
 *
 * The main loop calls dl_iterate_phdr(); its callback, slow_phdr_callback(),
 * computes for 400 ms on the first module, all the while holding the loader
 * lock (glibc holds it around the whole iteration). A sampler that needs the
 * loader lock (to list modules, or to unwind with dl_iterate_phdr) blocks
 * until the hang is over.
 *
 *   hang    the hang ends normally; the measure file has slow_phdr_callback
 *   killed  a helper thread SIGKILLs the process 250 ms into the hang; the
 *           measure file has "hang_started <startNs>" first, so the test knows
 *           the hang was under way (a killed program cannot write its end)
 */
#include "safety.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>

static int kill_it;
static uint64_t hang_start;

__attribute__((noinline)) static int slow_phdr_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    int *calls = data;
    if ((*calls)++ == 0)
        spin_ms(400);
    __asm__ volatile("" ::: "memory");
    return 0;
}

static void *killer(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&hang_start, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    uint64_t at = __atomic_load_n(&hang_start, __ATOMIC_ACQUIRE) + 250 * MS_NS;
    struct timespec ts = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "hang") && strcmp(mode, "killed")) {
        fprintf(stderr, "usage: loader_lock hang|killed [--measure FILE]\n");
        return 2;
    }
    kill_it = !strcmp(mode, "killed");
    pthread_t t;
    if (kill_it)
        pthread_create(&t, NULL, killer, NULL);
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    int calls = 0;
    uint64_t s = now_ns();
    measure_line("hang_started %llu", (unsigned long long)s);
    __atomic_store_n(&hang_start, s, __ATOMIC_RELEASE);
    dl_iterate_phdr(slow_phdr_callback, &calls);
    record("slow_phdr_callback", s, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    out("modules %s", calls > 1 ? "several" : "one");
    return 0;
}
