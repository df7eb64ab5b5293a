/*
 * dispatch_pause: a C program linked with libdispatch whose main thread just
 * parks (issue 8, item 16).
 *
 *   dispatch_pause [--measure FILE]
 *   cc ... -I/opt/swift/usr/lib/swift -L/opt/swift/usr/lib/swift/linux -ldispatch
 *
 * It hands a little work (5 ms) to a global dispatch queue, arms alarm(2) and
 * parks its main thread in pause(). The SIGALRM handler reports and exits
 * with status 0. The main thread runs no loop and nothing is ever stuck:
 * the report must have no hang at all.
 */
#include "safety.h"

#include <dispatch/dispatch.h>
#include <signal.h>

static uint64_t start;
static volatile int worked;

static void little_work(void *ctx)
{
    (void)ctx;
    spin_ms(5);
    worked = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    double ms = ms_since(start);
    out("alarm after %s; the queue's work %s", judge(ms, 1990, 2500), worked ? "ran" : "did not run");
    _exit(0);
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    start = now_ns();
    signal(SIGALRM, on_alarm);
    dispatch_async_f(dispatch_get_global_queue(DISPATCH_QUEUE_PRIORITY_DEFAULT, 0), NULL, little_work);
    alarm(2);
    for (;;)
        pause();
}
