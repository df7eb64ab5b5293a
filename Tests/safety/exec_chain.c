/*
 * exec_chain: a program that replaces itself (or starts children) right after
 * CPU-bound work, while hangwatch samples that work (issue 8, item 1).
 *
 *   exec_chain MODE [GENERATIONS] [--measure FILE]
 *
 * Modes (each generation busy-works ~20 ms first, so the watchdog is sampling
 * the thread when the exec happens):
 *   execv    execv(/proc/self/exe) itself, GENERATIONS times (default 150)
 *   fexecve  the same through fexecve() on a descriptor of itself
 *   execvp   the same through execvp() and a $PATH search for its own name
 *   thread   a non-main thread named "exec-worker" does the exec (watch it
 *            with --thread exec-worker); the main thread idles in its loop
 *   system   system("exit 3") after each busy period, GENERATIONS times
 *   spawn    posix_spawn() of itself in "child" mode, waited for
 *
 * stdout: one line at the end, e.g. "execv generations 150", plus one line per
 * child status that was not the expected one. A generation killed by a
 * stray signal never prints: the exit status says which signal.
 */
#include "safety.h"

#include <libgen.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static const char *mode;
static int generation, generations;

/* The next generation's argv: MODE GENERATIONS GEN+1 [--measure FILE]. */
static char **next_argv(char *argv0)
{
    static char gens[16], next[16];
    static char *args[8];
    snprintf(gens, sizeof gens, "%d", generations);
    snprintf(next, sizeof next, "%d", generation + 1);
    int i = 0;
    args[i++] = argv0;
    args[i++] = (char *)mode;
    args[i++] = gens;
    args[i++] = next;
    if (sf_measure_path) {
        args[i++] = "--measure";
        args[i++] = (char *)sf_measure_path;
    }
    args[i] = NULL;
    return args;
}

__attribute__((noinline)) static void work_before_exec(void)
{
    spin_ms(20);
    __asm__ volatile("" ::: "memory");
}

static void exec_next(char *argv0)
{
    char **args = next_argv(argv0);
    if (!strcmp(mode, "fexecve")) {
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            out("open self: %s", errname(errno));
            exit(1);
        }
        fexecve(fd, args, environ);
    } else if (!strcmp(mode, "execvp")) {
        /* Search $PATH for our own name, as a shell-started program would. */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            out("readlink self: %s", errname(errno));
            exit(1);
        }
        self[n] = 0;
        char dir[4096], name[4096];
        snprintf(dir, sizeof dir, "%s", self);
        snprintf(name, sizeof name, "%s", self);
        char path[8192];
        snprintf(path, sizeof path, "%s:/usr/bin:/bin", dirname(dir));
        setenv("PATH", path, 1);
        args[0] = basename(name);
        execvp(args[0], args);
    } else {
        execv("/proc/self/exe", args);
    }
    out("exec failed: %s", errname(errno));
    exit(1);
}

static void *exec_worker(void *arg)
{
    char *argv0 = arg;
    pthread_setname_np(pthread_self(), "exec-worker");
    loop_wait(1); /* a watched loop thread: its first wait registers it */
    work_before_exec();
    exec_next(argv0);
    return NULL;
}

static int run_children(void)
{
    int bad = 0;
    for (generation = 0; generation < generations; generation++) {
        loop_wait(2);
        work_before_exec();
        int status = -1;
        if (!strcmp(mode, "system")) {
            status = system("exit 3");
        } else {
            pid_t pid;
            char *args[] = {"exec_chain", "child", NULL};
            int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ);
            if (err != 0) {
                out("posix_spawn: %s", errname(err));
                return 1;
            }
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) {
            out("child %d: status %#x", generation, status);
            bad++;
        }
    }
    out("%s generations %d bad %d", mode, generations, bad);
    return bad != 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "child"))
        return 3;
    if (argc < 2) {
        fprintf(stderr, "usage: exec_chain execv|fexecve|execvp|thread|system|spawn [GENERATIONS]\n");
        return 2;
    }
    mode = argv[1];
    generations = argc > 2 ? atoi(argv[2]) : 150;
    generation = argc > 3 ? atoi(argv[3]) : 0;

    if (!strcmp(mode, "system") || !strcmp(mode, "spawn"))
        return run_children();

    if (generation >= generations) {
        out("%s generations %d", mode, generation);
        return 0;
    }
    if (!strcmp(mode, "thread")) {
        pthread_t t;
        if (pthread_create(&t, NULL, exec_worker, argv[0]) != 0)
            return 1;
        for (;;)
            loop_wait(50); /* the exec replaces us from the worker */
    }
    /* The main thread: busy from its start (hangwatch samples the launch), then exec. */
    work_before_exec();
    exec_next(argv[0]);
    return 1;
}
