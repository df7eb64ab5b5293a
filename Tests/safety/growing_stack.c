/*
 * growing_stack: a hang whose stack gets about 15 KiB deeper halfway
 * through. The kernel sampler fits the stack it copies to the first samples
 * of a hang (sampler_perf.c); the deeper half must still be captured whole,
 * for all but the sample that found it deeper.
 *
 *   growing_stack [--measure FILE]
 *
 * One loop tick runs shallow_spin() for 200 ms of CPU, then descend(96):
 * each level keeps a 128-byte frame of its own (144 bytes or more with the
 * return address and saved rbp), and the deepest one runs
 * deep_spin() for 400 ms. The loop then idles and the program exits.
 */
#include "safety.h"

__attribute__((noinline)) static void shallow_spin(void) { spin_ms(200); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void deep_spin(void) { spin_ms(400); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) static int descend(int depth)
{
    volatile char frame[128];
    frame[0] = (char)depth;
    if (depth == 0) {
        deep_spin();
        return frame[0];
    }
    int r = descend(depth - 1);
    return r + frame[0]; /* not a tail call: every level stays on the stack */
}

__attribute__((noinline)) static int grow_while_hung(void)
{
    shallow_spin();
    return descend(96);
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    int r;
    MEASURED("grow_while_hung", r = grow_while_hung());
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    out("done %d", r > 0);
    return 0;
}
