// Swift Concurrency's cooperative pool: each job as a busy period of the
// worker thread that runs it (docs/COOPERATIVE-POOL.md).
//
// The runtime makes one concurrent queue per job priority and sets its width
// to DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS; the agent's wrapper of
// dispatch_queue_set_width hands such queues here once each. Every job is
// then enqueued with dispatch_async_f(queue, job, fn) where fn is the
// runtime's one job-running function: the wrapper swaps fn for this queue's
// trampoline, passing the job pointer on unchanged (no allocation). The
// trampoline calls the remembered fn between a heartbeat's wait_end and
// wait_begin on a slot of role HW_ROLE_JOB, one per worker thread, claimed at
// its first job and released at the thread's exit. Between jobs the slot is
// waiting; inside one, the slot is the thread's current one, so its waits
// are blocked calls with saved registers, never a loop's idle wait.
//
// A pool hang (every thread of one queue inside a job) is derived by the
// reader from the job hangs: each job busy record carries 1 + its queue's
// index, and a HW_NOTE_POOL_QUEUE note per queue gives the queue's width.
#include "engine_internal.h"
#include "wrapper_text.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef void (*hw_job_fn)(void *);

/// Whether `fn` is the runtime's job function (the first job's names it).
static bool hw_pool_accepts(void (*fn)(void *));
/// The trampoline of pool queue `index`.
static void (*hw_pool_trampoline(int index))(void *);
/// One per pool queue (see HW_TRAMPOLINE).
static void (*const trampolines[HW_POOL_QUEUES])(void *);

/// DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS and the label Swift's runtime gives
/// each of its global concurrent queues (DispatchGlobalExecutor.cpp).
#define HW_WIDTH_MAX_LOGICAL_CPUS (-3l)
#define HW_POOL_QUEUE_LABEL "Swift global concurrent queue"
/// Queues an adopting caller found not to be the pool's (by their label), so
/// that it checks each one label once: the main queue and a program's own
/// serial executors get many jobs.
#define HW_NOT_POOL_CACHE 8

static struct {
    void *queue[HW_POOL_QUEUES]; // atomic: published once each, in index order; NULL once dropped
    // atomic, HW_QUEUE_* bits: whether its first job found the label still
    // the pool's, and whether the watchdog sees it full. The enqueue's fast
    // way is taken only for CONFIRMED alone: one compare for both.
    uint8_t state[HW_POOL_QUEUES];
    uint32_t count;              // atomic
    hw_job_fn run_job;           // atomic: the runtime's job function, learnt from the first job
    pthread_mutex_t lock;
    // A job that ran less than this by the coarse clock ends with no precise
    // stamp (0: always stamp). See job_ended.
    uint64_t short_ns;
    const char *(*label_of)(void *);      // dispatch_queue_get_label, found at hw_pool_init
    void *not_pool[HW_NOT_POOL_CACHE];    // atomic: see HW_NOT_POOL_CACHE
    uint32_t not_pool_next;               // atomic
    // Bit i: HW_QUEUE_FULL of queue i, as one word (written by the watchdog only).
    uint32_t full;                        // atomic
    // Bit i: a job enqueued on queue i since it became full was noted.
    uint32_t wait_noted;                  // atomic
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/// The coarse-clock bound under which a job cannot have been sampled: the
/// watchdog starts a session only on a job already busy arm_ns by its precise
/// clock, and a hang needs hang_ns; CLOCK_MONOTONIC_COARSE lags the precise
/// clock by at most its resolution (one kernel tick), and heartbeat stamps
/// may lead it by HW_STAMP_MAX_ERROR_NS; a millisecond more covers both.
static uint64_t short_job_bound(void) {
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return 0;
    uint64_t lag = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec + 1000000ull;
    uint64_t first = hw_g.config.arm_ns < hw_g.config.hang_ns ? hw_g.config.arm_ns : hw_g.config.hang_ns;
    return first > lag ? first - lag : 0;
}

/// pool.state bits.
enum { HW_QUEUE_CONFIRMED = 1, HW_QUEUE_FULL = 2 };

enum { WORKER_UNKNOWN = 0, WORKER_WATCHED = 1, WORKER_NEVER = 2 };
static __thread hw_slot *worker_slot __attribute__((tls_model("initial-exec")));
static __thread uint8_t worker_state __attribute__((tls_model("initial-exec")));
static __thread bool in_job __attribute__((tls_model("initial-exec")));

/// How many of one pool queue's jobs can run at once: its width
/// (DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS is the configured CPUs) or the
/// thread pool of its root queue, which libdispatch sizes by the CPUs in the
/// process's affinity mask at its start, whichever is smaller. Computed at
/// engine start, from the constructor: sysconf reads /sys with a descriptor
/// of the program's table, which no other thread may race for then.
static uint32_t pool_width_at_start;
/// Whether that is the queues' own width (no smaller affinity mask).
static bool pool_is_queue_width;

void hw_pool_init(void) {
    long configured = sysconf(_SC_NPROCESSORS_CONF);
    cpu_set_t mask;
    long usable = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : configured;
    long width = configured > 0 && configured < usable ? configured : usable;
    pool_width_at_start = width > 0 ? (uint32_t)width : 1u;
    pool_is_queue_width = configured > 0 && width == configured;
    pool.label_of = (const char *(*)(void *))dlsym(RTLD_DEFAULT, "dispatch_queue_get_label");
    // A libdispatch that hands jobs over with dispatch_async_swift_job would
    // bypass the wrapper of dispatch_async_f: say so once, nothing is watched.
    if (dlsym(RTLD_DEFAULT, "dispatch_async_swift_job")) hw_write_note(0, HW_NOTE_POOL_UNWATCHED, HW_POOL_WHY_SWIFT_JOB_API);
}

static uint32_t pool_width(void) { return pool_width_at_start ? pool_width_at_start : 1u; }

/// Pool workers with a slot of their own: at most HW_MAX_JOB_SLOTS, so the
/// table keeps room for loops and the main queue on a machine with many CPUs.
#define HW_MAX_JOB_SLOTS (HW_MAX_SLOTS - 64)
static uint32_t job_slots; // atomic

int hw_pool_queue_register(void *queue) {
    if (!queue || !hw_engine_running() || hw_g.disabled) return -1;
    int index = hw_pool_queue_index(queue);
    if (index >= 0) return index;
    pthread_mutex_lock(&pool.lock);
    uint32_t n = __atomic_load_n(&pool.count, __ATOMIC_ACQUIRE);
    index = -1;
    for (uint32_t i = 0; i < n; i++)
        if (pool.queue[i] == queue) index = (int)i;
    if (index < 0 && n >= HW_POOL_QUEUES) hw_write_note(0, HW_NOTE_POOL_UNWATCHED, HW_POOL_WHY_QUEUES);
    if (index < 0 && n < HW_POOL_QUEUES) {
        __atomic_store_n(&pool.queue[n], queue, __ATOMIC_RELEASE);
        __atomic_store_n(&pool.count, n + 1, __ATOMIC_RELEASE);
        index = (int)n;
        if (n == 0) __atomic_store_n(&pool.short_ns, short_job_bound(), __ATOMIC_RELEASE);
        hw_write_note(0, HW_NOTE_POOL_QUEUE, (uint64_t)index << 32 | pool_width());
    }
    pthread_mutex_unlock(&pool.lock);
    return index;
}

int hw_pool_queue_index(const void *queue) {
    uint32_t n = __atomic_load_n(&pool.count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (__atomic_load_n(&pool.queue[i], __ATOMIC_RELAXED) == queue) return (int)i;
    return -1;
}

static bool hw_pool_queue_confirmed(int index) {
    return index >= 0 && index < HW_POOL_QUEUES
           && (__atomic_load_n(&pool.state[index], __ATOMIC_ACQUIRE) & HW_QUEUE_CONFIRMED);
}

static void hw_pool_queue_confirm(int index, bool still_the_pool) {
    if (index < 0 || index >= HW_POOL_QUEUES) return;
    // The runtime may make two queues for one priority when two threads race
    // to create it, and release the loser at once: its address, reused by
    // another queue, must not be taken for the pool's.
    if (still_the_pool) __atomic_fetch_or(&pool.state[index], HW_QUEUE_CONFIRMED, __ATOMIC_ACQ_REL);
    else __atomic_store_n(&pool.queue[index], NULL, __ATOMIC_RELEASE);
}

bool hw_pool_is_runtime_queue(void *queue, long width) {
    if (width != HW_WIDTH_MAX_LOGICAL_CPUS || !pool.label_of || !queue) return false;
    const char *label = pool.label_of(queue);
    return label && strcmp(label, HW_POOL_QUEUE_LABEL) == 0;
}

/// `queue`, never registered, is the pool's by its label: register it. Each
/// other queue is looked at once (while the cache holds it).
static int adopt(void *queue) {
    for (uint32_t i = 0; i < HW_NOT_POOL_CACHE; i++)
        if (__atomic_load_n(&pool.not_pool[i], __ATOMIC_RELAXED) == queue) return -1;
    if (hw_pool_is_runtime_queue(queue, HW_WIDTH_MAX_LOGICAL_CPUS)) return hw_pool_queue_register(queue);
    uint32_t at = __atomic_fetch_add(&pool.not_pool_next, 1, __ATOMIC_RELAXED) % HW_NOT_POOL_CACHE;
    __atomic_store_n(&pool.not_pool[at], queue, __ATOMIC_RELAXED);
    return -1;
}

/// hw_pool_job_fn for a queue at `index` (-1: not registered) that is not
/// yet confirmed, or for a job function not yet known to be the runtime's.
__attribute__((noinline)) static void (*job_fn_slow(void *queue, void (*fn)(void *), int index, bool adopting))(void *) {
    if (index < 0 && adopting && queue) index = adopt(queue);
    if (index < 0) return NULL;
    // Once per queue: the label is still the pool's (see hw_pool_queue_confirm).
    if (__builtin_expect(!hw_pool_queue_confirmed(index), 0)) {
        bool still = hw_pool_is_runtime_queue(queue, HW_WIDTH_MAX_LOGICAL_CPUS);
        hw_pool_queue_confirm(index, still);
        if (!still) return NULL;
    }
    return hw_pool_accepts(fn) ? hw_pool_trampoline(index) : NULL;
}

// Runs for every job the program enqueues anywhere: the common cases (a
// confirmed pool queue with the runtime's job function; a queue that is none
// of the pool's, under the agent) take no call and save no register.
void (*hw_pool_job_fn(void *queue, void (*fn)(void *), bool adopting))(void *) {
    uint32_t n = __atomic_load_n(&pool.count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (__atomic_load_n(&pool.queue[i], __ATOMIC_RELAXED) != queue) continue;
        if (__builtin_expect((__atomic_load_n(&pool.state[i], __ATOMIC_ACQUIRE) & HW_QUEUE_CONFIRMED)
                             && __atomic_load_n(&pool.run_job, __ATOMIC_ACQUIRE) == fn, 1))
            return trampolines[i];
        return job_fn_slow(queue, fn, (int)i, adopting);
    }
    return adopting && queue ? job_fn_slow(queue, fn, -1, adopting) : NULL;
}

/// A job enqueued now on queue `index`, which the watchdog saw full: true
/// for the first one since (it is noted). Loaded first: a queue that stays
/// full sends every job here.
static bool first_waiting_job(uint32_t index) {
    uint32_t bit = 1u << index;
    if (__atomic_load_n(&pool.wait_noted, __ATOMIC_RELAXED) & bit) return false;
    return !(__atomic_fetch_or(&pool.wait_noted, bit, __ATOMIC_ACQ_REL) & bit);
}

/// The index of the queue `job` (a trampoline) belongs to when the watchdog
/// sees that queue full; -1 otherwise.
static int full_queue_of(hw_job_fn job) {
    if (__builtin_expect(!__atomic_load_n(&pool.full, __ATOMIC_RELAXED), 1)) return -1;
    for (uint32_t i = 0; i < HW_POOL_QUEUES; i++)
        if (trampolines[i] == job) return (__atomic_load_n(&pool.state[i], __ATOMIC_ACQUIRE) & HW_QUEUE_FULL) ? (int)i : -1;
    return -1;
}

/// The first job enqueued on a full queue is noted with stamps taken just
/// before and just after its enqueue: it cannot start before one of the jobs
/// that fill the queue ends, so that spell's end less the later stamp is a
/// lower bound of its wait, provided the spell had begun by the earlier one
/// (PoolHangs.swift checks both). One note holds both (HW_NOTE_POOL_JOB_WAITING):
/// in units of 10 µs, the later stamp rounded up and the span back to the
/// earlier one rounded down; a span that does not fit is not noted.
#define HW_WAIT_UNIT_NS 10000u
_Static_assert(HW_POOL_QUEUES <= 8, "a queue index fits the note's 3 bits");
__attribute__((noinline, cold)) static void enqueue_noted(void *queue, void *ctx, hw_job_fn job, hw_async_fn enqueue,
                                                           uint32_t index) {
    int saved_errno = errno; // the stamps never change errno; kept all the same
    uint64_t before = hw_fast_now_ns() / HW_WAIT_UNIT_NS;
    errno = saved_errno;
    enqueue(queue, ctx, job);
    saved_errno = errno; // what libdispatch left is the program's
    uint64_t after = (hw_fast_now_ns() + HW_WAIT_UNIT_NS - 1) / HW_WAIT_UNIT_NS;
    uint64_t span = after > before ? after - before : 0;
    if (span <= 0xffffu && after < (1ull << 45))
        hw_write_note(0, HW_NOTE_POOL_JOB_WAITING, (uint64_t)index << 61 | after << 16 | span);
    errno = saved_errno;
}

void hw_pool_enqueue_job(void *queue, void *ctx, hw_job_fn job, hw_async_fn enqueue) {
    int index = full_queue_of(job);
    if (__builtin_expect(index < 0, 1) || !first_waiting_job((uint32_t)index)) {
        enqueue(queue, ctx, job);
        return;
    }
    enqueue_noted(queue, ctx, job, enqueue, (uint32_t)index);
}

/// Clears every queue's full mark: nobody will clear it once the watchdog
/// is gone (its exit, a fork child), and a full queue's jobs take the slow way.
static void forget_full_queues(void) {
    for (uint32_t q = 0; q < HW_POOL_QUEUES; q++) __atomic_fetch_and(&pool.state[q], (uint8_t)~HW_QUEUE_FULL, __ATOMIC_ACQ_REL);
    __atomic_store_n(&pool.full, 0, __ATOMIC_RELEASE);
}

void hw_pool_watch_stop(void) { forget_full_queues(); }

void hw_pool_watch_tick(uint64_t now) {
    uint32_t queues = __atomic_load_n(&pool.count, __ATOMIC_ACQUIRE);
    // A pool narrower than its queues' width (an affinity mask at start) may
    // be given another thread by libdispatch: a waiting job could start.
    if (!queues || !pool_is_queue_width) return;
    uint32_t busy[HW_POOL_QUEUES] = { 0 };
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++) {
        hw_slot *slot = &hw_g.slots[i];
        if (slot->role != HW_ROLE_JOB || !hw_slot_alive(__atomic_load_n(&slot->life, __ATOMIC_ACQUIRE))) continue;
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != HW_STATE_BUSY) continue;
        uint64_t since = __atomic_load_n(&slot->busy_since_ns, __ATOMIC_RELAXED);
        uint32_t queue = __atomic_load_n(&slot->job_queue, __ATOMIC_RELAXED);
        if (queue == 0 || queue > HW_POOL_QUEUES || now < since || now - since < hw_g.config.arm_ns) continue;
        busy[queue - 1]++;
    }
    uint32_t full = 0;
    for (uint32_t q = 0; q < queues && q < HW_POOL_QUEUES; q++)
        if (busy[q] >= pool_width()) full |= 1u << q;
    uint32_t was = __atomic_load_n(&pool.full, __ATOMIC_RELAXED);
    if (full == was) return;
    // A queue newly full notes its next waiting job afresh.
    __atomic_fetch_and(&pool.wait_noted, ~(full & ~was), __ATOMIC_ACQ_REL);
    for (uint32_t q = 0; q < HW_POOL_QUEUES; q++) {
        if (!((full ^ was) >> q & 1u)) continue;
        if (full >> q & 1u) __atomic_fetch_or(&pool.state[q], HW_QUEUE_FULL, __ATOMIC_ACQ_REL);
        else __atomic_fetch_and(&pool.state[q], (uint8_t)~HW_QUEUE_FULL, __ATOMIC_ACQ_REL);
    }
    __atomic_store_n(&pool.full, full, __ATOMIC_RELEASE);
}

/// hw_pool_async_f past its fast path.
__attribute__((noinline)) static void async_f_slow(void *queue, void *ctx, hw_job_fn fn, hw_async_fn enqueue, hw_async_fn other) {
    hw_job_fn job = enqueue ? hw_pool_job_fn(queue, fn, false) : NULL;
    if (!job) {
        other(queue, ctx, fn);
        return;
    }
    hw_pool_enqueue_job(queue, ctx, job, enqueue); // a full queue's state sends its jobs here
}

void hw_pool_async_f(void *queue, void *ctx, hw_job_fn fn, hw_async_fn enqueue, hw_async_fn other) {
    uint32_t n = __atomic_load_n(&pool.count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (__atomic_load_n(&pool.queue[i], __ATOMIC_RELAXED) != queue) continue;
        // enqueue is the caller's resolved libdispatch call, read before this
        // thread saw the queue registered: never NULL in practice (the runtime
        // publishes a queue after its width is set, which resolves it), and a
        // NULL one takes the unbracketed way rather than a jump to 0.
        // A queue seen full takes the slow way, which notes a waiting job.
        if (__builtin_expect(__atomic_load_n(&pool.state[i], __ATOMIC_ACQUIRE) == HW_QUEUE_CONFIRMED
                             && __atomic_load_n(&pool.run_job, __ATOMIC_ACQUIRE) == fn && enqueue, 1)) {
            enqueue(queue, ctx, trampolines[i]);
            return;
        }
        async_f_slow(queue, ctx, fn, enqueue, other);
        return;
    }
    other(queue, ctx, fn); // not a registered queue: no pool job (the agent adopts none)
}

static bool hw_pool_accepts(void (*fn)(void *)) {
    hw_job_fn known = __atomic_load_n(&pool.run_job, __ATOMIC_ACQUIRE);
    if (known) return known == fn;
    // The first job names the function; anything else later passes through unbracketed.
    __atomic_compare_exchange_n(&pool.run_job, &known, fn, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&pool.run_job, __ATOMIC_ACQUIRE) == fn;
}

/// Claims a job slot for the calling worker (see claim_worker_slot).
static hw_slot *register_worker(void) {
    worker_state = WORKER_NEVER;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (tid == hw_g.pid || hw_tls_slot_fast() || !hw_owned()) return NULL;
    if (__atomic_add_fetch(&job_slots, 1, __ATOMIC_ACQ_REL) > HW_MAX_JOB_SLOTS) {
        __atomic_sub_fetch(&job_slots, 1, __ATOMIC_ACQ_REL);
        hw_write_note(0, HW_NOTE_POOL_UNWATCHED, HW_POOL_WHY_SLOTS);
        return NULL;
    }
    // Idle from the start: a worker has no launch period of its own.
    hw_slot *slot = hw_slot_register_idle(tid, HW_ROLE_JOB);
    if (!slot) {
        __atomic_sub_fetch(&job_slots, 1, __ATOMIC_ACQ_REL);
        hw_write_note(0, HW_NOTE_POOL_UNWATCHED, HW_POOL_WHY_SLOTS);
        return NULL;
    }
    // Outside its jobs the worker is no loop of its own: its waits are never
    // taken for one (and the exit hook stays bound to this slot).
    hw_tls_never_watch();
    hw_slot_bind_thread(slot);
    worker_slot = slot;
    worker_state = WORKER_WATCHED;
    return slot;
}

/// The calling worker's job slot, claimed at its first job; NULL on a thread
/// that is watched otherwise (a loop, the main thread) or when the table is full.
static hw_slot *claim_worker_slot(void) {
    if (worker_state == WORKER_NEVER) return NULL;
    int saved_errno = errno; // registration reads /proc and names the thread: none of it is the program's
    hw_slot *slot = register_worker();
    errno = saved_errno;
    return slot;
}


void hw_pool_worker_gone(void) {
    if (worker_state == WORKER_WATCHED) __atomic_sub_fetch(&job_slots, 1, __ATOMIC_ACQ_REL);
    worker_slot = NULL;
    worker_state = WORKER_NEVER; // a job run by a later destructor passes through
}

/// The job on `slot` returned. A job shorter than arm_ns was never sampled
/// and is no hang, so only its state changes: its end needs no precise
/// stamp (idle_since_ns is read only for a slot under a session). The
/// coarse clock (a few ns, against a TSC read of about 10 in this VM: see
/// BENCHMARKS.md) tells such a job from one that may have been sampled.
static inline void job_ended(hw_slot *slot) {
    uint64_t bound = __atomic_load_n(&pool.short_ns, __ATOMIC_RELAXED);
    if (bound) {
        struct timespec coarse;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &coarse);
        uint64_t now = (uint64_t)coarse.tv_sec * 1000000000ull + (uint64_t)coarse.tv_nsec;
        uint64_t since = __atomic_load_n(&slot->busy_since_ns, __ATOMIC_RELAXED);
        // An announced hang always ends with its record, whatever the coarse clock says.
        bool announced = __atomic_load_n(&slot->announced_seq, __ATOMIC_ACQUIRE) == slot->busy_seq;
        if (!announced && (now < since || now - since < bound)) {
            __atomic_store_n(&slot->state, HW_STATE_WAITING, __ATOMIC_RELEASE);
            return;
        }
    }
    hw_heartbeat_wait_begin(slot);
}

HW_WRAPPER_TEXT static void run_job(uint32_t queue, void *job) {
    hw_job_fn fn = __atomic_load_n(&pool.run_job, __ATOMIC_RELAXED);
    hw_slot *slot = __builtin_expect(worker_state == WORKER_WATCHED, 1) ? worker_slot : claim_worker_slot();
    if (!slot || in_job || hw_g.disabled) { fn(job); return; }
    if (slot->job_queue != queue + 1) __atomic_store_n(&slot->job_queue, queue + 1, __ATOMIC_RELAXED);
    in_job = true;
    hw_heartbeat_wait_end_inline(slot, hw_fast_now_inline());
    hw_tls_saved saved = hw_tls_enter(slot);
    fn(job);
    hw_tls_leave(saved);
    job_ended(slot);
    in_job = false;
}

// One trampoline per queue index: the job pointer is the only argument, so
// the queue is told by which function runs.
#define HW_TRAMPOLINE(i) HW_WRAPPER_TEXT static void run_job_##i(void *job) { run_job(i, job); }
HW_TRAMPOLINE(0) HW_TRAMPOLINE(1) HW_TRAMPOLINE(2) HW_TRAMPOLINE(3)
HW_TRAMPOLINE(4) HW_TRAMPOLINE(5) HW_TRAMPOLINE(6) HW_TRAMPOLINE(7)
static void (*const trampolines[HW_POOL_QUEUES])(void *) = {
    run_job_0, run_job_1, run_job_2, run_job_3, run_job_4, run_job_5, run_job_6, run_job_7,
};
_Static_assert(HW_POOL_QUEUES == 8, "one trampoline per pool queue");

static void (*hw_pool_trampoline(int index))(void *) {
    return index >= 0 && index < HW_POOL_QUEUES ? trampolines[index] : NULL;
}

// Under the agent only: the in-process library calls hw_pool_init when it
// redirects the pool's calls (inprocess_pool.c).
static int pool_start(void) {
    if (hw_g.interposed) hw_pool_init();
    return 0;
}

/// SIGNAL-SAFE. The child has no watchdog to clear a full queue's mark.
static void pool_after_fork(void) { forget_full_queues(); }

const hw_subsystem hw_pool_subsystem = { .name = "cooperative pool", .start = pool_start, .after_fork = pool_after_fork };
