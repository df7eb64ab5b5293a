/*
 * deep_stack: a hang at the bottom of a stack far deeper than the kernel
 * sampler's 24 KiB copy (issue 14: "deeper stacks are cut there and the
 * report marks them truncated").
 *
 *   deep_stack [--measure FILE]
 *   deep_stack --frames N [--measure FILE]
 *
 * The main loop idles, then one tick calls descend(400): each level keeps a
 * 128-byte frame of its own (about 60 KiB in all), and the deepest one runs
 * bottom_spin() for 300 ms of CPU. The loop then idles and the program exits.
 *
 * --frames N: N levels of small frames instead (32 bytes each, N = 300 is
 * about 10 KiB): the copy holds the whole stack, and whether an unwind limited
 * to 256 frames reaches the thread's entry depends on N alone.
 */
#include "safety.h"

__attribute__((noinline)) static void bottom_spin(void) { spin_ms(300); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) static int descend(int depth)
{
    volatile char frame[128];
    frame[0] = (char)depth;
    if (depth == 0) {
        MEASURED("bottom_spin", bottom_spin());
        return frame[0];
    }
    int r = descend(depth - 1);
    return r + frame[0]; /* not a tail call: every level stays on the stack */
}

__attribute__((noinline)) static int descend_small(int depth)
{
    volatile int level = depth;
    if (depth == 0) {
        MEASURED("bottom_spin", bottom_spin());
        return level;
    }
    int r = descend_small(depth - 1);
    return r + level; /* not a tail call */
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int small = argc >= 3 && !strcmp(argv[1], "--frames") ? atoi(argv[2]) : 0;
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    int r = small > 0 ? descend_small(small) : descend(400);
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    out("done %d", r > 0);
    return 0;
}
