// Dispatch work in flight, for the library's main-queue probe (main_queue.c).
//
// libdispatch exports two hook pointers for an autorelease pool
// (_dispatch_begin_NSAutoReleasePool / _dispatch_end_NSAutoReleasePool,
// unset on Linux) and calls them around each run of a worker through a root
// queue: a worker that starts draining calls begin, runs items until the
// root queue is empty, then calls end. After dispatchMain() the main queue is
// drained that way too, and a DispatchQueue.main.sync from a worker runs
// inside that worker's bracket. So while no bracket is open, no main-queue
// block runs, except one synced from a thread outside libdispatch's pool.
//
// The library points the hooks at a counter of open brackets, from engine
// start on (the fewer brackets began before, the fewer go uncounted). One
// root queue is left out: libdispatch's manager thread waits for events
// forever inside one bracket of the user-interactive overcommit root queue,
// and would keep the count above zero for good. A main.sync from work on that
// queue is therefore, like one from outside the pool, seen only by the probe
// a sleeping watchdog still sends every HW_PROBE_IDLE_NS.
//
// Each thread with a counted bracket open is also listed by id, so that the
// watchdog can tell from outside, without asking the thread (a signal could
// cut its next wait short), whether the thread holding a stuck main queue
// runs inside counted work.
#include "engine_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// The manager's root queue, known by its label (dispatch_get_global_queue
// does not hand it out: it maps user-interactive to user-initiated).
#define HW_MANAGER_ROOT_LABEL "com.apple.root.user-interactive-qos.overcommit"

static struct {
    bool claimed;             // atomic: one thread sets the hooks
    bool installed;           // atomic: ours are set
    void *(**begin_hook)(void);
    void *(*current_queue)(void);
    const char *(*label_of)(void *);
    void *manager_root;       // atomic: the root queue left out, once a bracket on it was seen
    uint32_t open;            // atomic: brackets begun and not ended, on every worker
    uint64_t opened_ns;       // atomic: when `open` last went from 0 to 1
} brackets;

/// What bracket_begin returns, so bracket_end counts down only brackets it
/// counted (`&token[1]` for one it did not; NULL ends one begun before the
/// hooks were set). Never NULL itself: libdispatch may assume a pool.
static char token[2];

/// Counted brackets open on this thread (SIGNAL-SAFE to read).
static __thread uint32_t depth_here __attribute__((tls_model("initial-exec")));

/// Threads with a counted bracket open: a cell holds a thread id, or 0. As
/// many workers as run at once need a cell each (libdispatch's pool is
/// usually the CPU count; overcommit queues add more); a thread that finds
/// none is counted in `unlisted`, and while any is, "not listed" means
/// "unknown".
#define HW_BRACKET_CELLS 64u
static pid_t listed[HW_BRACKET_CELLS]; // atomic cells
static uint32_t unlisted;              // atomic
static __thread uint32_t cell_here __attribute__((tls_model("initial-exec"))); // 1 + index; 0: none
static __thread pid_t tid_here __attribute__((tls_model("initial-exec")));

static void list_here(void) {
    if (!tid_here) tid_here = (pid_t)syscall(SYS_gettid);
    uint32_t first = (uint32_t)tid_here % HW_BRACKET_CELLS;
    for (uint32_t i = 0; i < HW_BRACKET_CELLS; i++) {
        uint32_t at = (first + i) % HW_BRACKET_CELLS;
        pid_t free_cell = 0;
        if (__atomic_compare_exchange_n(&listed[at], &free_cell, tid_here, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            cell_here = at + 1;
            return;
        }
    }
    __atomic_fetch_add(&unlisted, 1, __ATOMIC_SEQ_CST);
}

static void unlist_here(void) {
    if (cell_here) __atomic_store_n(&listed[cell_here - 1], 0, __ATOMIC_SEQ_CST);
    else __atomic_fetch_sub(&unlisted, 1, __ATOMIC_SEQ_CST);
    cell_here = 0;
}

// Called by libdispatch on a worker as it starts draining a root queue.
static void *bracket_begin(void) {
    void *queue = brackets.current_queue();
    void *manager_root = __atomic_load_n(&brackets.manager_root, __ATOMIC_RELAXED);
    if (queue == manager_root) return &token[1];
    if (!manager_root) {
        const char *label = queue ? brackets.label_of(queue) : NULL;
        if (label && strcmp(label, HW_MANAGER_ROOT_LABEL) == 0) {
            __atomic_store_n(&brackets.manager_root, queue, __ATOMIC_RELAXED);
            return &token[1];
        }
    }
    if (depth_here++ == 0) list_here();
    if (__atomic_fetch_add(&brackets.open, 1, __ATOMIC_SEQ_CST) == 0) {
        __atomic_store_n(&brackets.opened_ns, hw_now_ns(), __ATOMIC_RELEASE);
        // Pairs with park(): it raises the flag, then reads the count. Only a
        // watchdog that parks on brackets (probe mode) needs the wake; a fork
        // child's copy of the flag wakes nobody.
        if (__atomic_load_n(&hw_g.probe_main_queue, __ATOMIC_ACQUIRE)
            && __atomic_load_n(&hw_g.watchdog_parked, __ATOMIC_SEQ_CST) && hw_owned()) {
            int saved = errno; // between the program's items, but its errno all the same
            hw_watchdog_wake();
            errno = saved;
        }
    }
    return &token[0];
}

// Called by libdispatch when the worker's run ends, with what begin returned.
static void bracket_end(void *pool) {
    if (pool != &token[0]) return;
    if (depth_here && --depth_here == 0) unlist_here();
    __atomic_fetch_sub(&brackets.open, 1, __ATOMIC_SEQ_CST);
}

void hw_dispatch_brackets_install(void) {
    bool unclaimed = false;
    if (!__atomic_compare_exchange_n(&brackets.claimed, &unclaimed, true, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    void *(**begin)(void) = (void *(**)(void))dlsym(RTLD_DEFAULT, "_dispatch_begin_NSAutoReleasePool");
    void (**end)(void *) = (void (**)(void *))dlsym(RTLD_DEFAULT, "_dispatch_end_NSAutoReleasePool");
    brackets.label_of = (const char *(*)(void *))dlsym(RTLD_DEFAULT, "dispatch_queue_get_label");
    brackets.current_queue = (void *(*)(void))dlsym(RTLD_DEFAULT, "dispatch_get_current_queue");
    if (!begin || !end || !brackets.label_of || !brackets.current_queue) return;
    // Hooks someone else set (an Objective-C runtime) are left alone.
    if (__atomic_load_n(begin, __ATOMIC_ACQUIRE) || __atomic_load_n(end, __ATOMIC_ACQUIRE)) return;
    brackets.begin_hook = begin;
    // The end first: a bracket that got our token always finds our end.
    __atomic_store_n(end, bracket_end, __ATOMIC_RELEASE);
    __atomic_store_n(begin, bracket_begin, __ATOMIC_RELEASE);
    __atomic_store_n(&brackets.installed, true, __ATOMIC_RELEASE);
}

bool hw_dispatch_brackets_idle(void) {
    // Hooks replaced since (a runtime loaded later) freeze the count: not idle.
    return __atomic_load_n(&brackets.installed, __ATOMIC_ACQUIRE)
        && __atomic_load_n(brackets.begin_hook, __ATOMIC_ACQUIRE) == bracket_begin
        && __atomic_load_n(&brackets.open, __ATOMIC_SEQ_CST) == 0;
}

uint64_t hw_dispatch_brackets_opened_ns(void) {
    return __atomic_load_n(&brackets.installed, __ATOMIC_ACQUIRE)
        ? __atomic_load_n(&brackets.opened_ns, __ATOMIC_ACQUIRE) : 0;
}

// SIGNAL-SAFE: a thread-local read.
bool hw_dispatch_bracket_here(void) {
    return depth_here > 0;
}

hw_bracket_answer hw_dispatch_bracket_open_on(pid_t tid) {
    if (!__atomic_load_n(&brackets.installed, __ATOMIC_ACQUIRE)
        || __atomic_load_n(brackets.begin_hook, __ATOMIC_ACQUIRE) != bracket_begin)
        return HW_BRACKET_UNKNOWN;
    for (uint32_t i = 0; i < HW_BRACKET_CELLS; i++)
        if (__atomic_load_n(&listed[i], __ATOMIC_SEQ_CST) == tid) return HW_BRACKET_OPEN;
    return __atomic_load_n(&unlisted, __ATOMIC_SEQ_CST) ? HW_BRACKET_UNKNOWN : HW_BRACKET_NONE;
}
