/*
 * clone_children: children made without fork()'s atfork handlers
 * (issue 8, item 14).
 *
 *   clone_children clone|_Fork|vfork [--measure FILE]
 *
 * The parent's main loop waits in its loop; it makes one child with a raw
 * clone(SIGCHLD) syscall, with _Fork(), or with vfork(). The child runs a poll
 * loop of its own with two busy periods (300 ms in child_busy_long and
 * 150 ms in child_busy_short) and exits with status 7. The parent reaps it
 * (WNOHANG between loop waits: it never hangs itself, except that vfork
 * suspends it until the child exits, which is a hang of the parent's own).
 *
 * The measure file has the child's work (child_busy_*) and the parent's
 * (parent_vfork, the time vfork kept it away from its loop): the report must
 * have no hang of the child's and, for vfork, the parent's own.
 */
#include "safety.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

__attribute__((noinline)) static void child_busy_long(void)
{
    spin_ms(300);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void child_busy_short(void)
{
    spin_ms(150);
    __asm__ volatile("" ::: "memory");
}

/* The child's life: a loop with two busy periods. Never returns. */
__attribute__((noinline, noreturn)) static void child_life(void)
{
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    MEASURED("child_busy_long", child_busy_long());
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    MEASURED("child_busy_short", child_busy_short());
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    _exit(7);
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    pid_t pid;
    uint64_t s = now_ns();
    if (!strcmp(mode, "clone")) {
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0)
            child_life();
    } else if (!strcmp(mode, "_Fork")) {
        pid = _Fork();
        if (pid == 0)
            child_life();
    } else if (!strcmp(mode, "vfork")) {
        pid = vfork();
        if (pid == 0)
            child_life();
        record("parent_vfork", s, now_ns());
    } else {
        fprintf(stderr, "usage: clone_children clone|_Fork|vfork [--measure FILE]\n");
        return 2;
    }
    if (pid < 0) {
        out("%s: %s", mode, errname(errno));
        return 1;
    }
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            out("waitpid: %s", errname(errno));
            return 1;
        }
        loop_wait(10);
    }
    out("%s child: %s %d", mode, WIFEXITED(status) ? "exit" : "signal",
        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    return 0;
}
