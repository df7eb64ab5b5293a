/*
 * longjmp_wait: a signal handler that siglongjmps out of the loop's wait
 * (issue 31). The wrapper around the loop's poll never returns, so nothing
 * of it runs after the wait: the loop must be seen busy from the moment the
 * handler began, and the work after the jump must be one CPU hang.
 *
 *   longjmp_wait [--measure FILE]
 *
 * The loop waits twice (its poll becomes the loop's wait), then waits for
 * 1 s; a SIGALRM at 100 ms jumps out of that poll, and the loop body then
 * spins 500 ms in worked_after_jump() before it waits again.
 *
 * stdout: how the poll ended. Measure file: `worked` (from the jump's
 * landing to the end of the spin).
 */
#include "safety.h"

#include <setjmp.h>
#include <sys/time.h>

static sigjmp_buf back_to_loop;

static void on_alarm(int sig)
{
    (void)sig;
    siglongjmp(back_to_loop, 1);
}

__attribute__((noinline)) static void worked_after_jump(void)
{
    spin_ms(500);
    __asm__ volatile("" ::: "memory"); /* not a tail call: keep this frame */
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    loop_wait(1);
    loop_wait(20);
    if (sigsetjmp(back_to_loop, 1) == 0) {
        struct itimerval it = {{0, 0}, {0, 100000}};
        setitimer(ITIMER_REAL, &it, NULL);
        int rc = loop_wait(1000);
        out("the loop's poll returned %d: the alarm did not jump", rc);
    } else {
        out("the alarm jumped out of the loop's poll");
        MEASURED("worked", worked_after_jump());
    }
    loop_wait(20);
    loop_wait(20);
    return 0;
}
