/*
 * long_hang: one long hang, for the reader's memory (issue 8, item 19).
 *
 *   long_hang [SECONDS] [--measure FILE]
 *
 * The main loop waits, then hangs for SECONDS (default 12) of CPU work that
 * cycles through three functions at the bottom of a 100-frame recursion
 * (each frame holds 200 bytes, as a deep server stack would: every sample
 * copies about 24 KiB of stack). A handful of distinct stacks, sampled about
 * a thousand times a second. Then it waits again and exits. The measure
 * file has the hang (long_hang). The test watches the hangwatch process's
 * peak memory: it must grow with the distinct stacks, not with the samples.
 */
#include "safety.h"

__attribute__((noinline)) static void parse_step(void) { spin_ms(7); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void layout_step(void) { spin_ms(5); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void render_step(void) { spin_ms(3); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) static void cycle(double seconds)
{
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    while (now_ns() < end) {
        parse_step();
        layout_step();
        render_step();
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static uint64_t long_work(int depth, double seconds)
{
    volatile char frame[200];
    frame[0] = (char)depth;
    if (depth == 0)
        cycle(seconds);
    else
        sf_sink += long_work(depth - 1, seconds);
    __asm__ volatile("" ::: "memory");
    return frame[0];
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    double seconds = argc > 1 ? atof(argv[1]) : 12;
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    MEASURED("long_hang", long_work(100, seconds));
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    out("hung %.0f s", seconds);
    return 0;
}
