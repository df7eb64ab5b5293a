/*
 * spin_then_block: one hang that alternates running and blocked spells.
 *
 *   spin_then_block [--rounds 6] [--last-block-ms 20] [--measure FILE]
 *
 * The main loop idles, then one tick runs `rounds` rounds of spin_phase()
 * (40 ms of CPU) and block_phase() (a 20 ms clock_nanosleep), then idles
 * again and prints whether every sleep lasted its 20 ms (the last one
 * --last-block-ms: a long one ends the hang inside the blocked thread's
 * steady stride, every 16th tick by then).
 *
 * While the hung thread runs, the kernel samples it and the watchdog polls it
 * only every few ticks (watchdog.c, HW_RUNNING_STRIDE); the poll that finds it
 * blocked comes up to a stride after it blocked. Each block follows 40 ms of
 * running, so every round crosses that edge: the report's blocked time must
 * still match the sleeps the program measured, and its running time the spins.
 */
#include "safety.h"

__attribute__((noinline)) static void spin_phase(void)
{
    spin_ms(40);
}

/* Returns whether the sleep lasted its `ms` (never less). */
__attribute__((noinline)) static int block_phase(int ms)
{
    uint64_t start = now_ns();
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {}
    __asm__ volatile("" ::: "memory");
    return ms_since(start) >= ms;
}

__attribute__((noinline)) static int alternate(int rounds, int last_ms)
{
    int ok = 1;
    for (int i = 0; i < rounds; i++) {
        MEASURED("spin", spin_phase());
        uint64_t start = now_ns();
        ok &= block_phase(i + 1 == rounds ? last_ms : 20);
        record("block", start, now_ns());
    }
    return ok;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int rounds = 6, last_ms = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--last-block-ms")) last_ms = atoi(argv[i + 1]);
    }
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    int ok = 1;
    MEASURED("hang", ok = alternate(rounds, last_ms));
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    out("%s", ok ? "sleeps ok" : "a sleep was cut short");
    return 0;
}
