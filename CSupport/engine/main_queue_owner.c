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
// probe falls back to asking the running threads. So that a stall before
// the first probe has run is not left to that fallback, the engine's start
// (before dispatchMain(), in most programs) takes the one word holding the
// main thread's id as a first guess, which the first probe checks, and replaces if wrong, rather than turning
// anything off.
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
static bool owner_guessed;    // the offset is the start's guess, not checked by a probe yet
static __thread pid_t probe_tid __attribute__((tls_model("initial-exec")));

static pid_t owner_in(uint64_t word) {
    return (pid_t)((uint32_t)word & HW_OWNER_TID_MASK);
}

static uint64_t word_at(void *queue, uint32_t offset) {
    return __atomic_load_n((uint64_t *)(void *)((char *)queue + offset), __ATOMIC_RELAXED);
}

/// The offset of the one header word that holds `tid`; HW_OWNER_OFF when
/// none does, or more than one (not sure).
static uint32_t word_holding(void *queue, pid_t tid) {
    uint32_t found = HW_OWNER_OFF;
    for (uint32_t w = HW_OWNER_FIRST_WORD; w <= HW_OWNER_LAST_WORD; w++) {
        if (owner_in(word_at(queue, w * 8u)) != tid) continue;
        if (found != HW_OWNER_OFF) return HW_OWNER_OFF; // two candidates
        found = w * 8u;
    }
    return found;
}

void hw_main_queue_owner_guess(void *queue, pid_t main_tid) {
    if (!queue || __atomic_load_n(&owner_offset, __ATOMIC_ACQUIRE) != HW_OWNER_LEARNING) return;
    uint32_t found = word_holding(queue, main_tid);
    if (found == HW_OWNER_OFF) return; // dispatchMain() already ran, or not sure: the first probe learns
    owner_guessed = true;
    __atomic_store_n(&owner_offset, found, __ATOMIC_RELEASE);
}

void hw_main_queue_owner_learn(void *queue) {
    uint32_t offset = __atomic_load_n(&owner_offset, __ATOMIC_ACQUIRE);
    if (offset == HW_OWNER_OFF) return;
    if (!probe_tid) probe_tid = (pid_t)syscall(SYS_gettid);
    bool guessed = owner_guessed;
    owner_guessed = false; // probes run one at a time: only the first sees the guess
    if (offset != HW_OWNER_LEARNING && owner_in(word_at(queue, offset)) == probe_tid) return;
    // Not learnt yet, or the start's guess was wrong: look. Learnt and now wrong: off for good.
    uint32_t learnt = offset == HW_OWNER_LEARNING || guessed ? word_holding(queue, probe_tid) : HW_OWNER_OFF;
    __atomic_store_n(&owner_offset, learnt, __ATOMIC_RELEASE);
}

// SIGNAL-SAFE: atomic loads only.
pid_t hw_main_queue_owner(void *queue) {
    uint32_t offset = __atomic_load_n(&owner_offset, __ATOMIC_ACQUIRE);
    if (offset == HW_OWNER_LEARNING || offset == HW_OWNER_OFF) return -1;
    return owner_in(word_at(queue, offset));
}
