/*
 * four_loops: four event loops, each with one hang of its own at its own
 * time, so a test can see which threads `--thread` selects (issue 14).
 *
 *   four_loops [--measure FILE]
 *
 * Every loop waits 10 ms at a time in loop_wait(). From the program's start:
 *   main thread   main_stall    at 150 ms, 300 ms of CPU
 *   "net-1"       net1_stall    at 550 ms, 200 ms
 *   "net-2"       net2_stall    at 850 ms, 260 ms
 *   "disk"        disk_stall    at 1200 ms, 180 ms
 * and every loop ends at 1550 ms. The hangs never overlap, so each one's
 * duration is its own whatever the machine's load.
 */
#include "safety.h"

#include <pthread.h>

static uint64_t t0;

__attribute__((noinline)) static void main_stall(void) { spin_ms(300); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void net1_stall(void) { spin_ms(200); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void net2_stall(void) { spin_ms(260); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void disk_stall(void) { spin_ms(180); __asm__ volatile("" ::: "memory"); }

/* Waits in the loop until `at_ms` after the start. */
static void idle_until(uint64_t at_ms)
{
    while (now_ns() < t0 + at_ms * MS_NS)
        loop_wait(10);
}

struct loop { const char *name; uint64_t at_ms; int which; };

static void *loop_thread(void *arg)
{
    const struct loop *l = arg;
    pthread_setname_np(pthread_self(), l->name);
    idle_until(l->at_ms);
    switch (l->which) {
    case 1: MEASURED("net1_stall", net1_stall()); break;
    case 2: MEASURED("net2_stall", net2_stall()); break;
    default: MEASURED("disk_stall", disk_stall()); break;
    }
    idle_until(1550);
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    t0 = now_ns();
    static const struct loop loops[] = {{"net-1", 550, 1}, {"net-2", 850, 2}, {"disk", 1200, 3}};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&threads[i], NULL, loop_thread, (void *)&loops[i]);
    idle_until(150);
    MEASURED("main_stall", main_stall());
    idle_until(1550);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    out("done");
    return 0;
}
