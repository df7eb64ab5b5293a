/*
 * dead_stack: waits that never return normally (issue 8, item 2).
 *
 *   dead_stack cancel   [--measure FILE]
 *       A thread named "victim" (watch it with --thread victim) runs on a
 *       stack the program allocated (pthread_attr_setstack), waits once in its
 *       loop, then blocks in usleep(2 s) inside a busy period. The main thread
 *       cancels it at once (before hangwatch's first sample of that busy
 *       period, 10 ms in), joins it, unmaps its stack, and keeps running its
 *       own loop for 400 ms with a 150 ms piece of work.
 *   dead_stack longjmp  [--measure FILE]
 *       The main loop thread blocks in usleep(1 s) inside a hang; its own
 *       SIGALRM handler siglongjmps out of the sleep after 80 ms. Then it does
 *       300 ms of CPU work in after_longjmp_work() (a second hang, whose call
 *       tree must name that function, not the abandoned sleep).
 *
 * stdout: what the program saw ("cancelled", "joined", "survived ..."); the
 * measure file has the hangs it made.
 */
#include "safety.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>

#define VICTIM_STACK (256 * 1024)

static int victim_waiting;

static void *victim(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "victim");
    loop_wait(1); /* registers the watched loop thread; its busy period starts now */
    __atomic_store_n(&victim_waiting, 1, __ATOMIC_RELEASE);
    usleep(2000000); /* a cancellation point: the thread never comes back from here */
    out("victim: usleep returned");
    return NULL;
}

__attribute__((noinline)) static void main_loop_work(double ms)
{
    spin_ms(ms);
    __asm__ volatile("" ::: "memory");
}

static int cancel_mode(void)
{
    loop_wait(1);
    uint64_t busy = now_ns(); /* the main loop is away from its wait until the stack is freed */
    void *stack = mmap(NULL, VICTIM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, VICTIM_STACK);
    pthread_t t;
    if (pthread_create(&t, &attr, victim, NULL) != 0)
        return 1;
    pthread_attr_destroy(&attr);
    while (!__atomic_load_n(&victim_waiting, __ATOMIC_ACQUIRE))
        sched_yield();
    struct timespec settle = {0, 2 * 1000000}; /* let it enter the sleep */
    clock_nanosleep(CLOCK_MONOTONIC, 0, &settle, NULL);
    int err = pthread_cancel(t);
    out("cancel: %s", errname(err));
    void *res = NULL;
    pthread_join(t, &res);
    out("joined: %s", res == PTHREAD_CANCELED ? "cancelled" : "returned");
    /* The program owns this memory: it may unmap it now. */
    out("munmap: %d", munmap(stack, VICTIM_STACK));
    record("cancel_and_join", busy, now_ns());
    uint64_t end = now_ns() + 400 * MS_NS;
    int worked = 0;
    while (now_ns() < end) {
        loop_wait(10);
        if (!worked && now_ns() + 300 * MS_NS < end) {
            MEASURED("main_loop_work", main_loop_work(150));
            worked = 1;
        }
    }
    out("survived: main loop ran 400 ms after the stack was freed");
    return 0;
}

static sigjmp_buf escape;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
    siglongjmp(escape, 1);
}

__attribute__((noinline)) static void wait_then_escape(void)
{
    usleep(1000000); /* the alarm handler jumps out of this after 80 ms */
    out("usleep returned (the alarm did not fire)");
}

__attribute__((noinline)) static void after_longjmp_work(void)
{
    spin_ms(300);
    __asm__ volatile("" ::: "memory");
}

static int longjmp_mode(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    loop_wait(1);
    loop_wait(20);
    uint64_t start = now_ns();
    if (sigsetjmp(escape, 1) == 0) {
        spin_ms(30); /* sampled: the usleep below is inside this hang */
        struct itimerval it = {{0, 0}, {0, 50000}};
        setitimer(ITIMER_REAL, &it, NULL);
        wait_then_escape();
    }
    double ms = ms_since(start);
    record("escaped_sleep", start, now_ns());
    out("escaped: alarms %d, after %s", (int)alarms, judge(ms, 75, 300));
    loop_wait(50);
    loop_wait(50);
    MEASURED("after_longjmp_work", after_longjmp_work());
    loop_wait(50);
    loop_wait(50);
    out("survived");
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "cancel"))
        return cancel_mode();
    if (argc >= 2 && !strcmp(argv[1], "longjmp"))
        return longjmp_mode();
    fprintf(stderr, "usage: dead_stack cancel|longjmp [--measure FILE]\n");
    return 2;
}
