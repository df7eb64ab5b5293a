// Who holds the lock a hung thread waits for. When /proc says the busy thread
// is blocked in futex, its first argument is the address it waits on. The
// watchdog reads the words there with process_vm_readv (a copy that fails
// instead of faulting; never a dereference) and knows the owner when the
// lock keeps one (the reading is CSupport/os/wait_chain.c's, shared with attach):
//  - FUTEX_LOCK_PI (Swift's Synchronization.Mutex on Linux, PI mutexes): the
//    word is the owner's tid, with FUTEX_WAITERS (the top bit) set once a
//    waiter sleeps on it (op FUTEX_LOCK_PI);
//  - FUTEX_WAIT on a glibc pthread_mutex_t (NSLock, pthread_mutex_lock): the
//    word is 1 or 2 and __data.__owner at +8 is the holder's tid (the layout
//    is checked: a user count of at least one, a known mutex kind);
//  - FUTEX_WAIT on a word that is itself a live thread's tid: pthread_join
//    waits on the joined thread's tid field. The reader keeps this one only
//    when the waiter's stack is in a join.
// A candidate must be a live thread of this process other than the waiter
// (and the watchdog). Condition variables, semaphores and groups keep no
// owner: then the watchdog measures which threads used CPU during the wait.
//
// The owner is sampled like a watched thread, under the same rules: blocked
// (in /proc's words), its stack is copied from outside from the stack
// pointer /proc gives; running, the kernel samples it (sampler_perf.c), and
// its samples count for the ticks that found the busy thread still waiting.
// Where perf_event is refused it gets one SIGPROF with the owner cookie, and
// the handler copies its registers and up to 48 KiB above its stack pointer
// (its stack bounds are unknown there, so the copy goes through
// process_vm_readv, which stops at the first unmapped page); unreadable,
// nothing. A thread that blocks SIGPROF is never signalled.
#include "engine_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define HW_RECHECK_NS (10 * 1000000ull)  /* re-read the word of an unchanged wait this often */
#define HW_RAN_PERIOD_NS (20 * 1000000ull)
#define HW_RAN_TRACK 256                 /* threads followed for CPU use during an ownerless wait */

// ---- the request the owner's signal handler reads ----------------------------

/// Per slot index: the owner being sampled for that slot's busy period. The
/// watchdog clears `owner` before changing the rest and stores it last.
_Static_assert(HW_MAX_SLOTS <= 256, "the owner signal carries the slot index in 8 bits");

static struct owner_request {
    pid_t owner;      // atomic
    int32_t slot_tid;
    uint64_t busy_seq; // atomic
} requests[HW_MAX_SLOTS];

static void set_request(uint32_t index, pid_t owner, int32_t slot_tid, uint64_t seq) {
    struct owner_request *r = &requests[index];
    __atomic_store_n(&r->owner, 0, __ATOMIC_SEQ_CST);
    r->slot_tid = slot_tid;
    __atomic_store_n(&r->busy_seq, seq, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->owner, owner, __ATOMIC_SEQ_CST);
}

// ---- writing owner samples (also from the signal handler) -------------------

// SIGNAL-SAFE: process_vm_readv is a plain syscall. Copies up to
// HW_MAX_STACK_COPY bytes from `sp` in page-sized pieces, so that the copy
// stops at the first page that is not mapped (the top of a stack whose
// bounds we do not know) instead of failing whole.
static uint32_t copy_stack(uint8_t *out, uint64_t sp) {
    enum { PAGE = 4096, PIECES = HW_MAX_STACK_COPY / PAGE + 1 };
    struct iovec local[PIECES], remote[PIECES];
    uint64_t at = sp, left = HW_MAX_STACK_COPY;
    int n = 0;
    while (left && n < PIECES) {
        uint64_t piece = PAGE - (at & (PAGE - 1));
        if (piece > left) piece = left;
        local[n] = (struct iovec){ out + (at - sp), piece };
        remote[n] = (struct iovec){ (void *)(uintptr_t)at, piece };
        n++;
        at += piece;
        left -= piece;
    }
    ssize_t got = syscall(SYS_process_vm_readv, hw_g.pid, local, (unsigned long)n, remote, (unsigned long)n, 0ul);
    return got > 0 ? (uint32_t)got : 0;
}

// SIGNAL-SAFE: reserve, copy, commit. The stack comes from the kernel's
// sample when `kernel` is given (watchdog), else it is copied from the owner.
static void write_owner_sample(pid_t owner, uint64_t busy_seq, uint32_t source, int call,
                               const uint64_t regs[HW_REG_COUNT], bool same_as_previous, uint32_t extra,
                               uint64_t time_ns, const hw_perf_stack *kernel) {
    uint32_t room = same_as_previous ? 0 : kernel ? (uint32_t)kernel->len : HW_MAX_STACK_COPY;
    hw_rec_sample *rec = hw_sample_reserve(owner, busy_seq, source, call, regs, time_ns, room);
    if (!rec) return;
    uint32_t len = 0;
    if (room && kernel) hw_perf_stack_copy(kernel, rec->stack, len = room);
    else if (room) len = copy_stack(rec->stack, regs[HW_REG_RSP]);
    // The owner's stack bounds are unknown: a short copy stopped at the end of
    // its mapping (complete); a full one may have been cut at the cap.
    uint32_t cap = kernel ? (uint32_t)kernel->asked : HW_MAX_STACK_COPY;
    rec->flags = same_as_previous ? HW_SAMPLE_SAME_AS_PREVIOUS : (len == 0 || len == cap ? HW_SAMPLE_TRUNCATED : 0);
    if (kernel) rec->flags |= HW_SAMPLE_KERNEL;
    if (extra > HW_SAMPLE_EXTRA_MAX) extra = HW_SAMPLE_EXTRA_MAX;
    rec->flags |= extra << HW_SAMPLE_EXTRA_SHIFT;
    rec->stack_len = len;
    hw_log_commit(&rec->h, HW_REC_OWNER_SAMPLE);
}

// SIGNAL-SAFE: atomics, gettid, write_owner_sample.
void hw_owner_signal_sample(const void *siginfo, const uint64_t regs[HW_REG_COUNT]) {
    const siginfo_t *si = siginfo;
    uint64_t value = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    uint32_t index = (uint32_t)(value >> 32) & 0xffu;
    uint32_t extra = (uint32_t)(value >> 40) & 0xffu;
    if (index >= HW_MAX_SLOTS) return;
    struct owner_request *r = &requests[index];
    pid_t me = (pid_t)syscall(SYS_gettid);
    if (__atomic_load_n(&r->owner, __ATOMIC_SEQ_CST) != me) return; // a late signal: the request moved on
    uint64_t seq = __atomic_load_n(&r->busy_seq, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&r->owner, __ATOMIC_SEQ_CST) != me) return;
    write_owner_sample(me, seq, HW_SRC_SIGNAL, 0, regs, false, extra, hw_now_ns(), NULL);
}

/// The owner-sampling signal, under the exec guard's rules (see exec_guard.c):
/// in flight is raised before exec_pending is checked and lowered after the send.
/// `extra`: the ticks beyond one the sample stands for (the watchdog's stride).
static bool send_owner_signal(pid_t tid, uint32_t index, uint32_t extra) {
    __atomic_add_fetch(&hw_g.signals_in_flight, 1, __ATOMIC_SEQ_CST);
    bool sent = false;
    if (!__atomic_load_n(&hw_g.exec_pending, __ATOMIC_SEQ_CST) && !hw_signal_ignored()) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGPROF;
        si.si_code = SI_QUEUE;
        si.si_pid = hw_g.pid;
        si.si_uid = getuid();
        // sival_int (the low half) is the cookie hw_signal_is_ours checks; bits 32-39 the slot
        // index (HW_MAX_SLOTS is 256), bits 40-47 the extra ticks.
        if (extra > HW_SAMPLE_EXTRA_MAX) extra = HW_SAMPLE_EXTRA_MAX;
        uint64_t value = ((uint64_t)extra << 40) | ((uint64_t)index << 32) | (uint32_t)HW_OWNER_COOKIE;
        si.si_value.sival_ptr = (void *)(uintptr_t)value;
        sent = syscall(SYS_rt_tgsigqueueinfo, hw_g.pid, tid, SIGPROF, &si) == 0;
    }
    __atomic_sub_fetch(&hw_g.signals_in_flight, 1, __ATOMIC_SEQ_CST);
    return sent;
}

// ---- reading the futex (CSupport/os/wait_chain.c reads the words) ------------

static bool read_memory(void *ctx, uint64_t addr, void *out, size_t len) {
    (void)ctx;
    struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
    return syscall(SYS_process_vm_readv, hw_g.pid, &local, 1ul, &remote, 1ul, 0ul) == (ssize_t)len;
}

/// Whether `tid` is a live thread of the process that may own the waiter's
/// lock. `known` (the context), the owner already watched, is taken as live
/// without a look: its open /proc descriptors tell when it is gone
/// (sample_owner, every poll), and do so even if its id is reused, where a
/// path would not. That spares a path lookup per poll of a long wait (about
/// a tenth of the watchdog's CPU beside a thread parked in pthread_join).
static bool live_thread(void *ctx, pid_t tid, pid_t waiter) {
    pid_t known = ctx ? *(const pid_t *)ctx : 0;
    if (tid <= 0 || tid == waiter || tid == __atomic_load_n(&hw_g.watchdog_tid, __ATOMIC_ACQUIRE)) return false;
    if (tid == known) return true;
    char path[48];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    return access(path, F_OK) == 0;
}

// Attach records the same numbers.
_Static_assert((int)HW_OS_OWNER_PI == (int)HW_OWNER_PI && (int)HW_OS_OWNER_MUTEX == (int)HW_OWNER_MUTEX
               && (int)HW_OS_OWNER_WORD_TID == (int)HW_OWNER_WORD_TID && (int)HW_OS_OWNER_NONE == (int)HW_OWNER_NONE,
               "wait_chain.c answers in hw_owner_how's numbers");

/// The owner of the futex at `addr` that `waiter` waits on with `op`, and how
/// it was read; `known` is the owner watched now (0: none).
static uint32_t identify(uint64_t addr, uint32_t op, pid_t waiter, pid_t known, pid_t *owner, uint32_t *word) {
    hw_os_target target = { .read = read_memory, .may_own = live_thread, .ctx = &known };
    return hw_os_futex_owner(&target, addr, op, waiter, owner, word);
}

static void thread_name(pid_t tid, char out[16]) {
    memset(out, 0, 16);
    int fd = hw_proc_open_task_file(tid, "comm");
    if (fd < 0) return;
    ssize_t n = pread(fd, out, 15, 0);
    close(fd);
    if (n > 0 && out[n - 1] == '\n') out[n - 1] = 0;
    if (n <= 0) memset(out, 0, 16);
}

// ---- per-slot watch ---------------------------------------------------------

static struct lock_watch {
    bool active;
    uint64_t addr;
    uint32_t op, how, word;
    pid_t owner;
    uint64_t checked_ns;
    hw_session owner_ses;     // /proc descriptors of the owner
    hw_perf_ring owner_perf;  // the kernel's sampler of the owner; not mapped: signals
    bool owner_open, owner_blocks_sigprof;
    bool have_last;           // dedup of a blocked owner's samples
    long last_nr;
    uint64_t last_sp, last_pc;
    // The wait-for chain beyond the owner, as last written (links from the owner on).
    uint64_t chain_ns;
    hw_os_wait_chain chain;
} watches[HW_MAX_SLOTS];

static uint32_t index_of(const hw_slot *slot) { return (uint32_t)(slot - hw_g.slots); }

static void close_owner(struct lock_watch *w, uint32_t index) {
    set_request(index, 0, 0, 0);
    if (w->owner_open) hw_proc_session_close(&w->owner_ses);
    if (w->owner_perf.lost) hw_write_note(w->owner, HW_NOTE_KERNEL_SAMPLES_LOST, w->owner_perf.lost);
    hw_perf_close(&w->owner_perf); // its samples since the last tick are dropped: the lock may have changed hands
    w->owner_open = false;
    w->owner = 0;
    w->have_last = false;
    w->chain.n = 0; // a new owner's chain is walked and written afresh
    w->chain_ns = 0;
}

/// A LOCK_OWNER record (the hung thread's own wait) or a WAIT_LINK record
/// (a further link of its chain, `l->waiter` waiting).
static void write_wait(const hw_slot *slot, uint32_t kind, const hw_os_wait_link *l, uint64_t now) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_lock_owner *rec = (hw_rec_lock_owner *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->os_tid = l->waiter;
    rec->busy_seq = slot->session.busy_seq;
    rec->time_ns = now;
    rec->futex_addr = l->addr;
    rec->futex_op = l->op;
    rec->how = l->how;
    rec->owner_tid = l->owner;
    rec->word = l->word;
    if (l->owner) thread_name(l->owner, rec->owner_name);
    else memset(rec->owner_name, 0, sizeof rec->owner_name);
    hw_log_commit(&rec->h, kind);
}

static void write_owner_record(const hw_slot *slot, const struct lock_watch *w, uint64_t now) {
    hw_os_wait_link own = { .waiter = slot->session.os_tid, .owner = w->owner, .addr = w->addr, .op = w->op,
                            .how = w->how, .word = w->word };
    write_wait(slot, HW_REC_LOCK_OWNER, &own, now);
}

struct owner_sample_ctx { const hw_slot *slot; pid_t owner; uint32_t skip; };

static void write_owner_kernel_sample(void *ctx, uint64_t time_ns, const uint64_t regs[HW_REG_COUNT],
                                      const hw_perf_stack *stack) {
    struct owner_sample_ctx *c = ctx;
    if (c->skip) { c->skip--; return; }
    write_owner_sample(c->owner, c->slot->session.busy_seq, HW_SRC_SIGNAL, 0, regs, false,
                       c->slot->session.repeat_extra, time_ns, stack);
}

// ---- the wait-for chain ------------------------------------------------------
// The owner may itself wait for a lock, whose owner may wait for another: the
// chain is followed from the owner with the same reads (each thread's /proc
// syscall file, the futex words through process_vm_readv), at most once per
// HW_RECHECK_NS, up to HW_OS_CHAIN_MAX links counting the hung thread's own
// (hw_os_follow_chain, shared with attach). It stops at a thread that runs,
// waits on something else or on a lock with no owner, or is already in the
// chain: then it is a cycle, a deadlock. Each
// link from the owner on is written (HW_REC_WAIT_LINK) whenever the chain
// changes, the last one with no owner when its thread waits on no known lock;
// the reader follows them. Threads past the owner are sampled from /proc at
// each walk, one blocked sample standing for the ticks since the last.

struct chain_walk { hw_slot *slot; const hw_thread_probe *owner_probe; uint32_t since; uint64_t now; };

/// hw_os_target.futex_wait for the walk: link 0's waiter (the owner) as
/// sample_owner probed it; the others probed now, and sampled when blocked.
static bool chain_futex_wait(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op) {
    struct chain_walk *c = ctx;
    hw_thread_probe p = index == 0 ? *c->owner_probe : hw_proc_probe_tid(tid);
    if (p.activity != HW_ACTIVITY_BLOCKED || !p.exact) return false;
    if (index > 0) {
        uint64_t regs[HW_REG_COUNT] = {0};
        regs[HW_REG_RSP] = p.sp;
        regs[HW_REG_RIP] = p.pc;
        write_owner_sample(tid, c->slot->session.busy_seq, HW_SRC_BLOCKED_SYSCALL, HW_CALL_SYSCALL_BASE + (int)p.nr,
                           regs, false, c->since ? c->since - 1 : 0, c->now, NULL);
    }
    if (p.nr != SYS_futex) return false;
    *addr = p.args[0];
    *op = (uint32_t)p.args[1];
    return true;
}

static bool chain_may_own(void *ctx, pid_t tid, pid_t waiter) { (void)ctx; return live_thread(NULL, tid, waiter); }

static void follow_chain(hw_slot *slot, struct lock_watch *w, const hw_thread_probe *owner_probe, uint64_t now) {
    if (w->chain_ns && now - w->chain_ns < HW_RECHECK_NS) return;
    uint64_t period = hw_g.config.sample_period_ns ? hw_g.config.sample_period_ns : 1000000ull;
    struct chain_walk walk = { slot, owner_probe, w->chain_ns ? (uint32_t)((now - w->chain_ns) / period) : 1, now };
    w->chain_ns = now;
    hw_os_target target = { .read = read_memory, .may_own = chain_may_own, .futex_wait = chain_futex_wait, .ctx = &walk };
    hw_os_wait_chain chain;
    hw_os_follow_chain(&target, slot->session.os_tid, w->owner, &chain);
    if (hw_os_chain_worth_writing(&chain, &w->chain))
        for (uint32_t i = 0; i < chain.n; i++) write_wait(slot, HW_REC_WAIT_LINK, &chain.links[i], now);
    w->chain = chain;
}

static void sample_owner(hw_slot *slot, struct lock_watch *w) {
    uint32_t index = index_of(slot);
    // The owner as the kernel last saw it running since the previous poll,
    // one sample standing for the poll's ticks, as a signal would: a waiter
    // parked for long is polled every 16th tick, and writing every one of
    // the owner's samples would cost the watchdog more than a parked thread
    // may (BENCHMARKS.md, "parked in pthread_join").
    uint32_t pending = hw_perf_pending(&w->owner_perf);
    struct owner_sample_ctx ctx = { slot, w->owner, pending ? pending - 1 : 0 };
    if (hw_perf_drain(&w->owner_perf, write_owner_kernel_sample, &ctx)) w->have_last = false; // it ran: no repeat
    hw_thread_probe p = hw_proc_probe(&w->owner_ses);
    switch (p.activity) {
    case HW_ACTIVITY_GONE:
        close_owner(w, index); // it exited: the next check reads the word again
        w->checked_ns = 0;
        return;
    case HW_ACTIVITY_UNKNOWN:
        return; // when in doubt, no signal and no guess
    case HW_ACTIVITY_BLOCKED: {
        if (!p.exact) return;
        follow_chain(slot, w, &p, hw_now_ns());
        uint64_t regs[HW_REG_COUNT] = {0};
        regs[HW_REG_RSP] = p.sp;
        regs[HW_REG_RIP] = p.pc;
        bool same = w->have_last && w->last_nr == p.nr && w->last_sp == p.sp && w->last_pc == p.pc;
        write_owner_sample(w->owner, slot->session.busy_seq, HW_SRC_BLOCKED_SYSCALL,
                           HW_CALL_SYSCALL_BASE + (int)p.nr, regs, same, slot->session.repeat_extra, hw_now_ns(), NULL);
        w->have_last = true;
        w->last_nr = p.nr;
        w->last_sp = p.sp;
        w->last_pc = p.pc;
        return;
    }
    case HW_ACTIVITY_RUNNING:
        w->have_last = false;
        follow_chain(slot, w, &p, hw_now_ns());
        if (w->owner_perf.map || w->owner_blocks_sigprof) return; // the kernel samples it, or nothing can
        send_owner_signal(w->owner, index, slot->session.repeat_extra);
        return;
    }
}

// ---- threads that ran while no owner is known -------------------------------
// One tracker for the whole process (an ownerless wait on two watched loops
// at once gets it for the first): CPU clocks of every thread at the first
// look, then every HW_RAN_PERIOD_NS the threads whose clocks moved.

static struct {
    int slot_index; // -1: free
    uint64_t busy_seq, since_ns, last_ns;
    pid_t waiter;
    uint32_t count;
    struct { pid_t tid; uint64_t cpu; } base[HW_RAN_TRACK];
} ran = { .slot_index = -1 };

typedef struct { void (*fn)(pid_t tid, void *ctx); void *ctx; } each_call;

static bool call_each(pid_t tid, void *ctx) {
    each_call *call = ctx;
    call->fn(tid, call->ctx);
    return true;
}

/// Calls `fn` for every thread of the process (no malloc).
static void each_thread(void (*fn)(pid_t tid, void *ctx), void *ctx) {
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900); // never at a number the program would get
    if (high >= 0) { close(fd); fd = high; }
    each_call call = { fn, ctx };
    hw_os_scan_tasks(fd, call_each, &call);
    close(fd);
}

static void take_baseline(pid_t tid, void *ctx) {
    (void)ctx;
    uint64_t cpu;
    if (ran.count < HW_RAN_TRACK && tid != ran.waiter && hw_thread_cpu_ns(tid, &cpu))
        ran.base[ran.count++] = (typeof(ran.base[0])){ tid, cpu };
}

typedef struct { hw_ran_thread top[HW_RAN_MAX]; uint32_t n; } ran_top;

static void measure(pid_t tid, void *ctx) {
    ran_top *top = ctx;
    uint64_t cpu, base = 0;
    if (tid == ran.waiter || tid == __atomic_load_n(&hw_g.watchdog_tid, __ATOMIC_ACQUIRE)) return;
    if (!hw_thread_cpu_ns(tid, &cpu)) return;
    for (uint32_t i = 0; i < ran.count; i++)
        if (ran.base[i].tid == tid) { base = ran.base[i].cpu; break; } // threads born since: all of it
    uint64_t used = cpu > base ? cpu - base : 0;
    if (used == 0) return;
    // Keep the HW_RAN_MAX largest, sorted, by insertion.
    uint32_t at = top->n < HW_RAN_MAX ? top->n : HW_RAN_MAX;
    while (at > 0 && top->top[at - 1].cpu_ns < used) at--;
    if (at >= HW_RAN_MAX) return;
    uint32_t last = top->n < HW_RAN_MAX ? top->n : HW_RAN_MAX - 1;
    memmove(&top->top[at + 1], &top->top[at], (last - at) * sizeof top->top[0]);
    top->top[at] = (hw_ran_thread){ .tid = tid, .cpu_ns = used };
    if (top->n < HW_RAN_MAX) top->n++;
}

static void ran_write(const hw_slot *slot, uint64_t now) {
    ran_top top = { .n = 0 };
    each_thread(measure, &top);
    ran.last_ns = now;
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_ran_during *rec = (hw_rec_ran_during *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->count = top.n;
    rec->busy_seq = ran.busy_seq;
    rec->since_ns = ran.since_ns;
    rec->time_ns = now;
    memset(rec->threads, 0, sizeof rec->threads);
    for (uint32_t i = 0; i < top.n; i++) {
        rec->threads[i] = top.top[i];
        thread_name(top.top[i].tid, rec->threads[i].name);
    }
    hw_log_commit(&rec->h, HW_REC_RAN_DURING);
}

static void ran_tick(hw_slot *slot, uint64_t now) {
    int index = (int)index_of(slot);
    if (ran.slot_index == -1) {
        ran.slot_index = index;
        ran.busy_seq = slot->session.busy_seq;
        ran.waiter = slot->session.os_tid;
        ran.since_ns = ran.last_ns = now;
        ran.count = 0;
        each_thread(take_baseline, NULL);
        return;
    }
    if (ran.slot_index == index && now - ran.last_ns >= HW_RAN_PERIOD_NS) ran_write(slot, now);
}

static void ran_end(const hw_slot *slot) {
    if (ran.slot_index != (int)index_of(slot)) return;
    if (ran.busy_seq == slot->session.busy_seq) ran_write(slot, hw_now_ns());
    ran.slot_index = -1;
}

// ---- the watchdog's per-tick duty -------------------------------------------

void hw_lock_tick(hw_slot *slot, const hw_thread_probe *probe, uint64_t now) {
    if (probe->activity != HW_ACTIVITY_BLOCKED || !probe->exact || probe->nr != SYS_futex) {
        hw_lock_not_waiting(slot);
        return;
    }
    uint32_t index = index_of(slot);
    struct lock_watch *w = &watches[index];
    uint64_t addr = probe->args[0];
    uint32_t op = (uint32_t)probe->args[1];
    if (!w->active || addr != w->addr || now - w->checked_ns >= HW_RECHECK_NS) {
        pid_t owner;
        uint32_t word = 0;
        pid_t known = w->active && w->owner_open && addr == w->addr ? w->owner : 0;
        uint32_t how = identify(addr, op, slot->session.os_tid, known, &owner, &word);
        bool changed = !w->active || addr != w->addr || owner != w->owner || how != w->how;
        if (changed && w->owner) close_owner(w, index);
        w->active = true;
        w->addr = addr;
        w->op = op;
        w->how = how;
        w->word = word;
        w->checked_ns = now;
        if (changed && owner) {
            w->owner = owner;
            hw_proc_session_open(&w->owner_ses, owner);
            w->owner_open = true;
            w->owner_blocks_sigprof = !hw_perf_open(&w->owner_perf, owner) && hw_proc_blocks_sigprof(owner);
            set_request(index, owner, slot->tid, slot->session.busy_seq);
        }
        if (changed) write_owner_record(slot, w, now);
    }
    if (w->owner) sample_owner(slot, w);
    else ran_tick(slot, now);
}

void hw_lock_not_waiting(hw_slot *slot) {
    struct lock_watch *w = &watches[index_of(slot)];
    hw_perf_drain(&w->owner_perf, NULL, NULL);
}

void hw_lock_after_fork(void) {
    for (uint32_t i = 0; i < HW_MAX_SLOTS; i++) hw_perf_after_fork(&watches[i].owner_perf);
}

void hw_lock_session_end(hw_slot *slot) {
    uint32_t index = index_of(slot);
    struct lock_watch *w = &watches[index];
    ran_end(slot);
    close_owner(w, index);
    *w = (struct lock_watch){ .active = false };
}

const hw_subsystem hw_lock_owner_subsystem = { .name = "lock owner", .after_fork = hw_lock_after_fork };
