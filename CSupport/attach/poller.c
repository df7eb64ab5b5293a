// The attach poller: one thread in the hangwatch process that reads the
// watched threads' /proc syscall files every millisecond and turns what it
// sees into busy periods and samples, in the engine's record format.
//
// Idle means blocked in the loop's own wait:
//  - epoll_wait / epoll_pwait / epoll_pwait2: always (the agent's rule too);
//  - poll / ppoll / select / pselect6 (and, for libdispatch workers, a timed futex wait):
//    only at the loop's wait site, (syscall, pc, sp). The first such site a
//    thread is seen in is taken as its loop's wait, as the agent takes the
//    first fd-set wait; afterwards the site entered most often (counted in
//    separate waits, not in time, so one long blocked callback cannot take
//    over) is the loop's. The loop's wait sits at one stack depth, so a
//    callback's poll or a worker's lock wait, deeper on the stack, is busy.
// Anything else (running, another syscall) is busy. A transition is dated
// at the midpoint between the two polls that saw it: ±0.5 ms plus poll lateness.
#include "attach_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HWA_SITES 4
#define HWA_RESCAN_NS (250 * 1000000ull)
#define HWA_MAPS_MIN_NS (10 * 1000000ull)
#define HWA_HIST_US 4000
#define HWA_IDLE_AFTER_NS (100 * 1000000ull)
#define HWA_IDLE_POLL_NS (4 * 1000000ull)
/// Gaps between two polls above which schedstat dates a transition (see tick_thread).
#define HWA_SCHEDSTAT_GAP_NS (5 * 1000000ull)
/// How often the futex word of an unchanged lock wait is read again (the owner may change).
#define HWA_LOCK_RECHECK_NS (10 * 1000000ull)
/// How long a busy thread whose /proc files vanished is kept open in case the
/// whole process is ending (its threads go first, the process a little later).
#define HWA_VANISH_GRACE_NS (50 * 1000000ull)

/// A wait site; `arg0` (the poll array, the futex word) tells a restart of its call from another call at the same place.
typedef struct hwa_site { long nr; uint64_t pc, sp, arg0; uint32_t episodes; } hwa_site;

typedef struct hwa_thread {
    pid_t tid;
    char name[16];
    bool watched, seen, busy, announced, dropped;
    uint32_t role;
    int fd;
    uint64_t since, seq, last_obs, next_sample;
    uint64_t last_end;     // where its last busy period was dated to end: the next starts no earlier
    hwa_site sites[HWA_SITES];
    uint32_t site_count;
    int learned;           // index into sites, -1 none
    bool in_site;          // the previous poll saw it in a candidate wait
    hwa_site current;      // ...this one
    int sched_fd;          // /proc/.../schedstat: CPU and run-queue time, to date transitions
    uint64_t sched_ns;     // run + run-queue ns at sched_obs (0: not read)
    uint64_t sched_obs;
    bool last_running;     // the previous poll saw it running (not blocked)
    bool stop_pending;     // seized and interrupted, not stopped yet: no probe until detached (it is s->held)
    bool last_blocked;     // dedup of blocked samples within a busy period
    long last_nr;
    uint64_t last_sp, last_pc;
    hwa_site not_poll;     // the last restart whose wait channel said it was no poll (nr 0: none)
    bool counted;          // its sampling is counted in the log's sessions: the reader stays awake
    uint64_t vanished;     // busy when its /proc files vanished, at this poll (0: not)
    // The lock its busy period waits on, while it is sampled blocked in futex (lock_owner.c).
    bool lock_active;
    uint64_t lock_addr, lock_checked;
    uint32_t lock_how;
    pid_t lock_owner;      // 0: none known
    int owner_fd;          // the owner's /proc syscall file
    bool owner_last;       // dedup of a blocked owner's samples
    long owner_nr;
    uint64_t owner_sp, owner_pc;
    // The wait-for chain beyond the owner, as last written (links from the owner on).
    uint64_t chain_ns;
    hw_os_wait_chain chain;
} hwa_thread;

struct hwa_session {
    hw_log_header *log;
    hwa_config cfg;
    char patterns[512];
    bool want_main;
    pthread_t thread;
    int stop;
    int exited;
    int stat_fd;
    int last_count;
    hwa_thread *threads;
    size_t count, cap;
    hwa_maps maps;
    uint64_t maps_ns, scan_ns, prev_tick_ns;
    bool main_queue_mode, stops_refused, first_tick, thread_gone;
    // The one stop still pending, if any (0: none). At most one thread is
    // ever held: no new seize is made while a stop is pending, so an exec
    // (de_thread) never meets a second stop of ours in another thread.
    pid_t held, held_owner;
    uint64_t held_since;
    uint32_t eperm_streak; // EPERMs in a row with no other tracer
    uint64_t last_busy_ns; // the last poll that found a watched thread busy
    uint8_t stack[HW_MAX_STACK_COPY];
    uint32_t hist[HWA_HIST_US + 1];
    hwa_stats stats;
};

static bool is_epoll(long nr) { return nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == 441 /* epoll_pwait2 */; }
static bool is_fdset(long nr) { return nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select || nr == SYS_pselect6; }

/// A libdispatch worker parks between items in a *timed* futex wait
/// (dispatch_semaphore_wait with a 5 s timeout, so an unused worker exits:
/// FUTEX_WAIT_BITSET with a timeout, seen as `202 addr 0x189 0 TIMEOUT ...`);
/// a lock a block waits for (pthread_mutex_lock, DispatchQueue.sync,
/// DispatchSemaphore.wait(), Mutex) waits with no timeout (`202 addr 0x80 2
/// 0x0 ...`), so it can never be learned as the worker's idle site, even when
/// it is the first wait a new worker is seen in.
static bool timed_futex_wait(const hwa_probe *p) {
    int cmd = (int)(p->args[1] & 0x7f); // without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256)
    return (cmd == 0 /* FUTEX_WAIT */ || cmd == 9 /* FUTEX_WAIT_BITSET */) && p->args[3] != 0;
}

static bool candidate(const hwa_thread *t, const hwa_probe *p) {
    return is_fdset(p->nr) || (t->role == HW_ROLE_MAIN_QUEUE && p->nr == SYS_futex && timed_futex_wait(p));
}

/// Whether `p` is at `site`'s place: the same pc, sp and first argument (a
/// restart keeps all three of the call it continues).
static bool same_place(const hwa_site *site, const hwa_probe *p) {
    return site->pc == p->pc && site->sp == p->sp && site->arg0 == p->args[0];
}

/// Whether a thread in restart_syscall (`p`) sleeps in poll's wait, as its
/// wait channel says (`poll_schedule_timeout` on the kernels seen; only poll,
/// timed futex waits and the sleeps restart this way, and the others show
/// `futex_*` or the syscall entry). Read for a restart at a site never seen:
/// a poll is then learned like any poll, and a no is remembered, so each
/// restart is asked about once. The syscall file is read again after the
/// wait channel: a thread that went on between the two reads (its sleep
/// over, now in a poll) is not taken for a poll at the sleep's place. A name
/// without "poll" (another kernel's) leaves the restart busy, as before.
static bool restart_sleeps_in_poll(hwa_session *s, hwa_thread *t, const hwa_probe *p) {
    if (t->not_poll.nr == p->nr && same_place(&t->not_poll, p)) return false;
    int fd = hwa_open_task_file(s->cfg.pid, t->tid, "wchan");
    if (fd < 0) return false;
    char name[64];
    ssize_t n = pread(fd, name, sizeof name - 1, 0);
    close(fd);
    if (n <= 0) return false;
    name[n] = 0;
    hwa_site here = { p->nr, p->pc, p->sp, p->args[0], 0 };
    hwa_probe again = hwa_probe_fd(t->fd);
    if (again.activity != HWA_BLOCKED || again.nr != p->nr || !same_place(&here, &again))
        return false; // it moved on: ask at the next tick
    if (strstr(name, "poll")) return true;
    t->not_poll = here;
    return false;
}

/// The call a `restart_syscall` goes on with. A timed wait (poll, a futex
/// wait with a timeout, a relative sleep) that a stop interrupted (one of
/// ours, for a sample, landing as the thread entered its wait; or SIGSTOP and
/// SIGCONT, job control) continues as restart_syscall, with the registers of
/// the call it continues: the same pc, sp and arguments. Read as itself it is
/// no loop wait, so the thread looked busy until the wait ended: the idle gap
/// between two main-queue blocks became part of one long hang. Of the
/// candidate waits only poll and timed futex waits continue this way (ppoll,
/// select and pselect6 restart as themselves), so a site of one of those with
/// the same pc, sp and first argument names the call. A main-queue worker's
/// timed futex wait is also known by its arguments alone, its first one a
/// futex word (an aligned user address: a restarted clock_nanosleep's clock
/// id or a poll(NULL, 0, ms) never is). A poll at a site never seen (the
/// thread was stopped and continued before we attached: Ctrl-Z, then `bg`)
/// is known by the kernel's wait channel (see restart_sleeps_in_poll).
/// Anything else stays restart_syscall, busy.
static long restarted_call(hwa_session *s, hwa_thread *t, const hwa_probe *p) {
    if (p->nr != SYS_restart_syscall) return p->nr;
    for (uint32_t i = 0; i < t->site_count; i++) {
        const hwa_site *site = &t->sites[i];
        if ((site->nr == SYS_poll || site->nr == SYS_futex) && same_place(site, p)) return site->nr;
    }
    if (t->role == HW_ROLE_MAIN_QUEUE && p->args[0] >= 4096 && !(p->args[0] & 3) && timed_futex_wait(p))
        return SYS_futex;
    if (restart_sleeps_in_poll(s, t, p)) return SYS_poll;
    return p->nr;
}

/// `probe` as the call it stands for (see restarted_call).
static hwa_probe continued_call(hwa_session *s, hwa_thread *t, const hwa_probe *probe) {
    hwa_probe call = *probe;
    call.nr = restarted_call(s, t, probe);
    return call;
}

/// Whether the thread, blocked as `p` says (a restart as the call it continues), is in its loop's wait; learns the site.
static bool idle_wait(hwa_thread *t, const hwa_probe *p) {
    if (p->activity != HWA_BLOCKED) { t->in_site = false; return false; }
    if (is_epoll(p->nr)) { t->in_site = false; return true; }
    if (!candidate(t, p)) { t->in_site = false; return false; }
    hwa_site here = { p->nr, p->pc, p->sp, p->args[0], 0 };
    bool same = t->in_site && t->current.nr == here.nr && t->current.pc == here.pc && t->current.sp == here.sp;
    int at = -1;
    for (uint32_t i = 0; i < t->site_count; i++)
        if (t->sites[i].nr == here.nr && t->sites[i].pc == here.pc && t->sites[i].sp == here.sp) at = (int)i;
    if (!same) { // a new wait begins: count it
        if (at < 0) {
            if (t->site_count < HWA_SITES) at = (int)t->site_count++;
            else { // forget the rarest site that is not the loop's
                at = t->learned == 0 ? 1 : 0;
                for (uint32_t i = 0; i < HWA_SITES; i++)
                    if ((int)i != t->learned && t->sites[i].episodes < t->sites[at].episodes) at = (int)i;
            }
            t->sites[at] = here;
        }
        t->sites[at].arg0 = here.arg0; // the latest (a poll array may move between waits)
        t->sites[at].episodes++;
        if (t->learned < 0 || t->sites[at].episodes > t->sites[t->learned].episodes) t->learned = at;
    }
    t->in_site = true;
    t->current = here;
    return at == t->learned;
}

/// CPU time plus run-queue time of the thread so far (schedstat), or 0.
/// Neither grows while the thread is blocked, so the difference between two
/// reads is how long it was on its way to a CPU or on one in between.
static uint64_t sched_time(hwa_session *s, hwa_thread *t) {
    if (t->sched_fd < 0) t->sched_fd = hwa_open_task_file(s->cfg.pid, t->tid, "schedstat");
    if (t->sched_fd < 0) return 0;
    uint64_t run, wait;
    return hw_os_read_schedstat(t->sched_fd, &run, &wait) ? run + wait : 0;
}

static void refresh_maps(hwa_session *s, uint64_t now, bool force) {
    if (!force && now - s->maps_ns < HWA_MAPS_MIN_NS) return;
    s->maps_ns = now;
    hwa_read_maps(s->cfg.pid, &s->maps);
}

static void record_stop(hwa_session *s, uint64_t ns) {
    s->stats.stopped_samples++;
    s->stats.stop_ns_total += ns;
    if (ns > s->stats.stop_ns_max) s->stats.stop_ns_max = ns;
    uint64_t us = ns / 1000;
    s->hist[us > HWA_HIST_US ? HWA_HIST_US : us]++;
}

static void thread_execd(hwa_session *s, hwa_thread *t);
static hwa_thread *find_thread(hwa_session *s, pid_t tid);

/// Stops `tid` once for a sample, under the rules of every stop: none while
/// another is pending or after ptrace was refused for good. `t` is its entry
/// (NULL when it has none). True when sampled: registers in `r`, the stack in
/// s->stack (`len` bytes from `addr`, `flags`).
static bool stop_sample(hwa_session *s, hwa_thread *t, pid_t tid, uint64_t obs, hwa_stop_result *r, uint32_t *len,
                        uint64_t *addr, uint32_t *flags) {
    pid_t pid = s->cfg.pid;
    if (s->stops_refused || s->held) return false;
    *r = hwa_stop_sample(pid, tid, &s->maps, s->stack, len, addr, flags, obs);
    if (r->status == -EINPROGRESS) {
        if (t) t->stop_pending = true;
        s->held = r->held_tid;
        s->held_owner = tid;
        s->held_since = obs;
    }
    if (r->exec_seen) {
        if (t && t->watched) thread_execd(s, t);
        else { s->stats.exec_stops++; s->thread_gone = true; refresh_maps(s, hwa_now_ns(), true); }
    }
    if (r->left_eintr) s->stats.eintr_left++;
    if (r->status == -EPERM) {
        // Refused for good only when nobody else traces the thread and it
        // repeats: a debugger or strace holding one thread for a moment is not a refusal.
        if (hwa_tracer_of(pid, tid) == 0 && ++s->eperm_streak >= 3) {
            s->stats.ptrace_errno = EPERM;
            s->stops_refused = true;
        }
    } else {
        s->eperm_streak = 0;
    }
    if (r->status != 0) {
        s->stats.stop_failures++;
        return false;
    }
    record_stop(s, r->stop_ns);
    if (r->restarted) s->stats.eintr_restarts++;
    return true;
}

/// Copies the stack of a thread /proc shows blocked as `p`, from outside,
/// without stopping it: registers with sp, pc and a guessed frame pointer.
static uint32_t copy_blocked_stack(hwa_session *s, const hwa_probe *p, uint64_t now, uint64_t regs[HW_REG_COUNT],
                                   uint32_t *flags) {
    hwa_range stack;
    if (!hwa_mapping_of(&s->maps, p->sp, &stack)) refresh_maps(s, now, false);
    uint32_t len = hwa_copy_stack(s->cfg.pid, &s->maps, p->sp, s->stack, flags);
    regs[HW_REG_RSP] = p->sp;
    regs[HW_REG_RIP] = p->pc;
    regs[HW_REG_RBP] = hwa_guess_frame_pointer(&s->maps, s->stack, len, p->sp);
    return len;
}

static void lock_forget(hwa_thread *t) {
    if (t->owner_fd >= 0) close(t->owner_fd);
    t->owner_fd = -1;
    t->lock_active = false;
    t->lock_owner = 0;
    t->owner_last = false;
    t->chain.n = 0; // a new owner's chain is walked and written afresh
    t->chain_ns = 0;
}

// ---- the wait-for chain ------------------------------------------------------
// As the engine follows it (CSupport/engine/lock_owner.c; the walk is
// hw_os_follow_chain, shared): the owner may itself wait for a lock, whose
// owner may wait for another. At most once per HWA_LOCK_RECHECK_NS, each
// thread from the owner on is read from its /proc syscall file and its futex
// word with process_vm_readv, up to HW_OS_CHAIN_MAX links counting the hung
// thread's own; a return to a thread of the chain is a cycle, a deadlock.
// The links are written (HW_REC_WAIT_LINK) whenever the chain changes. The
// threads past the owner are never stopped: blocked, their stacks are copied
// from outside, one sample standing for the ticks since the last walk;
// running, they are not sampled.

typedef struct chain_walk {
    hwa_session *s;
    hwa_thread *t;
    const hwa_probe *owner_probe;
    uint32_t since;
} chain_walk;

static bool chain_futex_wait(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op) {
    chain_walk *c = ctx;
    hwa_probe p = { .activity = HWA_OTHER };
    if (index == 0) {
        p = *c->owner_probe; // sampled by sample_owner
    } else {
        int fd = hwa_open_task_file(c->s->cfg.pid, tid, "syscall");
        if (fd < 0) return false;
        p = hwa_probe_fd(fd);
        close(fd);
        if (p.activity == HWA_BLOCKED) {
            uint64_t regs[HW_REG_COUNT] = {0};
            uint32_t flags = 0, extra = c->since ? c->since - 1 : 0;
            uint64_t now = hwa_now_ns();
            uint32_t len = copy_blocked_stack(c->s, &p, now, regs, &flags);
            if (extra > HW_SAMPLE_EXTRA_MAX) extra = HW_SAMPLE_EXTRA_MAX;
            hwa_emit_owner_sample(c->s->log, tid, c->t->seq, now, HW_SRC_BLOCKED_SYSCALL,
                                  HW_CALL_SYSCALL_BASE + (int32_t)p.nr, regs, c->s->stack, len, p.sp,
                                  flags | extra << HW_SAMPLE_EXTRA_SHIFT);
            c->s->stats.proc_samples++;
        }
    }
    if (p.activity != HWA_BLOCKED || p.nr != SYS_futex) return false;
    *addr = p.args[0];
    *op = (uint32_t)p.args[1];
    return true;
}

/// Walks the chain from `t`'s lock owner, /proc showing it as `p`.
static void follow_chain(hwa_session *s, hwa_thread *t, const hwa_probe *p, uint64_t obs) {
    if (t->chain_ns && obs - t->chain_ns < HWA_LOCK_RECHECK_NS) return;
    chain_walk walk = { s, t, p, t->chain_ns ? (uint32_t)((obs - t->chain_ns) / s->cfg.sample_period_ns) : 1 };
    t->chain_ns = obs;
    hw_os_wait_chain chain;
    hwa_lock_chain(s->cfg.pid, t->tid, t->lock_owner, chain_futex_wait, &walk, &chain);
    if (hw_os_chain_worth_writing(&chain, &t->chain)) {
        uint64_t now = hwa_now_ns();
        for (uint32_t i = 0; i < chain.n; i++) {
            char name[16] = {0};
            if (chain.links[i].owner) hwa_task_name(s->cfg.pid, chain.links[i].owner, name);
            hwa_emit_wait_link(s->log, t->tid, t->seq, now, &chain.links[i], name);
        }
    }
    t->chain = chain;
}

/// One sample of the owner of the lock `t` waits on, as the waiter would be
/// sampled: blocked, read from /proc (a repeat of an unchanged stack is
/// marked so); running, one ptrace stop, never longer than a sample's.
static void sample_owner(hwa_session *s, hwa_thread *t, uint64_t obs) {
    hwa_probe p = hwa_probe_fd(t->owner_fd);
    uint64_t now = hwa_now_ns();
    uint64_t regs[HW_REG_COUNT] = {0};
    uint32_t flags = 0, len = 0;
    switch (p.activity) {
    case HWA_GONE:
        lock_forget(t); // it exited: the next sample reads the word again
        return;
    case HWA_BLOCKED: {
        follow_chain(s, t, &p, obs);
        int32_t call = HW_CALL_SYSCALL_BASE + (int32_t)p.nr;
        if (t->owner_last && t->owner_nr == p.nr && t->owner_sp == p.sp && t->owner_pc == p.pc) {
            regs[HW_REG_RSP] = p.sp;
            regs[HW_REG_RIP] = p.pc;
            hwa_emit_owner_sample(s->log, t->lock_owner, t->seq, now, HW_SRC_BLOCKED_SYSCALL, call, regs, NULL, 0, 0,
                                  HW_SAMPLE_SAME_AS_PREVIOUS);
            s->stats.repeat_samples++;
            return;
        }
        len = copy_blocked_stack(s, &p, now, regs, &flags);
        hwa_emit_owner_sample(s->log, t->lock_owner, t->seq, now, HW_SRC_BLOCKED_SYSCALL, call, regs, s->stack, len,
                              p.sp, flags);
        s->stats.proc_samples++;
        t->owner_last = true;
        t->owner_nr = p.nr;
        t->owner_sp = p.sp;
        t->owner_pc = p.pc;
        return;
    }
    case HWA_RUNNING: {
        t->owner_last = false;
        follow_chain(s, t, &p, obs);
        hwa_stop_result r;
        uint64_t addr = 0;
        pid_t owner = t->lock_owner;
        if (!stop_sample(s, find_thread(s, owner), owner, obs, &r, &len, &addr, &flags)) return;
        bool in_call = r.syscall_nr >= 0;
        hwa_emit_owner_sample(s->log, owner, t->seq, hwa_now_ns(), in_call ? HW_SRC_BLOCKED_SYSCALL : HW_SRC_SIGNAL,
                              in_call ? HW_CALL_SYSCALL_BASE + (int32_t)r.syscall_nr : 0, r.regs, s->stack, len, addr,
                              flags);
        return;
    }
    default:
        return; // when in doubt, no stop and no guess
    }
}

/// `t`, sampled blocked in futex as `p` says: names the lock's owner (a
/// LOCK_OWNER record when the lock or its owner changes; the word is read
/// again every HWA_LOCK_RECHECK_NS) and samples it.
static void lock_tick(hwa_session *s, hwa_thread *t, const hwa_probe *p, uint64_t obs) {
    uint64_t addr = p->args[0];
    uint32_t op = (uint32_t)p->args[1];
    if (!t->lock_active || addr != t->lock_addr || obs - t->lock_checked >= HWA_LOCK_RECHECK_NS) {
        pid_t owner = 0;
        uint32_t word = 0;
        uint32_t how = hwa_lock_identify(s->cfg.pid, addr, op, t->tid, &owner, &word);
        bool changed = !t->lock_active || addr != t->lock_addr || owner != t->lock_owner || how != t->lock_how;
        if (changed) {
            lock_forget(t);
            char name[16] = {0};
            if (owner) {
                t->owner_fd = hwa_open_task_file(s->cfg.pid, owner, "syscall");
                hwa_task_name(s->cfg.pid, owner, name);
            }
            t->lock_owner = t->owner_fd >= 0 ? owner : 0;
            hwa_emit_lock_owner(s->log, t->tid, t->seq, obs, addr, op, how, t->lock_owner, word, name);
        }
        t->lock_active = true;
        t->lock_addr = addr;
        t->lock_how = how;
        t->lock_checked = obs;
    }
    if (t->lock_owner) sample_owner(s, t, obs);
}

static void sample(hwa_session *s, hwa_thread *t, const hwa_probe *p, uint64_t obs) {
    uint64_t regs[HW_REG_COUNT] = {0};
    uint32_t flags = 0, len = 0;
    uint64_t addr = 0;
    bool stop = p->activity == HWA_RUNNING
                || (p->activity == HWA_BLOCKED && (s->cfg.flags & HWA_FLAG_STOP_BLOCKED) && hwa_stop_safe_while_blocked(p));
    if (stop) {
        t->last_blocked = false;
        lock_forget(t);
        hwa_stop_result r;
        if (!stop_sample(s, t, t->tid, obs, &r, &len, &addr, &flags)) return;
        // A thread caught inside a syscall was blocked, whatever /proc said a moment before.
        bool in_call = r.syscall_nr >= 0;
        hwa_emit_sample(s->log, t->tid, t->seq, hwa_now_ns(), in_call ? HW_SRC_BLOCKED_SYSCALL : HW_SRC_SIGNAL,
                        in_call ? HW_CALL_SYSCALL_BASE + (int32_t)r.syscall_nr : 0, r.regs, s->stack, len, addr, flags);
        return;
    }
    if (p->activity != HWA_BLOCKED) return;
    uint64_t now = hwa_now_ns();
    if (t->last_blocked && t->last_nr == p->nr && t->last_sp == p->sp && t->last_pc == p->pc) {
        s->stats.repeat_samples++;
        hwa_emit_repeat(s->log, t->tid, t->seq, now);
    } else {
        len = copy_blocked_stack(s, p, now, regs, &flags);
        hwa_emit_sample(s->log, t->tid, t->seq, now, HW_SRC_BLOCKED_SYSCALL, HW_CALL_SYSCALL_BASE + (int32_t)p->nr,
                        regs, s->stack, len, p->sp, flags);
        s->stats.proc_samples++;
        t->last_blocked = true;
        t->last_nr = p->nr;
        t->last_sp = p->sp;
        t->last_pc = p->pc;
    }
    // After the waiter's own sample: its lock's owner, which the LOCK_OWNER record names first.
    if (p->nr == SYS_futex) lock_tick(s, t, p, obs);
    else lock_forget(t);
}

static void end_busy(hwa_session *s, hwa_thread *t, uint64_t end, uint32_t flags) {
    if (t->busy && (t->announced || end - t->since >= s->cfg.hang_ns))
        hwa_emit_busy(s->log, HW_REC_BUSY_END, t->tid, t->seq, t->since, end, flags);
    if (t->busy) t->last_end = end;
    t->busy = false;
    t->last_blocked = false;
    lock_forget(t);
    if (t->counted) hw_log_sampling_ends(s->log); // after the period's last record
    t->counted = false;
}

/// The thread called execve while we held it: it is gone as that thread
/// (its tid now names the new image's main thread, or nothing), so its busy
/// period ends there, as at a thread's exit.
static void thread_execd(hwa_session *s, hwa_thread *t) {
    s->stats.exec_stops++;
    end_busy(s, t, hwa_now_ns(), HW_BUSY_THREAD_EXIT);
    if (t->fd >= 0) close(t->fd);
    if (t->sched_fd >= 0) close(t->sched_fd);
    t->fd = t->sched_fd = -1;
    t->watched = false;
    // The main thread goes on as the new image's: the next scan watches it again.
    t->dropped = t->tid != s->cfg.pid;
    s->thread_gone = true;
    refresh_maps(s, hwa_now_ns(), true); // a new image: new code ranges
}

static void tick_thread(hwa_session *s, hwa_thread *t) {
    // A traced stop shows in /proc like the syscall it interrupted: never read
    // the state of a thread we hold (released in tick, before this).
    if (t->stop_pending) return;
    uint64_t before = hwa_now_ns();
    hwa_probe p = hwa_probe_fd(t->fd);
    uint64_t obs = before + (hwa_now_ns() - before) / 2;
    if (p.activity == HWA_GONE) {
        // The thread's own exit, or the whole process's (killed, exit_group):
        // a hang still going on when the process ends is in progress at its
        // end, not a thread's exit. The count is read at every poll meanwhile
        // (thread_gone), and a busy period is ended as the thread's exit only
        // when the process is still there HWA_VANISH_GRACE_NS later.
        s->thread_gone = true;
        if (t->busy && !t->vanished) t->vanished = obs;
        if (t->busy && obs - t->vanished < HWA_VANISH_GRACE_NS) return;
        end_busy(s, t, t->busy ? t->vanished : obs, HW_BUSY_THREAD_EXIT);
        close(t->fd);
        t->fd = -1;
        if (t->sched_fd >= 0) close(t->sched_fd);
        t->sched_fd = -1;
        t->watched = false;
        t->dropped = true;
        return;
    }
    if (p.activity == HWA_OTHER) return; // stopped, or between states: no evidence either way
    p = continued_call(s, t, &p); // a restart_syscall as the wait it goes on with, for the idle test and samples
    uint64_t prev = t->seen ? t->last_obs : s->prev_tick_ns;
    bool idle = idle_wait(t, &p);
    // Transitions are dated between the two polls that saw them, narrowed
    // by schedstat: the thread was running or runnable for `ran` ns of the
    // interval. A late poll then costs no accuracy.
    if (idle) {
        if (t->busy) {
            uint64_t ran = 0, from = prev, sched = sched_time(s, t);
            if (sched && t->sched_ns && sched >= t->sched_ns) { ran = sched - t->sched_ns; from = t->sched_obs; }
            uint64_t lo = from + ran < obs ? from + ran : obs;
            if (lo < prev) lo = prev;
            // Running up to the end: it ended right after `ran`; else somewhere after.
            uint64_t end = t->last_running ? lo : lo + (obs - lo) / 2;
            // schedstat of a thread running on another CPU lags by up to a
            // scheduler tick (4 ms here): over short gaps the midpoint is better.
            if (obs - prev <= HWA_SCHEDSTAT_GAP_NS) end = prev + (obs - prev) / 2;
            end_busy(s, t, end, 0);
            t->sched_ns = sched; // the baseline for the next start: it does not grow while idle
            t->sched_obs = obs;
        } else if (!t->sched_ns || obs - t->sched_obs > 10000000ull) {
            // Refreshed while idle so the CPU of wake-ups too short to see stays out of the next start.
            t->sched_ns = sched_time(s, t);
            t->sched_obs = obs;
        }
    } else {
        s->last_busy_ns = obs;
        if (!t->busy) {
            t->busy = true;
            t->announced = false;
            t->seq++;
            if (!t->seen && s->first_tick) {
                // Busy before we came: the hang's start is the attach (a lower bound).
                t->since = s->stats.start_ns;
                if (s->stats.busy_at_attach++ == 0) s->stats.first_busy_at_attach = t->tid;
            } else {
                // A thread never seen before counts from its creation (baseline 0).
                uint64_t sched = sched_time(s, t), hi = obs, base = t->seen ? t->sched_ns : 0;
                if (sched && (base || !t->seen) && sched >= base && sched - base < obs - prev)
                    hi = obs - (sched - base);
                // On its way to a CPU or on one for the whole gap since the poll that saw
                // it idle: it started after that poll by at most what the baseline holds
                // from before it (wake-ups too short to see; the baseline is refreshed
                // every 10 ms while idle) and what short wake-ups early in the gap used.
                // Dating it at this poll instead would make a hang one late poll short
                // (BENCHMARKS.md, "Attach"). As
                // everywhere here, a wait for a CPU after the wake counts as busy.
                else if (sched && t->seen && base && sched >= base)
                    hi = prev;
                // Running since its wake: it woke `ran` ago; else (it blocked again) earlier.
                t->since = p.activity == HWA_RUNNING ? hi : prev + (hi - prev) / 2;
                if (obs - prev <= HWA_SCHEDSTAT_GAP_NS) t->since = prev + (obs - prev) / 2;
                // Never before the end of its previous busy period (an exec seen late,
                // at a held stop's release, ended one after later polls).
                if (t->since < t->last_end) t->since = t->last_end;
            }
            t->next_sample = t->since + s->cfg.arm_ns;
        }

        if (!t->announced && obs - t->since >= s->cfg.hang_ns) {
            hwa_emit_busy(s->log, HW_REC_HANG_START, t->tid, t->seq, t->since, 0, 0);
            t->announced = true;
        }
        if (obs >= t->next_sample) {
            // Sampling begins: the reader, asleep while nothing is sampled, wakes (reader_park.c).
            if (!t->counted) hw_log_sampling_begins(s->log);
            t->counted = true;
            sample(s, t, &p, obs);
            t->next_sample += s->cfg.sample_period_ns;
            if (t->next_sample < obs) t->next_sample = obs + s->cfg.sample_period_ns / 2;
        }
        // Read after the sample: the thread accrues nothing while we hold it
        // stopped, so the interval to the end must not contain our stop.
        if (!t->stop_pending) {
            uint64_t sched = sched_time(s, t);
            if (sched) { t->sched_ns = sched; t->sched_obs = hwa_now_ns(); }
        }
    }
    t->last_running = p.activity == HWA_RUNNING;
    t->last_obs = obs;
    t->seen = true;
}

static hwa_thread *find_thread(hwa_session *s, pid_t tid) {
    for (size_t i = 0; i < s->count; i++) if (s->threads[i].tid == tid) return &s->threads[i];
    return NULL;
}

static void watch(hwa_session *s, hwa_thread *t, uint32_t role) {
    t->fd = hwa_open_task_file(s->cfg.pid, t->tid, "syscall");
    if (t->fd < 0) return;
    // Its stack is a mapping that may be newer than our copy of the maps.
    refresh_maps(s, hwa_now_ns(), true);
    t->watched = true;
    t->role = role;
    t->learned = -1;
    s->stats.threads_watched++;
    hwa_emit_thread(s->log, t->tid, role, t->name);
}

static void unwatch(hwa_session *s, hwa_thread *t) {
    end_busy(s, t, hwa_now_ns(), 0);
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    if (t->sched_fd >= 0) close(t->sched_fd);
    t->sched_fd = -1;
    t->watched = false;
}

/// dispatchMain() parks the main thread in rt_sigsuspend (pause() on old
/// toolchains) for good: the main queue then runs on libdispatch workers.
static bool main_thread_parked(hwa_session *s) {
    int fd = hwa_open_task_file(s->cfg.pid, s->cfg.pid, "syscall");
    if (fd < 0) return false;
    hwa_probe p = hwa_probe_fd(fd);
    close(fd);
    return p.activity == HWA_BLOCKED && (p.nr == SYS_rt_sigsuspend || p.nr == SYS_pause);
}

static bool is_worker_name(const char *name) {
    size_t n = strlen(name);
    return n >= 10 && strcmp(name + n - 10, "overcommit") == 0;
}

/// Drops the entries of threads no longer listed (their descriptors too), so
/// a process that creates and ends threads all day does not grow the array.
/// A watched thread that vanished is first ended by tick_thread (GONE); the
/// thread we hold stays until released. `tids` is sorted.
static void forget_gone(hwa_session *s, const pid_t *tids, int n) {
    size_t kept = 0;
    for (size_t i = 0; i < s->count; i++) {
        hwa_thread *t = &s->threads[i];
        int lo = 0, hi = n;
        while (lo < hi) { int mid = (lo + hi) / 2; if (tids[mid] < t->tid) lo = mid + 1; else hi = mid; }
        bool listed = lo < n && tids[lo] == t->tid;
        if (!listed && !t->stop_pending && !(t->watched && t->fd >= 0)) {
            if (t->fd >= 0) close(t->fd);
            if (t->sched_fd >= 0) close(t->sched_fd);
            if (t->owner_fd >= 0) close(t->owner_fd);
            continue;
        }
        if (kept != i) s->threads[kept] = *t;
        kept++;
    }
    s->count = kept;
    if (s->cap > 64 && s->count < s->cap / 4) {
        hwa_thread *shrunk = realloc(s->threads, (s->cap / 2) * sizeof *shrunk);
        if (shrunk) { s->threads = shrunk; s->cap /= 2; }
    }
}

/// Which threads to watch: re-read the thread list and unwatched threads' names.
static void scan(hwa_session *s, uint64_t now) {
    s->scan_ns = now;
    pid_t tids[4096];
    int n = hwa_list_tasks(s->cfg.pid, tids, 4096);
    if (n < 0) return;
    forget_gone(s, tids, n);
    if (s->want_main && !s->main_queue_mode && main_thread_parked(s)) {
        s->main_queue_mode = true;
        s->stats.main_queue_mode = 1;
        hwa_thread *m = find_thread(s, s->cfg.pid);
        if (m && m->watched) unwatch(s, m);
    }
    for (int i = 0; i < n; i++) {
        hwa_thread *t = find_thread(s, tids[i]);
        if (!t) {
            if (s->count == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                hwa_thread *grown = realloc(s->threads, cap * sizeof *grown);
                if (!grown) return;
                s->threads = grown;
                s->cap = cap;
            }
            t = &s->threads[s->count++];
            memset(t, 0, sizeof *t);
            t->tid = tids[i];
            t->fd = -1;
            t->sched_fd = -1;
            t->owner_fd = -1;
            t->learned = -1;
        }
        if (t->watched || t->dropped) continue;
        if (!hwa_task_name(s->cfg.pid, t->tid, t->name)) continue;
        if (t->tid == s->cfg.pid) {
            if (s->want_main && !s->main_queue_mode) watch(s, t, HW_ROLE_MAIN_THREAD);
        } else if (s->main_queue_mode && is_worker_name(t->name)) {
            watch(s, t, HW_ROLE_MAIN_QUEUE);
        } else if (s->patterns[0] && hw_thread_name_matches(s->patterns, t->name)) { // empty: main only, handled above
            watch(s, t, HW_ROLE_LOOP);
        }
    }
}

/// The thread count (new threads, process exit) is read every
/// HWA_COUNT_EVERY polls: it costs more than a thread's syscall file. Every
/// poll when the main queue is watched (a worker created for a block must be
/// seen at once) and right after a watched thread vanished (the process may be exiting).
#define HWA_COUNT_EVERY 10

/// Releases the stop still pending once it has come (waiting at most
/// `wait_ns`), with the same fix-up as a sample's stop.
static void release_held(hwa_session *s, uint64_t wait_ns) {
    hwa_stop_result r = { .syscall_nr = -1 };
    if (!hwa_finish_stop(s->cfg.pid, &s->held, s->held_since, wait_ns, &r)) return;
    if (r.restarted) s->stats.eintr_restarts++;
    if (r.left_eintr) s->stats.eintr_left++;
    hwa_thread *t = find_thread(s, s->held_owner);
    if (t) t->stop_pending = false;
    if (r.exec_seen && t) thread_execd(s, t);
    else if (r.exec_seen) s->stats.exec_stops++;
    s->held = 0;
}

static void tick(hwa_session *s, uint64_t now) {
    bool count_now = s->main_queue_mode || s->thread_gone || s->stats.ticks % HWA_COUNT_EVERY == 1;
    s->thread_gone = false;
    int threads = count_now ? hwa_thread_count(s->stat_fd) : s->last_count;
    if (threads < 0) {
        s->exited = 1;
        s->stats.target_exited = 1;
        s->stats.exit_ns = now;
        hwa_emit_exit(s->log, now);
        hw_log_reader_wake(s->log); // the report is due now, not at the reader's next timeout
        return;
    }
    if (threads != s->last_count || now - s->scan_ns >= HWA_RESCAN_NS) {
        s->last_count = threads;
        scan(s, now);
    }
    if (s->held) release_held(s, 0);
    for (size_t i = 0; i < s->count; i++)
        if (s->threads[i].watched) tick_thread(s, &s->threads[i]);
    s->first_tick = false;
    s->prev_tick_ns = now;
}

static void *poller_main(void *arg) {
    hwa_session *s = arg;
    // Dating transitions to ±0.5 ms needs the poll on time, also on a busy
    // machine: raise this thread's priority when allowed (root or
    // CAP_SYS_NICE; otherwise it stays as it is). Only this thread: it sleeps
    // almost all the time, and a normal-class priority (not real-time) still
    // lets a tracee it waits for run on the same CPU.
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20) != 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -5);
    const uint64_t period = s->cfg.poll_period_ns;
    uint64_t next = hwa_now_ns(), last = 0, expect = period;
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        uint64_t now = hwa_now_ns();
        if (last) {
            uint64_t gap = now - last;
            if (gap > s->stats.max_tick_gap_ns) s->stats.max_tick_gap_ns = gap;
            if (gap > expect + 1000000ull) s->stats.late_ticks++;
        }
        last = now;
        s->stats.ticks++;
        tick(s, now);
        if (s->exited) break;
        // Idle for a while: poll every HWA_IDLE_POLL_NS. A busy period's start
        // is still dated by schedstat (exact for a thread that runs from its
        // wake; within half the interval for one that blocks again at once);
        // its end is seen by the 1 ms polls a busy thread gets.
        // (last_busy_ns may be a little after `now`: it is a time read during the tick.)
        expect = now > s->last_busy_ns + HWA_IDLE_AFTER_NS && !s->main_queue_mode ? HWA_IDLE_POLL_NS : period;
        next += expect;
        now = hwa_now_ns();
        if (next < now) next = now;
        struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
    }
    // Detached while the target lives: a busy thread still in its vanish
    // grace did exit (the process did not end with it), so its period ends
    // as a thread exit at the vanish, as it would have at the grace's end.
    if (!s->exited)
        for (size_t i = 0; i < s->count; i++)
            if (s->threads[i].busy && s->threads[i].vanished)
                end_busy(s, &s->threads[i], s->threads[i].vanished, HW_BUSY_THREAD_EXIT);
    // Nothing stays attached: a stop still pending is waited for (bounded:
    // a thread in uninterruptible sleep may never stop) and detached, here,
    // by the tracer thread (ptrace requests from another thread fail). If it
    // still has not stopped, the kernel detaches it when this thread exits.
    if (s->held) release_held(s, 1000000000ull);
    __atomic_store_n(&s->exited, s->exited, __ATOMIC_RELEASE);
    // Our CPU from schedstat (exact ns): getrusage's tick sampling is biased
    // for a thread that wakes on a grid of the tick's own period.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        uint64_t run, wait;
        if (hw_os_read_schedstat(fd, &run, &wait)) s->stats.poller_cpu_ns = run;
        close(fd);
    }
    return NULL;
}

hwa_session *hwa_start(hw_log_header *log, const hwa_config *config) {
    hwa_session *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->log = log;
    s->cfg = *config;
    if (!s->cfg.poll_period_ns) s->cfg.poll_period_ns = 1000000ull;
    if (!s->cfg.sample_period_ns) s->cfg.sample_period_ns = 1000000ull;
    if (!s->cfg.arm_ns) s->cfg.arm_ns = 10000000ull;
    if (!s->cfg.hang_ns) s->cfg.hang_ns = 100000000ull;
    const char *patterns = config->thread_patterns && *config->thread_patterns ? config->thread_patterns : "main";
    strncpy(s->patterns, patterns, sizeof s->patterns - 1);
    s->cfg.thread_patterns = s->patterns;
    // 'main' names a role (the main thread, or the main queue's workers), not a thread name.
    for (const char *p = s->patterns; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 4 && memcmp(p, "main", 4) == 0) s->want_main = true;
        if (!end) break;
        p = end + 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)config->pid);
    s->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->stat_fd < 0) { free(s); return NULL; }
    s->last_count = -1;
    s->first_tick = true;
    uint64_t now = hwa_now_ns();
    s->stats.start_ns = now;
    s->prev_tick_ns = now;
    refresh_maps(s, now, true);
    hwa_emit_session(log, config->pid, now);
    // The poller takes none of the signals meant for hangwatch (Ctrl-C goes to the reader).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, poller_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(s->stat_fd);
        hwa_free_maps(&s->maps);
        free(s);
        errno = rc;
        return NULL;
    }
    return s;
}

bool hwa_target_exited(const hwa_session *s) { return __atomic_load_n(&s->exited, __ATOMIC_ACQUIRE) != 0; }

void hwa_stop(hwa_session *s, hwa_stats *out) {
    if (!s) return;
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    pthread_join(s->thread, NULL);
    s->stats.end_ns = s->exited ? s->stats.exit_ns : hwa_now_ns();
    uint64_t total = 0, half = (s->stats.stopped_samples + 1) / 2;
    for (uint32_t us = 0; us <= HWA_HIST_US && s->stats.stopped_samples; us++) {
        total += s->hist[us];
        if (total >= half) { s->stats.stop_ns_p50 = (uint64_t)us * 1000 + 500; break; }
    }
    for (size_t i = 0; i < s->count; i++) {
        if (s->threads[i].fd >= 0) close(s->threads[i].fd);
        if (s->threads[i].owner_fd >= 0) close(s->threads[i].owner_fd);
        if (s->threads[i].sched_fd >= 0) close(s->threads[i].sched_fd);
    }
    free(s->threads);
    hwa_free_maps(&s->maps);
    close(s->stat_fd);
    if (out) *out = s->stats;
    free(s);
}
