// A seccomp filter the program puts on every thread (SECCOMP_FILTER_FLAG_TSYNC)
// binds the watchdog too, and one that kills for perf_event_open,
// process_vm_readv or opening /proc files would kill the program at the
// watchdog's next such call. The watchdog cannot know what a filter allows,
// so it looks at its own filters before each batch of those calls: once it
// carries a filter it did not have at its start, it stops sampling for good
// (no /proc opens, no foreign reads, no perf_event_open, no signals either)
// and only times hangs from the heartbeats; a note says when that happened.
//
// The look is a pread of the watchdog's own status file through a descriptor
// opened at its start: pread on an open descriptor is a call every filter
// lets through (prctl(PR_GET_SECCOMP) would be cheaper, but sandboxes such as
// Chromium's kill for prctl options they do not list). It only narrows the
// window: a filter synchronised onto the watchdog between its look and its
// calls of that tick can still kill (docs/LIMITS.md).
//
// The baseline is the filter count of the first watchdog of this process
// (filters already there at the start come from the parent or a container;
// the kernel sampler is then not tried, sampler_perf.c). It survives a
// watchdog restart (unshare) and fork, so a watchdog restarted by a thread
// that carries the program's filter stops at once.
#include "engine_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int status_fd = -1;
static dev_t status_dev;
static ino_t status_ino;
static long long baseline = -1;  // the first watchdog's filter count (or mode, on old kernels)
static bool stopped;             // a filter of the program's binds the watchdog: no risky calls

/// The watchdog's own filter count (Seccomp_filters:, kernels from 5.9 on),
/// else its seccomp mode (0 or 2); -1 when unreadable.
static long long own_filters(void) {
    unsigned long long value;
    if (hw_proc_status_field_fd(status_fd, "Seccomp_filters:", 10, &value)) return (long long)value;
    if (hw_proc_status_field_fd(status_fd, "Seccomp:", 10, &value)) return (long long)value;
    return -1;
}

/// In library mode the descriptor sits in the program's table, which may
/// close it or reuse its number: it is checked before each read.
static bool status_fd_still_ours(void) {
    struct stat st;
    return fstat(status_fd, &st) == 0 && st.st_dev == status_dev && st.st_ino == status_ino;
}

static void open_status(void) {
    status_fd = hw_proc_open_task_file((pid_t)syscall(SYS_gettid), "status");
    struct stat st;
    if (status_fd >= 0 && fstat(status_fd, &st) == 0) {
        status_dev = st.st_dev;
        status_ino = st.st_ino;
    } else if (status_fd >= 0) {
        close(status_fd);
        status_fd = -1;
    }
}

static void stop_risky_calls(void) {
    stopped = true;
    uint64_t now = hw_now_ns();
    hw_write_note(0, HW_NOTE_SECCOMP_STOPPED, now > hw_g.start_ns ? now - hw_g.start_ns : 0);
}

void hw_seccomp_watch_start(void) {
    if (stopped) return; // opening the status file is one of the calls a filter may kill for
    open_status();
    long long now = status_fd >= 0 ? own_filters() : -1;
    if (now < 0) return; // unreadable: nothing to compare with, the watchdog works as before
    if (baseline < 0) baseline = now;
    else if (now > baseline) stop_risky_calls();
}

bool hw_seccomp_risky_calls_allowed(void) {
    if (stopped) return false;
    if (status_fd < 0) return true;
    if (!hw_proc_fds_private() && !status_fd_still_ours()) {
        status_fd = -1; // not ours any more: never close the program's descriptor
        open_status();
        if (status_fd < 0) return true;
    }
    long long now = own_filters();
    if (now > baseline) stop_risky_calls();
    return !stopped;
}

bool hw_seccomp_stopped(void) { return stopped; }

void hw_seccomp_watch_stop(void) {
    if (status_fd >= 0 && (hw_proc_fds_private() || status_fd_still_ours())) close(status_fd);
    status_fd = -1;
}
