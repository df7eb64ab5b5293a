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
