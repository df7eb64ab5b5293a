// The main dispatch queue as a watched "thread": one slot (id
// HW_MAIN_QUEUE_ID) whose work hops between libdispatch workers.
// A busy period runs from a block's start until the queue has nothing left
// that was enqueued to run at once, so back-to-back blocks form one period,
// as they would on a run loop that never got to wait.
#include "engine_internal.h"

#include <sys/syscall.h>
#include <unistd.h>

static hw_slot *main_queue_slot;
static pthread_mutex_t main_queue_lock = PTHREAD_MUTEX_INITIALIZER;

// Stack bounds of the calling worker, computed once per thread.
static __thread uint64_t worker_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uint64_t worker_stack_hi __attribute__((tls_model("initial-exec")));
static __thread pid_t worker_tid __attribute__((tls_model("initial-exec")));

static hw_slot *queue_slot(void) {
    hw_slot *slot = __atomic_load_n(&main_queue_slot, __ATOMIC_ACQUIRE);
    if (slot || !hw_engine_running()) return slot;
    pthread_mutex_lock(&main_queue_lock);
    if (!main_queue_slot) {
        hw_slot *created = hw_slot_register(HW_MAIN_QUEUE_ID, HW_ROLE_MAIN_QUEUE);
        if (created) {
            created->state = HW_STATE_WAITING;
            created->launched = true; // the queue has no launch period of its own
            created->os_tid = 0;
        }
        __atomic_store_n(&main_queue_slot, created, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&main_queue_lock);
    return main_queue_slot;
}

void hw_main_queue_enqueued(void) {
    hw_slot *slot = queue_slot();
    if (slot) __atomic_fetch_add(&slot->pending, 1, __ATOMIC_ACQ_REL);
}

static void learn_worker(void) {
    if (worker_tid) return;
    worker_tid = (pid_t)syscall(SYS_gettid);
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        worker_stack_lo = (uint64_t)(uintptr_t)addr;
        worker_stack_hi = worker_stack_lo + size;
    }
    pthread_attr_destroy(&attr);
}

void hw_main_queue_run(void (*fn)(void *), void *ctx, bool counted) {
    hw_slot *slot = queue_slot();
    if (slot && counted) __atomic_fetch_sub(&slot->pending, 1, __ATOMIC_ACQ_REL);
    learn_worker();
    // On the OS main thread (a RunLoop program) the run-loop heartbeat already
    // covers this block.
    if (!slot || hw_g.disabled || worker_tid == hw_g.pid) { fn(ctx); return; }

    // Publish the worker before the busy state, so the watchdog never signals a stale thread.
    slot->stack_lo = worker_stack_lo;
    slot->stack_hi = worker_stack_hi;
    if (__atomic_exchange_n(&slot->os_tid, worker_tid, __ATOMIC_ACQ_REL) != worker_tid) hw_log_thread(slot);
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_WAITING) hw_heartbeat_wait_end(slot);

    hw_tls_saved saved = hw_tls_enter(slot);
    fn(ctx);
    hw_tls_leave(saved);

    if (__atomic_load_n(&slot->pending, __ATOMIC_ACQUIRE) == 0) hw_heartbeat_wait_begin(slot);
}

void hw_main_thread_parks(void) {
    hw_slot *slot = hw_current_slot();
    if (slot && slot->role == HW_ROLE_MAIN_THREAD) hw_heartbeat_wait_begin(slot);
    (void)queue_slot();
}

// ---- probe mode --------------------------------------------------------------
// In-process (the HangWatch library) nothing wraps the main queue, so the
// watchdog posts a tiny probe block to it. A probe that does not run within
// arm_ns means the queue is stuck: the busy period is taken to have started
// halfway between the last moment the queue was known idle and this probe's
// post, and ends when the probe finally runs. The thread that holds the
// queue is read from libdispatch's drain lock (main_queue_owner.c) and
// claimed from outside, never signalled; the watchdog samples it like any
// watched thread. Where the lock cannot be read, every running thread is
// asked whether libdispatch says it is draining the main queue.
//
// Probes cost a worker's wake-up and the watchdog's, so they are sent only
// while dispatch work runs (dispatch_brackets.c counts it): while none does,
// no main-queue block runs either, and the watchdog parks; the work that ends
// the park wakes it and stamps when the queue was last known idle. A stall's
// start is good to half the gap between the last answered probe and the
// stuck one, and work that begins after a quiet spell often reaches the main
// queue a fraction of a millisecond later, just behind the first probe (a
// Task.sleep's timer fires on a worker, which then enqueues the MainActor
// job): so work that begins after the last probe answered restarts the
// schedule (at most once per HW_PROBE_RESTART_NS; a later one waits for the
// gap at hand): a probe at the watchdog's next tick, at once when the work
// woke it from a park, and gaps after it doubling from HW_PROBE_FIRST_GAP_NS
// to HW_PROBE_INTERVAL_NS, where they stay while work runs. Work that keeps
// restarting it costs up to 8 probes per 100 ms (at 0, 2, 6, 14, 30, 50, 70
// and 90 ms), 80 a second, where a steady 20 ms gap costs 50. A
// DispatchQueue.main.sync from a thread outside libdispatch's pool (or from
// the one root queue not counted) runs in no counted bracket: a parked
// watchdog still probes every HW_PROBE_IDLE_NS for it.

#include <fcntl.h>
#include <signal.h>
#include <dlfcn.h>
#include <stdlib.h>

#define HW_PROBE_INTERVAL_NS (20 * 1000000ull)
#define HW_PROBE_FIRST_GAP_NS (2 * 1000000ull)
#define HW_PROBE_RESTART_NS HW_PROBE_IDLE_NS
#define HW_PROBE_TRAIL_NS (1000000ull)
/// A probe due this soon goes out at the tick at hand (saves a wake-up).
#define HW_PROBE_EARLY_NS (1000000ull)

static struct {
    void *main_queue;
    void (*async_f)(void *, void *, void (*)(void *));
    void *(*current_queue)(void);
    uint64_t posted_ns;   // atomic: when the outstanding probe was posted; 0 when none
    uint64_t last_run_ns; // atomic
    // The watchdog's own (only it reads or writes them):
    uint64_t last_posted_ns; // when the last probe went out
    uint64_t gap_ns;         // from it to the next one, while dispatch work runs
    uint64_t restart_ns;     // when work after a quiet spell last restarted the gaps
    pid_t refused_tid;       // a holder this stall cannot be claimed for (find_stall_thread)
    uint32_t bounds_tries;   // stack mapping look-ups for the holder claimed last (stack_seen)
    // atomic: the start a stall would have without the bracket stamp, while
    // its start came from one and its thread is not known yet; else 0
    uint64_t unstamped_start_ns;
} probe;

bool hw_main_queue_idle(void) {
    return hw_dispatch_brackets_idle() && __atomic_load_n(&probe.posted_ns, __ATOMIC_SEQ_CST) == 0;
}

static void probe_ran(void *unused) {
    (void)unused;
    hw_slot *slot = queue_slot();
    uint64_t now = hw_now_ns();
    __atomic_store_n(&probe.last_run_ns, now, __ATOMIC_RELEASE);
    __atomic_store_n(&probe.posted_ns, 0, __ATOMIC_RELEASE);
    hw_main_queue_owner_learn(probe.main_queue);
    if (!slot) return;
    uint32_t busy = HW_STATE_BUSY;
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == busy) hw_heartbeat_wait_begin(slot);
}

void hw_main_thread_parked(hw_slot *slot) {
    hw_heartbeat_wait_begin(slot);
    if (hw_g.probe_main_queue) return;
    probe.main_queue = dlsym(RTLD_DEFAULT, "_dispatch_main_q");
    probe.async_f = (__typeof__(probe.async_f))dlsym(RTLD_DEFAULT, "dispatch_async_f");
    probe.current_queue = (__typeof__(probe.current_queue))dlsym(RTLD_DEFAULT, "dispatch_get_current_queue");
    if (!probe.main_queue || !probe.async_f || !probe.current_queue || !queue_slot()) return;
    __atomic_store_n(&hw_g.probe_main_queue, true, __ATOMIC_RELEASE);
}

static bool ask_if_running(pid_t tid, void *ctx) {
    (void)ctx;
    if (tid == hw_g.pid || tid == hw_g.watchdog_tid) return true;
    if (hw_proc_probe_tid(tid).activity == HW_ACTIVITY_RUNNING) hw_signal_send(tid, true);
    return true;
}

/// Signal every running thread but the watchdog and the parked main thread.
static void ask_running_threads(void) {
    int fd = hw_proc_keep_away_fd(open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd < 0) return;
    hw_os_scan_tasks(fd, ask_if_running, NULL);
    close(fd);
}

/// hw_log_thread for a slot's thread that is not the caller: its name from /proc.
static void log_thread_from_outside(const hw_slot *slot) {
    char name[16] = {0};
    int fd = hw_proc_open_task_file(slot->os_tid, "comm");
    if (fd >= 0) {
        ssize_t n = read(fd, name, sizeof name - 1);
        close(fd);
        if (n > 0 && name[n - 1] == '\n') name[n - 1] = 0;
    }
    hw_log_thread_named(slot, name);
}

/// SIGNAL-SAFE (atomics only). The stall's start goes back to what the probes
/// alone say, once: it is earlier than the stamp's.
static void take_unstamped_start(hw_slot *slot) {
    uint64_t unstamped = __atomic_exchange_n(&probe.unstamped_start_ns, 0, __ATOMIC_ACQ_REL);
    if (unstamped && unstamped < __atomic_load_n(&slot->busy_since_ns, __ATOMIC_ACQUIRE))
        __atomic_store_n(&slot->busy_since_ns, unstamped, __ATOMIC_RELEASE);
}

/// Claims the stall for `owner`, the queue's holder, from outside: the
/// watchdog samples it like any watched thread (the kernel while it runs,
/// its stack copied from /proc's stack pointer while it waits), and nothing
/// is sent to it. [lo, hi) bound its stack when known; (0, 0) when it was
/// running: the first stack pointer seen gives them (hw_main_queue_stack_seen).
static void claim_from_outside(hw_slot *slot, pid_t owner, uint64_t lo, uint64_t hi) {
    // It may have let go of the queue while /proc was read.
    if (hw_main_queue_owner(probe.main_queue) != owner) return;
    // Read before the claim and checked after it: a holder that let go
    // meanwhile could have closed its bracket too.
    hw_bracket_answer bracket = hw_dispatch_bracket_open_on(owner);
    pid_t none = 0;
    if (!__atomic_compare_exchange_n(&slot->os_tid, &none, owner, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    // For the watchdog's copies of this thread (process_vm_readv); its own,
    // under the signal sampler, ignore them (sampler_stack.c).
    __atomic_store_n(&slot->stack_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->stack_hi, hi, __ATOMIC_RELAXED);
    probe.bounds_tries = 0;
    // A stall outside counted dispatch work (main.sync from a plain thread)
    // may predate the stamp its start was bounded by: the earlier start.
    // Inside it, or unknown, the stamp holds, also for a thread the queue
    // passes to later in the same stall.
    if (bracket == HW_BRACKET_NONE && hw_main_queue_owner(probe.main_queue) == owner) take_unstamped_start(slot);
    else __atomic_store_n(&probe.unstamped_start_ns, 0, __ATOMIC_RELEASE);
    log_thread_from_outside(slot);
}

/// Finds the thread that holds the stuck queue. libdispatch names it
/// (main_queue_owner.c), and it is claimed from outside, never signalled:
/// between a /proc read that shows it running and the signal's delivery it
/// can enter a wait that any handler cuts short (nanosleep, sem_timedwait),
/// and in-process nothing would resume that wait. Running, it is claimed
/// at once; blocked, with the bounds of the mapping its stack pointer lies in
/// (a stack pointer outside any mapping that can be a stack: nothing for the
/// rest of the stall, and no more /proc reads for it); its state unknown:
/// not yet. Held by nobody (a suspended queue, or between two holders):
/// nothing to sample. Only where the holder cannot be read (the queue's
/// layout not recognised: the engine started after dispatchMain() and no
/// probe has run yet, or a libdispatch that keeps it elsewhere) is every
/// running thread asked: that one way still signals, with the race above.
static void find_stall_thread(hw_slot *slot) {
    pid_t owner = hw_main_queue_owner(probe.main_queue);
    if (owner < 0) { ask_running_threads(); return; }
    if (owner == 0) return;
    if (owner == hw_g.pid || owner == hw_g.watchdog_tid || owner == probe.refused_tid) return;
    hw_thread_probe state = hw_proc_probe_tid(owner);
    if (state.activity == HW_ACTIVITY_RUNNING) { claim_from_outside(slot, owner, 0, 0); return; }
    if (state.activity != HW_ACTIVITY_BLOCKED || !state.exact) return;
    uint64_t lo, hi;
    if (!hw_proc_stack_mapping_of(state.sp, &lo, &hi)) { probe.refused_tid = owner; return; }
    claim_from_outside(slot, owner, lo, hi);
}

/// /proc/self/maps reads per claim for a holder's stack bounds: a stack
/// pointer on an alternate stack, or a moment without a free descriptor,
/// does not cost the rest of the stall its stacks.
#define HW_BOUNDS_TRIES 4u

void hw_main_queue_stack_seen(hw_slot *slot, pid_t tid, uint64_t sp) {
    if (slot->tid != HW_MAIN_QUEUE_ID || __atomic_load_n(&slot->stack_hi, __ATOMIC_RELAXED)) return;
    // A sample of the thread that held the queue before (drained as its
    // session ends) says nothing of this one's stack.
    if (tid != __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE) || probe.bounds_tries >= HW_BOUNDS_TRIES) return;
    // Reached from a kernel sample's drain too, where no look came first:
    // opening maps is a call a filter the program put on us may kill for.
    if (!hw_seccomp_risky_calls_allowed()) return;
    probe.bounds_tries++;
    uint64_t lo, hi;
    if (!hw_proc_stack_mapping_of(sp, &lo, &hi)) return;
    __atomic_store_n(&slot->stack_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->stack_hi, hi, __ATOMIC_RELAXED);
}

/// When the next probe is due, none being out. Dispatch work that began
/// since the last probe answered restarts the gaps, even if it is over: a
/// timer's worker that woke the watchdog may be done before the watchdog
/// runs, the MainActor job it enqueued not yet begun. Not the probe's own
/// drain: it begins before the probe answers, and the worker opens one more
/// bracket just after it, which HW_PROBE_TRAIL_NS leaves out.
/// At most once per HW_PROBE_RESTART_NS: short work every few milliseconds
/// costs at most 30 probes a second more than a steady 20 ms gap.
static uint64_t next_probe_due(uint64_t now, uint64_t last_run, bool *restart) {
    uint64_t opened = hw_dispatch_brackets_opened_ns();
    *restart = opened > last_run + HW_PROBE_TRAIL_NS
        && (!probe.restart_ns || now - probe.restart_ns >= HW_PROBE_RESTART_NS);
    if (*restart) return now;
    if (hw_main_queue_idle()) return last_run + HW_PROBE_IDLE_NS;
    return probe.last_posted_ns + probe.gap_ns;
}

/// Posts a probe; the gap to the next one restarts at HW_PROBE_FIRST_GAP_NS
/// or doubles, up to HW_PROBE_INTERVAL_NS.
static void post_probe(uint64_t now, bool restart) {
    __atomic_store_n(&probe.posted_ns, now, __ATOMIC_RELEASE);
    if (restart) probe.restart_ns = now;
    uint64_t doubled = probe.gap_ns * 2;
    probe.gap_ns = restart ? HW_PROBE_FIRST_GAP_NS
        : doubled && doubled < HW_PROBE_INTERVAL_NS ? doubled : HW_PROBE_INTERVAL_NS;
    probe.last_posted_ns = now;
    // libdispatch may create a worker from this call, and a new thread
    // inherits the caller's signal mask: post with the program's own mask,
    // not the watchdog's block-everything one, or that worker would never
    // take SIGPROF again.
    sigset_t watchdog_mask;
    pthread_sigmask(SIG_SETMASK, &hw_g.program_sigmask, &watchdog_mask);
    probe.async_f(probe.main_queue, NULL, probe_ran);
    pthread_sigmask(SIG_SETMASK, &watchdog_mask, NULL);
}

uint64_t hw_main_queue_probe_tick(uint64_t now) {
    hw_slot *slot = queue_slot();
    if (!slot) return UINT64_MAX;
    uint64_t posted = __atomic_load_n(&probe.posted_ns, __ATOMIC_ACQUIRE);
    if (posted == 0) {
        bool restart;
        uint64_t due = next_probe_due(now, __atomic_load_n(&probe.last_run_ns, __ATOMIC_ACQUIRE), &restart);
        if (due > now + HW_PROBE_EARLY_NS) return due;
        post_probe(now, restart);
        return now + probe.gap_ns;
    }
    // Out and not answered: stuck once it has been out arm_ns.
    if (now - posted < hw_g.config.arm_ns) return posted + hw_g.config.arm_ns;
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_WAITING) {
        // The queue was idle when it last answered, or when the dispatch work
        // began that woke a parked watchdog, and stuck by `posted`: take the
        // middle, good to half the gap. A stall inside counted work keeps the
        // count above zero, so work that began after the post with none in
        // flight, if the stall is inside counted work at all, is the stall's
        // own drain, and the probe stuck behind it: the stall began then (a
        // Task.sleep timer's worker enqueues the MainActor job, the watchdog
        // posts on the same wake, the queue's drain starts after both). The
        // stamp holds only for a stall inside counted work: one outside it
        // gets the start the last answered probe alone gives, as soon as
        // that shows: no counted work runs while it lasts, or its thread is
        // found outside any: its holder, claimed from outside, is not listed
        // in an open bracket (find_stall_thread), or a thread asked says so
        // (hw_main_queue_identify_here). Where that cannot be told (brackets
        // not listed), the stamp holds: a main-queue block waiting on I/O
        // inside its drain is the common case, and is exact so.
        // Work begun after `now` was read bounds nothing.
        uint64_t last = __atomic_load_n(&probe.last_run_ns, __ATOMIC_ACQUIRE);
        uint64_t opened = hw_dispatch_brackets_opened_ns();
        if (opened > now) opened = 0;
        uint64_t unstamped = last && last < posted ? posted - (posted - last) / 2 : posted;
        uint64_t start = unstamped;
        if (opened > posted) start = opened;
        else if (opened > last) start = posted - (posted - opened) / 2;
        __atomic_store_n(&probe.unstamped_start_ns, unstamped < start ? unstamped : 0, __ATOMIC_RELEASE);
        probe.refused_tid = 0;
        __atomic_store_n(&slot->os_tid, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->busy_since_ns, start, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->busy_seq, slot->busy_seq + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->state, HW_STATE_BUSY, __ATOMIC_RELEASE);
        // The probe may have run in between: then this period is already over.
        if (__atomic_load_n(&probe.posted_ns, __ATOMIC_ACQUIRE) == 0) hw_heartbeat_wait_begin(slot);
    }
    // Still stuck while no counted work runs: the stall is outside any (a
    // main.sync from a plain thread, blocked or not).
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_BUSY && hw_dispatch_brackets_idle())
        take_unstamped_start(slot);
    // The queue can pass to another thread within one stall (a main.sync that
    // waited behind the block that stuck it): the one claimed lets go, and
    // the one holding it now is found.
    pid_t claimed = __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
    pid_t owner = claimed ? hw_main_queue_owner(probe.main_queue) : 0;
    if (owner > 0 && owner != claimed)
        __atomic_compare_exchange_n(&slot->os_tid, &claimed, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE) == 0) find_stall_thread(slot);
    return UINT64_MAX; // the stall is the slot's busy period now: the watchdog ticks for it
}

// SIGNAL-SAFE: an atomic load and gettid.
hw_slot *hw_main_queue_slot_if_running_here(void) {
    hw_slot *slot = __atomic_load_n(&main_queue_slot, __ATOMIC_ACQUIRE);
    if (!slot) return NULL;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    return __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE) == tid ? slot : NULL;
}

// SIGNAL-SAFE: the holder is read from the queue with atomic loads. Without
// it, libdispatch's current queue: a thread-local read on a thread where
// libdispatch has run before (on one where it never has, its first use sets
// the thread's key up: pthread_setspecific, in practice safe, though POSIX
// does not promise it).
hw_slot *hw_main_queue_identify_here(uint64_t sp) {
    hw_slot *slot = __atomic_load_n(&main_queue_slot, __ATOMIC_ACQUIRE);
    if (!slot || !probe.current_queue) return NULL;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    // The holder runs the stall, also inside another queue's sync (where its
    // current queue is that one).
    pid_t owner = hw_main_queue_owner(probe.main_queue);
    if (owner > 0 ? owner != tid : owner == 0 || probe.current_queue() != probe.main_queue) return NULL;
    pid_t none = 0;
    if (!__atomic_compare_exchange_n(&slot->os_tid, &none, tid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
        && none != tid)
        return NULL;
    // The bounds the watchdog copies with when it finds this thread blocked
    // (process_vm_readv: a wrong bound costs stack, never a fault). The top
    // of a glibc thread's stack is its thread descriptor, which pthread_self
    // returns; deeper than here is still this stack, so no lower bound: a
    // wait inside a deeper call is copied too. This thread's own copies
    // ignore them (sampler_stack.c).
    uint64_t top = (uint64_t)(uintptr_t)pthread_self();
    __atomic_store_n(&slot->stack_lo, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->stack_hi, top > sp ? top : sp, __ATOMIC_RELAXED);
    if (none == 0) {
        // A stall outside counted dispatch work (main.sync from a plain thread)
        // may predate the stamp its start was bounded by: take the earlier start.
        if (!hw_dispatch_bracket_here()) take_unstamped_start(slot);
        hw_log_thread(slot); // reserve, prctl(PR_GET_NAME), commit: no locks
    }
    return slot;
}

// In-process the main-queue probe parks on dispatch work, which the bracket
// hooks count; the main queue's holder is guessed while the main thread
// still holds it. Under the agent its wrappers bracket the main queue instead.
static int main_queue_probe_start(void) {
    if (hw_g.interposed) return 0;
    hw_dispatch_brackets_install();
    hw_main_queue_owner_guess(dlsym(RTLD_DEFAULT, "_dispatch_main_q"), hw_g.pid);
    return 0;
}

const hw_subsystem hw_main_queue_probe_subsystem = { .name = "main-queue probe", .start = main_queue_probe_start };
