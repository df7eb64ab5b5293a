// The watchdog thread: polls the heartbeats of the watched threads. A busy
// period older than arm_ns starts a sampling session at the sample rate; one
// older than the hang threshold is announced in the log while it lasts, so a
// process killed mid-hang still leaves the hang behind.
//
// Per tick it chooses how to sample without disturbing the thread:
//  - blocked in an interposed wait: copy its stack from the saved context;
//  - blocked in another syscall: read /proc/self/task/TID/syscall and copy
//    from its stack pointer, unless the syscall is one that SA_RESTART
//    transparently restarts (futex, wait4, waitid);
//  - running: send the sampling signal.
// A signal is never sent to a thread sleeping in poll/nanosleep/epoll_wait...
// because those return EINTR to the program whatever SA_RESTART says.
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int open_syscall_file(pid_t tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    // Keep our descriptor far from the low numbers the program hands out.
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (high >= 0) { close(fd); fd = high; }
    return fd;
}

/// Whether thread `tid` blocks SIGPROF (read from /proc, outside any handler).
static bool thread_blocks_sigprof(pid_t tid) {
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    const char *line = strstr(buf, "SigBlk:");
    if (!line) return false;
    unsigned long long mask = strtoull(line + 7, NULL, 16);
    return (mask >> (SIGPROF - 1)) & 1;
}

bool hw_thread_is_running(pid_t tid) {
    char path[64], buf[32];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 7 && strncmp(buf, "running", 7) == 0;
}

static bool syscall_restarts_transparently(long nr) {
    return nr == SYS_futex || nr == SYS_wait4 || nr == SYS_waitid;
}

static void session_start(hw_slot *slot, uint64_t seq) {
    hw_session *ses = &slot->session;
    memset(ses, 0, sizeof *ses);
    ses->active = true;
    ses->busy_seq = seq;
    ses->os_tid = __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
    ses->syscall_fd = open_syscall_file(ses->os_tid);
    ses->hits_at_start = hw_signal_hits(slot);
    // A thread that blocks SIGPROF would only pile up a pending signal that
    // fires later, somewhere else: say so once and sample it without signals.
    ses->signal_blocked = thread_blocks_sigprof(ses->os_tid);
    if (ses->signal_blocked) hw_write_note(ses->os_tid, HW_NOTE_SIGNAL_BLOCKED, seq);
    // Images dlopen'ed since the last look must be in the log before samples need them.
    hw_modules_record(hw_g.log, hw_g.generation);
}

static void session_end(hw_slot *slot) {
    hw_session *ses = &slot->session;
    if (ses->syscall_fd >= 0) close(ses->syscall_fd);
    uint32_t answered = hw_signal_hits(slot) - ses->hits_at_start;
    // Some signals always coalesce with a still-pending one when the thread was
    // preempted; a quarter unanswered means it is not getting them (stopped,
    // traced, or masking SIGPROF after the session began).
    if (ses->requested > 20 && ses->requested - answered > ses->requested / 4)
        hw_write_note(ses->os_tid, HW_NOTE_SAMPLES_MISSED, ses->requested - answered);
    memset(ses, 0, sizeof *ses);
    ses->syscall_fd = -1;
}

static void announce_hang(hw_slot *slot, uint64_t seq, uint64_t since) {
    if (!hw_g.log || hw_g.disabled) return;
    hw_rec_busy *rec = (hw_rec_busy *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->flags = slot->launched ? 0 : HW_BUSY_LAUNCH;
    rec->busy_seq = seq;
    rec->start_ns = since;
    rec->end_ns = 0;
    rec->os_tid = slot->os_tid;
    hw_log_commit(&rec->h, HW_REC_HANG_START);
}

/// Whether this busy period was already announced (a session restarted on a new thread).
static bool slot_announced(const hw_slot *slot, uint64_t seq) { return slot->announced_seq == seq; }

static void take_sample(hw_slot *slot) {
    hw_session *ses = &slot->session;
    if (__atomic_load_n(&slot->blocked_call, __ATOMIC_ACQUIRE)) {
        hw_sample_blocked_wrapper(slot);
        return;
    }
    if (ses->os_tid == 0) return; // main queue in probe mode, worker not identified yet
    char buf[256];
    ssize_t n = ses->syscall_fd >= 0 ? pread(ses->syscall_fd, buf, sizeof buf - 1, 0) : -1;
    if (n > 0) {
        buf[n] = 0;
        if (strncmp(buf, "running", 7) != 0) {
            long nr = -1;
            unsigned long long a[6], sp = 0, pc = 0;
            int got = sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1],
                             &a[2], &a[3], &a[4], &a[5], &sp, &pc);
            if (got == 9 && (nr == SYS_rt_sigsuspend || nr == SYS_pause) && slot->role == HW_ROLE_MAIN_THREAD) {
                hw_main_thread_parked(slot); // dispatchMain(): parked for good, not busy
                return;
            }
            if (got == 9 && nr >= 0 && !syscall_restarts_transparently(nr)) {
                // Re-check the interposed flag: the thread may have entered one meanwhile.
                if (__atomic_load_n(&slot->blocked_call, __ATOMIC_ACQUIRE)) hw_sample_blocked_wrapper(slot);
                else hw_sample_blocked_syscall(slot, nr, sp, pc);
                return;
            }
        }
    }
    ses->last_was_blocked = false;
    if (ses->signal_blocked) return;
    ses->requested++;
    hw_signal_request(ses->os_tid);
}

// Parking: an idle program should not pay for a watchdog that wakes 100
// times a second to find nothing. After HW_PARK_AFTER_NS with every watched
// loop waiting, the watchdog sleeps on a futex; the heartbeat wakes it when a
// busy period starts (one flag load per iteration, a syscall only when
// parked). The heartbeat reads the flag without a fence, so a wakeup can be
// missed when both race: the timeout bounds that to HW_PARK_TIMEOUT_NS late.
#define HW_PARK_AFTER_NS (100 * 1000000ull)
#define HW_PROBE_TICKS 2
#define HW_PARK_TIMEOUT_NS (50 * 1000000ull)

static void park(void) {
    __atomic_store_n(&hw_g.watchdog_parked, 1, __ATOMIC_SEQ_CST);
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++) {
        if (__atomic_load_n(&hw_g.slots[i].state, __ATOMIC_SEQ_CST) == HW_STATE_BUSY) {
            __atomic_store_n(&hw_g.watchdog_parked, 0, __ATOMIC_SEQ_CST);
            return;
        }
    }
    struct timespec timeout = { 0, (long)HW_PARK_TIMEOUT_NS };
    syscall(SYS_futex, &hw_g.watchdog_parked, FUTEX_WAIT_PRIVATE, 1, &timeout, NULL, 0);
    __atomic_store_n(&hw_g.watchdog_parked, 0, __ATOMIC_RELEASE);
}

void hw_watchdog_wake(void) {
    if (__atomic_exchange_n(&hw_g.watchdog_parked, 0, __ATOMIC_ACQ_REL))
        syscall(SYS_futex, &hw_g.watchdog_parked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *watchdog_main(void *arg) {
    (void)arg;
    prctl(PR_SET_NAME, "hangwatch", 0, 0, 0);
    hw_g.watchdog_tid = (pid_t)syscall(SYS_gettid);
    const uint64_t period = hw_g.config.sample_period_ns;
    const uint64_t idle_poll = hw_g.config.arm_ns;
    uint64_t next = hw_now_ns(), last_busy = next;
    while (hw_g.running && !hw_g.disabled) {
        uint64_t now = hw_now_ns();
        bool sampling = false, any_busy = false;
        if (hw_g.probe_main_queue) hw_main_queue_probe_tick(now);
        uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < count; i++) {
            hw_slot *slot = &hw_g.slots[i];
            hw_session *ses = &slot->session;
            uint32_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
            uint64_t seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
            uint64_t since = __atomic_load_n(&slot->busy_since_ns, __ATOMIC_RELAXED);
            bool moved = ses->active && ses->os_tid != __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
            if (ses->active && (state != HW_STATE_BUSY || ses->busy_seq != seq || moved)) session_end(slot);
            if (state != HW_STATE_BUSY || now < since) continue;
            any_busy = true;
            uint64_t busy = now - since;
            bool announced = ses->active ? ses->hang_announced : slot_announced(slot, seq);
            if (!ses->active && busy >= hw_g.config.arm_ns) session_start(slot, seq);
            if (!ses->active) continue;
            ses->hang_announced = announced;
            if (!ses->hang_announced && busy >= hw_g.config.hang_ns) {
                announce_hang(slot, seq, since);
                ses->hang_announced = true;
                slot->announced_seq = seq;
            }
            take_sample(slot);
            if (++ses->ticks % 128 == 0) hw_modules_record(hw_g.log, hw_g.generation);
            sampling = true;
        }
        if (!sampling) {
            if (any_busy) last_busy = now;
            else if (!hw_g.probe_main_queue && now - last_busy >= HW_PARK_AFTER_NS) {
                park();
                next = hw_now_ns();
                continue;
            }
        }
        // Sample on a fixed grid while a session runs; otherwise poll slowly.
        // In probe mode one wake per probe interval both checks the last probe
        // and posts the next (HW_PROBE_TICKS idle polls).
        next += sampling ? period : (hw_g.probe_main_queue ? HW_PROBE_TICKS * idle_poll : idle_poll);
        now = hw_now_ns();
        if (next < now) next = now + (sampling ? period / 2 : 0);
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
    }
    return NULL;
}

int hw_watchdog_start(void) {
    // The watchdog must never take a signal meant for the program (SIGINT,
    // SIGCHLD, alarm...): it blocks them all, and the new thread inherits that.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    hw_g.program_sigmask = old;
    int rc = pthread_create(&hw_g.watchdog, NULL, watchdog_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) pthread_detach(hw_g.watchdog);
    return rc == 0 ? 0 : -1;
}
