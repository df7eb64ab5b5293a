// The slot table: one slot per watched thread (plus the main queue). A slot
// is claimed at a thread's first watched wait and released when the thread
// exits (a pthread key destructor runs on return, pthread_exit and
// cancellation alike; what else an exit means is thread_exit.c's), so
// short-lived watched threads never fill the table and an exited thread is
// never taken for a hang nor signalled.
#include "engine_internal.h"

#include <string.h>

static pthread_key_t exit_key;
static bool exit_key_ready;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static void record_stack_bounds(hw_slot *slot) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        slot->stack_lo = (uint64_t)(uintptr_t)addr;
        slot->stack_hi = (uint64_t)(uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/// A free slot below the high-water mark, or a new one; NULL when full.
static hw_slot *find_free_slot(void) {
    uint32_t n = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (!hw_slot_alive(__atomic_load_n(&hw_g.slots[i].life, __ATOMIC_ACQUIRE))) return &hw_g.slots[i];
    return n < HW_MAX_SLOTS ? &hw_g.slots[n] : NULL;
}

static hw_slot *register_slot(pid_t tid, uint32_t role, bool idle);

hw_slot *hw_slot_register(pid_t tid, uint32_t role) { return register_slot(tid, role, false); }
hw_slot *hw_slot_register_idle(pid_t tid, uint32_t role) { return register_slot(tid, role, true); }

static hw_slot *register_slot(pid_t tid, uint32_t role, bool idle) {
    pthread_mutex_lock(&slots_lock);
    hw_slot *slot = find_free_slot();
    if (slot) {
        // Everything the watched thread owns is reset; `session` and
        // `announced_seq` are the watchdog's and stay as they are.
        uint32_t life = slot->life;
        size_t owned = offsetof(hw_slot, session);
        memset(slot, 0, owned);
        slot->life = life;
        slot->tid = tid;
        slot->os_tid = tid;
        slot->role = role;
        slot->state = HW_STATE_BUSY;
        // A fresh high word per registration: (tid, busy_seq) stays unique
        // even when the kernel hands an exited thread's tid to a new thread.
        slot->busy_seq = (uint64_t)__atomic_add_fetch(&hw_g.registrations, 1, __ATOMIC_RELAXED) << 32;
        // Until the first loop wait the thread is "launching" from process start.
        slot->busy_since_ns = hw_now_ns();
        if (idle) {
            slot->state = HW_STATE_WAITING;
            slot->launched = true;
            slot->idle_since_ns = slot->busy_since_ns;
        }
        if (tid > 0) record_stack_bounds(slot);
        __atomic_store_n(&slot->life, life | 1u, __ATOMIC_RELEASE);
        uint32_t index = (uint32_t)(slot - hw_g.slots);
        if (index >= __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE))
            __atomic_store_n(&hw_g.slot_count, index + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&slots_lock);
    if (slot) hw_log_thread(slot);
    return slot;
}

void hw_slot_release(hw_slot *slot, bool by_watchdog) {
    pthread_mutex_lock(&slots_lock);
    uint32_t life = __atomic_load_n(&slot->life, __ATOMIC_ACQUIRE);
    if (hw_slot_alive(life)) {
        uint64_t now = hw_now_ns();
        if (now < slot->busy_since_ns) now = slot->busy_since_ns; // a TSC stamp a few µs ahead
        // The busy period since the last wait ended with the thread: say so
        // (the reader drops it), so an announced one never stays "in progress".
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_BUSY) {
            uint32_t flags = HW_BUSY_THREAD_EXIT | (slot->launched ? 0u : (uint32_t)HW_BUSY_LAUNCH);
            hw_emit_busy(slot, HW_REC_BUSY_END, slot->busy_since_ns, now, flags);
        }
        if (!by_watchdog) hw_flush_frames(slot);
        __atomic_store_n(&slot->blocked_call, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->state, HW_STATE_WAITING, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->life, life + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&slots_lock);
}

int hw_slots_on_thread_exit(void (*on_exit)(void *slot)) {
    if (exit_key_ready) return 0;
    if (pthread_key_create(&exit_key, on_exit) != 0) return -1;
    exit_key_ready = true;
    return 0;
}

void hw_slot_bind_thread(hw_slot *slot) {
    if (exit_key_ready) pthread_setspecific(exit_key, slot);
}
