// Which thread holds the main dispatch queue, for the library's probe
// (main_queue.c), without a signal.
//
// libdispatch keeps the thread that drains a queue, or that holds it for a
// DispatchQueue.main.sync, in the queue's state word: the low 32 bits are
// its drain lock, whose owner is the thread id under FUTEX_TID_MASK on
// Linux, 0 while nobody holds it (after dispatchMain(): before it, the
// queue is bound to the main thread, whose id it always holds; the probe
// runs only after). The word's offset inside _dispatch_main_q
// is libdispatch's own business, so it is learnt, not assumed: a probe runs
// while its worker holds the drain lock, so its first run looks for the one
// word of the queue's header that holds its own thread id, and every later
// run checks that word still does. Any miss turns this off for good, and the
// probe falls back to asking the running threads.
//
// The watchdog then reads that word with one atomic load. The main queue is
// a static object of libdispatch (never freed, never a thread's stack or
// heap), and libdispatch itself only ever updates the word atomically.
#include "engine_internal.h"

#include <sys/syscall.h>
#include <unistd.h>

#define HW_OWNER_LEARNING 0u
#define HW_OWNER_OFF UINT32_MAX
// The words searched: past the object header's vtable and reference counts.
#define HW_OWNER_FIRST_WORD 2u
#define HW_OWNER_LAST_WORD 15u // the queue object is 128 bytes (libdispatch 6.x)
#define HW_OWNER_TID_MASK 0x3fffffffu

static uint32_t owner_offset; // atomic: bytes into the queue; LEARNING or OFF
static __thread pid_t probe_tid __attribute__((tls_model("initial-exec")));

static pid_t owner_in(uint64_t word) {
    return (pid_t)((uint32_t)word & HW_OWNER_TID_MASK);
}

static uint64_t word_at(void *queue, uint32_t offset) {
    return __atomic_load_n((uint64_t *)(void *)((char *)queue + offset), __ATOMIC_RELAXED);
}

void hw_main_queue_owner_learn(void *queue) {
    uint32_t offset = __atomic_load_n(&owner_offset, __ATOMIC_ACQUIRE);
    if (offset == HW_OWNER_OFF) return;
    if (!probe_tid) probe_tid = (pid_t)syscall(SYS_gettid);
    if (offset != HW_OWNER_LEARNING) {
        if (owner_in(word_at(queue, offset)) != probe_tid)
            __atomic_store_n(&owner_offset, HW_OWNER_OFF, __ATOMIC_RELEASE);
        return;
    }
    uint32_t found = HW_OWNER_OFF;
    for (uint32_t w = HW_OWNER_FIRST_WORD; w <= HW_OWNER_LAST_WORD; w++) {
        if (owner_in(word_at(queue, w * 8u)) != probe_tid) continue;
        if (found != HW_OWNER_OFF) { found = HW_OWNER_OFF; break; } // two candidates: not sure
        found = w * 8u;
    }
    __atomic_store_n(&owner_offset, found, __ATOMIC_RELEASE);
}

// SIGNAL-SAFE: atomic loads only.
pid_t hw_main_queue_owner(void *queue) {
    uint32_t offset = __atomic_load_n(&owner_offset, __ATOMIC_ACQUIRE);
    if (offset == HW_OWNER_LEARNING || offset == HW_OWNER_OFF) return 0;
    return owner_in(word_at(queue, offset));
}
