// /proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices". Neither time
// grows while the thread is blocked.
#include "hangwatch_os.h"

#include <stdio.h>
#include <unistd.h>

bool hw_os_read_schedstat(int fd, uint64_t *run_ns, uint64_t *wait_ns) {
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return false;
    buf[n] = 0;
    unsigned long long run, wait;
    if (sscanf(buf, "%llu %llu", &run, &wait) != 2) return false;
    *run_ns = run;
    *wait_ns = wait;
    return true;
}
