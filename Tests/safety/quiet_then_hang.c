/*
 * quiet_then_hang: the first hang after a quiet spell.
 *
 *   quiet_then_hang [--quiet-ms 1500] [--spin-ms 300] [--parent-file FILE] [--measure FILE]
 *
 * The loop waits once for --quiet-ms, then one iteration spins for --spin-ms
 * (measured as "hang"). A second with no per-task perf event open anywhere
 * is enough for the kernel to switch its perf scheduling hooks off; the
 * event that samples the hang then opens slowly, unless `hangwatch run`
 * holds one (Sources/hangwatch, perf_warm.c).
 *
 * stdout: how many perf event descriptors the program itself holds, before
 * and after the hang: none, plain or watched (hangwatch's held event is its
 * own, and the agent's sampling events live in the watchdog's private
 * descriptor table). Not the whole list: the test runner leaks descriptors
 * into its children that differ from one launch to the next.
 * --parent-file FILE: written during the quiet spell, "perf_events=N": how
 * many perf event descriptors the parent process holds (hangwatch when
 * watched; the test runner, none, when plain).
 */
#include "safety.h"

#include <dirent.h>

/* Perf event descriptors held by process `pid`. */
static int perf_events_of(pid_t pid)
{
    char dir_path[64], link_path[400], target[128];
    snprintf(dir_path, sizeof dir_path, "/proc/%d/fd", (int)pid);
    DIR *dir = opendir(dir_path);
    if (!dir) return -1;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        snprintf(link_path, sizeof link_path, "%s/%s", dir_path, e->d_name);
        ssize_t len = readlink(link_path, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = 0;
        if (strstr(target, "perf_event")) count++;
    }
    closedir(dir);
    return count;
}

__attribute__((noinline)) static void first_hang(int ms)
{
    spin_ms(ms);
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int quiet_ms = 1500, spin = 300;
    const char *parent_file = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--quiet-ms")) quiet_ms = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--spin-ms")) spin = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--parent-file")) parent_file = argv[i + 1];
    }
    loop_wait(10);
    out("before: perf event descriptors %d", perf_events_of(getpid()));
    /* Read in the middle of the quiet spell, while hangwatch (if any) has long been running. */
    loop_wait(quiet_ms / 2);
    if (parent_file) {
        int fd = open(parent_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char buf[64];
            int n = snprintf(buf, sizeof buf, "perf_events=%d\n", perf_events_of(getppid()));
            sf_write_all(fd, buf, (size_t)n);
            close(fd);
        }
    }
    loop_wait(quiet_ms - quiet_ms / 2);
    MEASURED("hang", first_hang(spin));
    loop_wait(10);
    out("after: perf event descriptors %d", perf_events_of(getpid()));
    return 0;
}
