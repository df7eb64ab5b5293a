// Keeps the kernel's perf scheduling hooks switched on while a program runs
// under `hangwatch run`, so that the agent's sampling events open at once.
//
// Why: the kernel switches its per-task perf hooks on (a static branch) when
// a per-task event opens while they are off, and waits out an RCU grace
// period while doing so. When the last such event closes, it schedules the
// switch-off for a second later, and later opens and closes do not put that
// off (kernel/events/core.c: account_event, unaccount_event,
// perf_sched_delayed). So without a holder, the first hang after a quiet
// spell, and any hang that comes a second after another ended, paid the slow
// open before its first sample: 5-16 ms on the VMs we measure, against
// 0.03-0.05 ms while the hooks are on (Bench/perf_hooks.c; BENCHMARKS.md,
// "The first hang after a quiet spell").
//
// One disabled software event on the calling thread of *this* process is
// enough: it never counts, is not inherited, and its descriptor is
// close-on-exec, so the program holds nothing new. The hooks it keeps on run
// at every context switch on the machine and return at once for tasks
// without perf events (no cost measurable here; as whenever any profiler
// runs). A program that opens perf events itself finds them fast too.
#include "hangwatch_cli_support.h"
#include "hangwatch_os.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int hw_cli_keep_perf_warm(void) {
    // A seccomp filter may kill for perf_event_open rather than fail it: the
    // agent's own rule (sampler_perf.c), with the same reader of the calling
    // thread's status. A program started from here inherits the filter and
    // samples with signals anyway.
    unsigned long long mode = 1;
    char status[4096];
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    bool read = fd >= 0 && hw_os_read_status(fd, status, sizeof status) > 0;
    if (fd >= 0) close(fd);
    if (!read || !hw_os_status_field(status, "Seccomp:", 10, &mode) || mode != 0) return -EPERM;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY; // counts nothing, samples nothing
    attr.disabled = 1;
    attr.exclude_kernel = 1; // allowed at perf_event_paranoid 2, unprivileged
    attr.exclude_hv = 1;
    fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}
