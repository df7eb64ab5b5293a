// Time the whole process spent stopped: SIGSTOP or Ctrl-Z, a tracer's group
// stop, the cgroup freezer. The watchdog is one of the process's threads, so
// it is stopped too and cannot watch the stop happen; it sees it afterwards,
// as a sleep that ended late. A late wake-up is run-queue wait (a busy
// machine, CPU throttling: the thread is runnable and schedstat counts it) or
// time the thread was neither running nor runnable after its timer expired,
// which for a thread sleeping on a deadline means it was stopped or frozen.
// So: the lateness of its deadline sleeps since a baseline, minus the growth
// of its own run-queue wait over the same span, is stopped time. Run-queue
// wait while it ran ticks lowers the figure, never raises it.
//
// Costs: one clock read per tick (taken anyway) and a pread of the
// watchdog's own schedstat at most every HW_STOP_REBASE_NS while it ticks,
// plus one per stop seen. Nothing is read from or done to the program's threads.
#include "engine_internal.h"

#include <stdio.h>
#include <unistd.h>

#define HW_STOP_LATE_NS (2 * 1000000ull)      /* a wake-up this late is looked at */
#define HW_STOP_REBASE_NS (100 * 1000000ull)  /* timer slack adds up: a fresh baseline this often */

static struct {
    bool have_base;
    uint64_t base_ns;       // when the baseline was read
    uint64_t base_runq_ns;  // the watchdog's run-queue wait then
    uint64_t late_ns;       // lateness of its deadline sleeps since
    int fd;                 // its own schedstat: kept only in a private descriptor table
} clock_state = { .fd = -1 };

static uint64_t own_runq_ns(void) {
    int fd = clock_state.fd;
    if (fd < 0) {
        fd = hw_proc_open_task_file((pid_t)__atomic_load_n(&hw_g.watchdog_tid, __ATOMIC_ACQUIRE), "schedstat");
        if (fd >= 0 && hw_proc_fds_private()) clock_state.fd = fd;
    }
    if (fd < 0) return UINT64_MAX;
    uint64_t on_cpu, waited;
    bool read = hw_os_read_schedstat(fd, &on_cpu, &waited);
    if (fd != clock_state.fd) close(fd);
    return read ? waited : UINT64_MAX;
}

static void rebase(uint64_t now) {
    uint64_t runq = own_runq_ns();
    clock_state.have_base = runq != UINT64_MAX;
    clock_state.base_ns = now;
    clock_state.base_runq_ns = runq;
    clock_state.late_ns = 0;
}

void hw_stop_before_sleep(void) {
    uint64_t now = hw_now_ns();
    if (!clock_state.have_base || now - clock_state.base_ns >= HW_STOP_REBASE_NS) rebase(now);
}

static void write_stopped(uint64_t from, uint64_t to, uint64_t stopped) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_stopped *rec = (hw_rec_stopped *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->reserved = rec->reserved2 = 0;
    rec->from_ns = from;
    rec->to_ns = to;
    rec->stopped_ns = stopped;
    hw_log_commit(&rec->h, HW_REC_STOPPED);
}

void hw_stop_after_sleep(uint64_t deadline_ns, uint64_t now) {
    if (!clock_state.have_base || now <= deadline_ns) return;
    uint64_t late = now - deadline_ns;
    clock_state.late_ns += late;
    if (late < HW_STOP_LATE_NS) return;
    uint64_t runq = own_runq_ns();
    if (runq == UINT64_MAX || runq < clock_state.base_runq_ns) { clock_state.have_base = false; return; }
    uint64_t waited = runq - clock_state.base_runq_ns;
    uint64_t stopped = clock_state.late_ns > waited ? clock_state.late_ns - waited : 0;
    if (stopped > late) stopped = late; // earlier sleeps' slack is not this stop's
    if (stopped >= HW_STOP_LATE_NS) write_stopped(deadline_ns, now, stopped);
    clock_state.base_ns = now;
    clock_state.base_runq_ns = runq;
    clock_state.late_ns = 0;
}

void hw_stop_forget(void) { clock_state.have_base = false; }

void hw_stop_close(void) {
    if (clock_state.fd >= 0) close(clock_state.fd);
    clock_state.fd = -1;
    clock_state.have_base = false;
}
