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
 * --parent-file FILE: written at the end of the quiet spell,
 * "perf_events=N open_ms=T": how many perf event descriptors the parent
 * process holds (hangwatch when watched; the test runner, none, when plain),
 * and how long the program's own perf_event_open of a disabled per-task
 * event took then: a few ms when the kernel's hooks were off, about 0.05 ms
 * while something holds them on.
 */
#include "safety.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

/* Opens and closes a disabled dummy per-task event on this thread: the ms it took to open, or -1. */
static double timed_perf_open_ms(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    uint64_t start = now_ns();
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    double ms = ms_since(start);
    if (fd < 0) return -1;
    close(fd);
    return ms;
}

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
    loop_wait(quiet_ms);
    /* At the end of the quiet spell: hangwatch (if any) has long been running, and nothing
     * of this test opened a per-task event for over a second. */
    if (parent_file) {
        int perf_events = perf_events_of(getppid());
        double open_ms = timed_perf_open_ms();
        int fd = open(parent_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char buf[96];
            int n = snprintf(buf, sizeof buf, "perf_events=%d open_ms=%.3f\n", perf_events, open_ms);
            sf_write_all(fd, buf, (size_t)n);
            close(fd);
        }
    }
    MEASURED("hang", first_hang(spin));
    loop_wait(10);
    out("after: perf event descriptors %d", perf_events_of(getpid()));
    return 0;
}
