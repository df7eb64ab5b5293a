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
// post, and ends when the probe finally runs. The stuck worker is found by
// asking every running thread, in the SIGPROF handler, whether libdispatch
// says it is draining the main queue.
//
// Probes cost a worker's wake-up and the watchdog's, so they are sent only
// while dispatch work runs. libdispatch calls two hooks it exports for an
// autorelease pool (_dispatch_begin/end_NSAutoReleasePool, unset on Linux)
// around every item a worker takes from a root queue; after dispatchMain()
// the main queue is such an item, drained by a worker inside one bracket.
// The library points the hooks at a counter of open brackets. While none is
// open no main-queue block runs, so the watchdog parks, and the bracket that
// takes the count from 0 wakes it (and stamps when the queue was last known
// idle). While brackets are open it probes every HW_PROBE_INTERVAL_NS, as it
// always did. The exception is a DispatchQueue.main.sync from a thread
// outside libdispatch's pool: the block runs on the calling thread, in no
// bracket. A parked watchdog still posts a probe every HW_PROBE_IDLE_NS for it.

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <dlfcn.h>
#include <stdlib.h>

#define HW_PROBE_INTERVAL_NS (20 * 1000000ull)

static struct {
    void *main_queue;
    void (*async_f)(void *, void *, void (*)(void *));
    void *(*current_queue)(void);
    uint64_t posted_ns;   // atomic: when the outstanding probe was posted; 0 when none
    uint64_t last_run_ns; // atomic
} probe;

/// The open brackets (see above), counted by the hooks libdispatch calls.
static struct {
    bool claimed;       // atomic: one thread sets the hooks (the main thread's exit and the watchdog both may)
    bool installed;     // atomic: ours are set
    uint32_t open;      // atomic: brackets begun and not ended, on every worker
    uint64_t opened_ns; // atomic: when `open` last went from 0 to 1
    void *root_queue;   // the main queue's target, where workers drain it
} brackets;
/// What bracket_begin returns, so bracket_end counts only brackets it counted
/// (`&bracket_token[1]` for one it did not): one begun before the hooks were
/// set ends with NULL. Never NULL itself: libdispatch may assume a pool.
static char bracket_token[2];

// Called by libdispatch on a worker before each root-queue item. Only items
// of the root queue the main queue drains on are counted: libdispatch's
// manager, which waits for events forever inside one item of another root
// queue, would otherwise keep a bracket open for good.
static void *bracket_begin(void) {
    if (probe.current_queue() != brackets.root_queue) return &bracket_token[1];
    if (__atomic_fetch_add(&brackets.open, 1, __ATOMIC_SEQ_CST) == 0) {
        __atomic_store_n(&brackets.opened_ns, hw_now_ns(), __ATOMIC_RELEASE);
        // Pairs with park(): it raises the flag, then reads the count.
        if (__atomic_load_n(&hw_g.watchdog_parked, __ATOMIC_SEQ_CST)) {
            int saved = errno; // between the program's items, but its errno all the same
            hw_watchdog_wake();
            errno = saved;
        }
    }
    return &bracket_token[0];
}

// Called by libdispatch after the item, with what bracket_begin returned.
static void bracket_end(void *pool) {
    if (pool == &bracket_token[0]) __atomic_fetch_sub(&brackets.open, 1, __ATOMIC_SEQ_CST);
}

/// Sets the hooks once per process; never unset (a bracket still open would
/// then never be counted down). Hooks someone else set are left alone, and
/// the watchdog then probes every HW_PROBE_INTERVAL_NS without parking.
static void install_brackets(void) {
    bool unclaimed = false;
    if (!__atomic_compare_exchange_n(&brackets.claimed, &unclaimed, true, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    void *(**begin)(void) = (void *(**)(void))dlsym(RTLD_DEFAULT, "_dispatch_begin_NSAutoReleasePool");
    void (**end)(void *) = (void (**)(void *))dlsym(RTLD_DEFAULT, "_dispatch_end_NSAutoReleasePool");
    if (!begin || !end || __atomic_load_n(begin, __ATOMIC_ACQUIRE) || __atomic_load_n(end, __ATOMIC_ACQUIRE)) return;
    // The main queue's target, read where libdispatch publishes its layout for
    // debuggers (dispatch_queue_offsets: version, then (offset, size) pairs;
    // the target queue's pair is the 7th, from version 5 on).
    const uint16_t *offsets = (const uint16_t *)dlsym(RTLD_DEFAULT, "dispatch_queue_offsets");
    if (!offsets || offsets[0] < 5 || !offsets[13] || offsets[14] != sizeof(void *)) return;
    brackets.root_queue = __atomic_load_n((void **)((char *)probe.main_queue + offsets[13]), __ATOMIC_ACQUIRE);
    if (!brackets.root_queue) return;
    // The end first: a bracket that got our token always finds our end.
    __atomic_store_n(end, bracket_end, __ATOMIC_RELEASE);
    __atomic_store_n(begin, bracket_begin, __ATOMIC_RELEASE);
    __atomic_store_n(&brackets.installed, true, __ATOMIC_RELEASE);
}

bool hw_main_queue_idle(void) {
    return __atomic_load_n(&brackets.installed, __ATOMIC_ACQUIRE) && __atomic_load_n(&brackets.open, __ATOMIC_SEQ_CST) == 0
        && __atomic_load_n(&probe.posted_ns, __ATOMIC_SEQ_CST) == 0;
}

static void probe_ran(void *unused) {
    (void)unused;
    hw_slot *slot = queue_slot();
    uint64_t now = hw_now_ns();
    __atomic_store_n(&probe.last_run_ns, now, __ATOMIC_RELEASE);
    __atomic_store_n(&probe.posted_ns, 0, __ATOMIC_RELEASE);
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
    install_brackets();
    __atomic_store_n(&hw_g.probe_main_queue, true, __ATOMIC_RELEASE);
}

/// Signal every running thread but the watchdog and the parked main thread.
static void ask_running_threads(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        pid_t tid = (pid_t)atoi(entry->d_name);
        if (tid <= 0 || tid == hw_g.pid || tid == hw_g.watchdog_tid) continue;
        if (hw_proc_probe_tid(tid).activity == HW_ACTIVITY_RUNNING) hw_signal_send(tid, true);
    }
    closedir(dir);
}

void hw_main_queue_probe_tick(uint64_t now) {
    hw_slot *slot = queue_slot();
    if (!slot) return;
    uint64_t posted = __atomic_load_n(&probe.posted_ns, __ATOMIC_ACQUIRE);
    if (posted == 0) {
        uint64_t last = __atomic_load_n(&probe.last_run_ns, __ATOMIC_ACQUIRE);
        if (now - last < (hw_main_queue_idle() ? HW_PROBE_IDLE_NS : HW_PROBE_INTERVAL_NS)) return;
        __atomic_store_n(&probe.posted_ns, now, __ATOMIC_RELEASE);
        // libdispatch may create a worker from this call, and a new thread
        // inherits the caller's signal mask: post with the program's own mask,
        // not the watchdog's block-everything one, or that worker would never
        // take SIGPROF again.
        sigset_t watchdog_mask;
        pthread_sigmask(SIG_SETMASK, &hw_g.program_sigmask, &watchdog_mask);
        probe.async_f(probe.main_queue, NULL, probe_ran);
        pthread_sigmask(SIG_SETMASK, &watchdog_mask, NULL);
        return;
    }
    if (now - posted < hw_g.config.arm_ns) return;
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_WAITING) {
        // The queue was idle when it last answered, or when the dispatch work
        // began that woke a parked watchdog, and stuck by `posted`: take the
        // middle, good to half the gap. (Work that began after the post, the
        // probe's own drain among it, says nothing of a stall outside any
        // bracket that was already on.)
        uint64_t idle = __atomic_load_n(&probe.last_run_ns, __ATOMIC_ACQUIRE);
        uint64_t opened = __atomic_load_n(&brackets.installed, __ATOMIC_ACQUIRE)
            ? __atomic_load_n(&brackets.opened_ns, __ATOMIC_ACQUIRE) : 0;
        if (opened > idle && opened <= posted) idle = opened;
        uint64_t start = idle && idle < posted ? posted - (posted - idle) / 2 : posted;
        __atomic_store_n(&slot->os_tid, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->busy_since_ns, start, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->busy_seq, slot->busy_seq + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->state, HW_STATE_BUSY, __ATOMIC_RELEASE);
        // The probe may have run in between: then this period is already over.
        if (__atomic_load_n(&probe.posted_ns, __ATOMIC_ACQUIRE) == 0) hw_heartbeat_wait_begin(slot);
    }
    if (__atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE) == 0) ask_running_threads();
}

// SIGNAL-SAFE: an atomic load and gettid.
hw_slot *hw_main_queue_slot_if_running_here(void) {
    hw_slot *slot = __atomic_load_n(&main_queue_slot, __ATOMIC_ACQUIRE);
    if (!slot) return NULL;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    return __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE) == tid ? slot : NULL;
}

// SIGNAL-SAFE: libdispatch's current queue is a thread-local read; the stack
// top of a glibc thread is its thread descriptor, which pthread_self returns.
hw_slot *hw_main_queue_identify_here(uint64_t sp) {
    hw_slot *slot = __atomic_load_n(&main_queue_slot, __ATOMIC_ACQUIRE);
    if (!slot || !probe.current_queue || probe.current_queue() != probe.main_queue) return NULL;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    pid_t none = 0;
    if (!__atomic_compare_exchange_n(&slot->os_tid, &none, tid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
        && none != tid)
        return NULL;
    // Only the thread that claimed the queue sets the stack bounds it is sampled with.
    uint64_t top = (uint64_t)(uintptr_t)pthread_self();
    slot->stack_lo = sp;
    slot->stack_hi = top > sp ? top : sp;
    if (none == 0) hw_log_thread(slot); // reserve, prctl(PR_GET_NAME), commit: no locks
    return slot;
}
