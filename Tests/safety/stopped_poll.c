/*
 * stopped_poll: an idle poll() loop that its user stops and continues (job
 * control: Ctrl-Z, fg), for `hangwatch attach`.
 *
 *   stopped_poll [FIRST_MS]
 *
 * The main thread waits in poll() on a pipe that never becomes readable,
 * three times 500 ms (the first FIRST_MS, 500 by default), then exits. A SIGSTOP and SIGCONT sent meanwhile make
 * the kernel go on with the wait as restart_syscall (the same pc, stack and
 * arguments): the loop is as idle as before, and a report must show no hang.
 * Prints "waits N" (the poll calls that returned 0) at the end.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int first_ms = argc > 1 ? atoi(argv[1]) : 500;
    int p[2];
    if (pipe(p) != 0) return 1;
    struct pollfd pfd = { .fd = p[0], .events = POLLIN };
    int waits = 0;
    for (int i = 0; i < 3; i++)
        if (poll(&pfd, 1, i == 0 ? first_ms : 500) == 0) waits++;
    printf("waits %d\n", waits);
    return 0;
}
