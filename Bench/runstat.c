/*
 * runstat: run a command, then append one line about it to a file.
 *
 *   cc -O2 -o runstat runstat.c
 *   runstat OUTFILE -- PROGRAM [ARGS...]
 *
 * Line: start_ns=<CLOCK_MONOTONIC before fork> end_ns=<after wait4 returned>
 *       wall_ns=<end-start> cpu_ns=<user+sys of PROGRAM and every descendant
 *       it waited for, from wait4's rusage> status=<exit code or 128+signal>
 * runstat exits with PROGRAM's status. PROGRAM's stdio is left alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: runstat OUTFILE -- PROGRAM [ARGS...]\n");
        return 2;
    }
    uint64_t start = mono_ns();
    pid_t pid = fork();
    if (pid < 0) { perror("runstat: fork"); return 70; }
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        fprintf(stderr, "runstat: cannot run %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) { perror("runstat: wait4"); return 70; }
    }
    uint64_t end = mono_ns();
    uint64_t cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull
                 + (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char line[256];
    int len = snprintf(line, sizeof line, "start_ns=%llu end_ns=%llu wall_ns=%llu cpu_ns=%llu status=%d\n",
                       (unsigned long long)start, (unsigned long long)end,
                       (unsigned long long)(end - start), (unsigned long long)cpu, status);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) { perror(argv[1]); return 70; }
    (void)!write(fd, line, (size_t)len);
    close(fd);
    return status;
}
