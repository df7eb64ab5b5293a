/*
 * clone_children: children of every kind, each running a loop of its own
 * that hangs (issue 8, item 14; issue 14).
 *
 *   clone_children clone|_Fork|vfork|fork|fork-exec|posix_spawn [--measure FILE]
 *   clone_children child [--measure FILE]      (the exec'd child's life)
 *
 * The parent's main loop waits in its loop; it makes one child with a raw
 * clone(SIGCHLD) syscall, with _Fork() or vfork() (no atfork handlers), with
 * fork(), or as a new program: fork() then execv() of this program, or
 * posix_spawn() of it (both with mode `child`, so the exec'd child loads the
 * agent again through the inherited LD_PRELOAD). The child runs a poll
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
#include <spawn.h>
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

extern char **environ;

/* argv for the exec'd child: this program, mode `child`, the measure file. */
static char **child_argv(char **storage)
{
    int n = 0;
    storage[n++] = "/proc/self/exe";
    storage[n++] = "child";
    if (sf_measure_path) {
        storage[n++] = "--measure";
        storage[n++] = (char *)sf_measure_path;
    }
    storage[n] = NULL;
    return storage;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "child"))
        child_life();
    char *args[6];
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
    } else if (!strcmp(mode, "fork")) {
        pid = fork();
        if (pid == 0)
            child_life();
    } else if (!strcmp(mode, "fork-exec")) {
        pid = fork();
        if (pid == 0) {
            execv("/proc/self/exe", child_argv(args));
            _exit(127);
        }
    } else if (!strcmp(mode, "posix_spawn")) {
        int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv(args), environ);
        if (rc != 0) {
            errno = rc;
            pid = -1;
        }
    } else {
        fprintf(stderr, "usage: clone_children clone|_Fork|vfork|fork|fork-exec|posix_spawn [--measure FILE]\n");
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
