/*
 * fork_in_hang: a fork made while hangwatch samples the forking thread.
 *
 *   fork_in_hang [--measure FILE]
 *
 * One loop callback spins 150 ms (the kernel samples it: the watchdog holds
 * perf event descriptors, in its own descriptor table), then opens a pipe,
 * forks, and spins 150 ms more. The child checks that every descriptor the
 * parent had open at the fork is open in it too, writes a line into the
 * pipe and exits 0. The parent reads the line and reaps the child.
 *
 * stdout: whether the child had every descriptor, what the parent read, and
 * the child's exit status: the same plain and watched. The fork child's
 * atfork handler in the agent once closed the numbers of the watchdog's
 * perf descriptors in the child's table, where they are the program's own
 * (the pipe's, here): the child's write failed with EBADF.
 */
#include "safety.h"

#include <dirent.h>
#include <sys/wait.h>

#define MAX_FDS 256

/* The calling process's open descriptors, ascending, without the directory's own. */
static int open_fds(int *fds)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    struct dirent *e;
    while ((e = readdir(dir)) && n < MAX_FDS) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd != dirfd(dir)) fds[n++] = fd;
    }
    closedir(dir);
    return n;
}

__attribute__((noinline)) static void fork_while_sampled(void)
{
    spin_ms(150);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        out("pipe: %s", strerror(errno));
        return;
    }
    int before[MAX_FDS];
    int n = open_fds(before);
    pid_t child = fork();
    if (child == 0) {
        int missing = 0;
        for (int i = 0; i < n; i++)
            if (before[i] != pipefd[0] && fcntl(before[i], F_GETFD) < 0) missing++;
        char line[64];
        int len = snprintf(line, sizeof line, "child: %d of the parent's descriptors missing", missing);
        ssize_t w = write(pipefd[1], line, (size_t)len);
        _exit(w == len ? 0 : 1);
    }
    close(pipefd[1]);
    spin_ms(150);
    char buf[128] = "";
    ssize_t r = read(pipefd[0], buf, sizeof buf - 1);
    if (r >= 0) buf[r] = 0;
    close(pipefd[0]);
    int status = 0;
    waitpid(child, &status, 0);
    out("parent read %zd bytes: '%s'", r, r > 0 ? buf : "");
    out("child exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    MEASURED("hang", fork_while_sampled());
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    return 0;
}
