// How much of a hang the busy thread spent on a CPU. Where the samples land
// cannot tell: a thread parked in a futex for 400 ms shows the same leaf as
// one spinning in it. Its own CPU clock can. The watchdog reads it (and the
// run-queue wait from schedstat, so that a thread starved of a CPU on a busy
// machine still counts as wanting one) when a sampling session starts, every
// HW_CPU_PERIOD_NS while it lasts, and when it ends; the reader takes the
// first and last reading of each busy period.
//
// Only the watchdog runs this. Reading another thread's CPU clock is a
// clock_gettime on the kernel's per-thread clock id; nothing touches the
// thread itself, so the program cannot tell.
#include "engine_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HW_CPU_PERIOD_NS (10 * 1000000ull)

/// Watchdog-private, one per slot: when the last reading was written, and the
/// schedstat descriptor of the thread being read (in the watchdog's table).
static struct cpu_watch {
    uint64_t last_ns;
    pid_t os_tid;
    int schedstat_fd;
    bool open;
} watches[HW_MAX_SLOTS];

static struct cpu_watch *watch_of(const hw_slot *slot) { return &watches[slot - hw_g.slots]; }

/// The kernel's clock id for thread `tid`'s CPU time: ~tid << 3, per-thread
/// (4), sched clock (2): what pthread_getcpuclockid gives for a pthread_t,
/// usable from another thread of the same process.
static clockid_t thread_clock(pid_t tid) {
    return (clockid_t)((~(uint32_t)tid << 3) | 6u);
}

bool hw_thread_cpu_ns(pid_t tid, uint64_t *cpu_ns) {
    struct timespec ts;
    if (tid <= 0 || syscall(SYS_clock_gettime, thread_clock(tid), &ts) != 0) return false;
    *cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return true;
}

/// Nanoseconds spent runnable on a run queue (schedstat).
static uint64_t runq_ns(int fd) {
    uint64_t on_cpu, waited;
    return hw_os_read_schedstat(fd, &on_cpu, &waited) ? waited : UINT64_MAX;
}

static void write_reading(const hw_slot *slot, struct cpu_watch *w, uint64_t now) {
    uint64_t cpu;
    if (!hw_thread_cpu_ns(w->os_tid, &cpu)) return; // the thread is gone: no reading
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_cpu *rec = (hw_rec_cpu *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->os_tid = w->os_tid;
    rec->busy_seq = slot->session.busy_seq;
    rec->time_ns = now;
    rec->cpu_ns = cpu;
    rec->runq_ns = runq_ns(w->schedstat_fd);
    hw_log_commit(&rec->h, HW_REC_CPU);
    w->last_ns = now;
}

void hw_cpu_session_start(hw_slot *slot) {
    struct cpu_watch *w = watch_of(slot);
    w->os_tid = slot->session.os_tid;
    w->schedstat_fd = w->os_tid > 0 ? hw_proc_open_task_file(w->os_tid, "schedstat") : -1;
    w->open = true;
    if (w->os_tid > 0) write_reading(slot, w, hw_now_ns());
}

void hw_cpu_tick(hw_slot *slot, uint64_t now) {
    struct cpu_watch *w = watch_of(slot);
    if (w->open && w->os_tid > 0 && now - w->last_ns >= HW_CPU_PERIOD_NS) write_reading(slot, w, now);
}

bool hw_cpu_active_ns(const hw_slot *slot, uint64_t *active_ns) {
    const struct cpu_watch *w = &watches[slot - hw_g.slots];
    uint64_t cpu, runq;
    if (!w->open || w->os_tid <= 0 || !hw_thread_cpu_ns(w->os_tid, &cpu)) return false;
    if ((runq = runq_ns(w->schedstat_fd)) == UINT64_MAX) return false;
    *active_ns = cpu + runq;
    return true;
}

void hw_cpu_session_end(hw_slot *slot) {
    struct cpu_watch *w = watch_of(slot);
    if (!w->open) return;
    // The busy period just ended (or its work moved to another thread): the
    // last reading closes the window the reader measures the share over.
    if (w->os_tid > 0) write_reading(slot, w, hw_now_ns());
    if (w->schedstat_fd >= 0) close(w->schedstat_fd);
    *w = (struct cpu_watch){ .schedstat_fd = -1 };
}
