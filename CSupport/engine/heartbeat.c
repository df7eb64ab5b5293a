// The heartbeat: the watched loop thread marks when it starts and stops
// waiting for events. This runs on every loop iteration, so it is a handful
// of loads and stores plus two clock stamps (tsc_clock.c); the watchdog does the rest.
#include "engine_internal.h"

#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { TLS_UNKNOWN = 0, TLS_WATCHED = 1, TLS_IGNORED = 2, TLS_NEVER = 3 };

// initial-exec: a TLS access that never allocates, so the SIGPROF handler may use it.
static __thread hw_slot *tls_slot __attribute__((tls_model("initial-exec")));
static __thread uint8_t tls_state __attribute__((tls_model("initial-exec")));
// Set by the vfork wrapper in the parent: a vfork child runs on the parent's
// memory and thread pointer, so it sees the parent's TLS and slot. Until the
// parent's own next wait clears it, a wait on this TLS asks the kernel who
// is waiting, and a child's waits leave the slot alone.
static __thread pid_t tls_vfork_parent __attribute__((tls_model("initial-exec")));

static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

void hw_tls_never_watch(void) {
    tls_state = TLS_NEVER;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_slot = NULL;
}

hw_slot *hw_register_current_thread(uint32_t role) {
    if (tls_state == TLS_WATCHED) return tls_slot;
    if (tls_state == TLS_NEVER || !hw_owned()) return NULL;
    hw_slot *slot = hw_slot_register(current_tid(), role);
    tls_slot = slot;
    tls_state = slot ? TLS_WATCHED : TLS_IGNORED;
    if (slot) hw_slot_bind_thread(slot);
    return slot;
}

// Threads are often named just after they start (by their creator, or by the
// thread itself), so an unwatched thread's name is looked at again: on each of
// its first waits, then every 64th.
#define HW_RECHECK_FIRST 32
#define HW_RECHECK_EVERY 64
static __thread uint32_t tls_waits_ignored __attribute__((tls_model("initial-exec")));

/// In a vfork child: false. In the parent back from vfork: clears the mark.
static bool not_a_vfork_child(void) {
    if (current_tid() != tls_vfork_parent) return false;
    tls_vfork_parent = 0;
    return true;
}

void hw_heartbeat_vfork_begin(void) { tls_vfork_parent = current_tid(); }

// Set while the thread decides whether it is watched (and registers, which
// takes the slot table's lock and allocates). A wait made meanwhile can only
// come from a signal handler that interrupted the decision: it passes through,
// so the handler never takes that lock again on the same thread.
static __thread uint8_t tls_deciding __attribute__((tls_model("initial-exec")));

static hw_slot *decide_current_slot(void);

hw_slot *hw_current_slot(void) {
    if (__builtin_expect(tls_vfork_parent != 0, 0) && !not_a_vfork_child()) return NULL;
    if (__builtin_expect(tls_state == TLS_WATCHED, 1)) return tls_slot;
    if (tls_state == TLS_NEVER || tls_deciding || !hw_g.running || hw_g.disabled || !hw_owned()) return NULL;
    tls_deciding = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hw_slot *slot = decide_current_slot();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_deciding = 0;
    return slot;
}

static hw_slot *decide_current_slot(void) {
    if (tls_state == TLS_IGNORED) {
        uint32_t n = ++tls_waits_ignored;
        if (!hw_g.patterns[0] || (n > HW_RECHECK_FIRST && n % HW_RECHECK_EVERY != 0)) return NULL;
    }
    // First wait on this thread: decide once whether it is watched.
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    pid_t tid = current_tid();
    if (tid == __atomic_load_n(&hw_g.watchdog_tid, __ATOMIC_RELAXED)) { hw_tls_never_watch(); return NULL; }
    uint32_t role;
    if (tid == hw_g.pid && hw_thread_name_matches(hw_g.patterns, "main")) role = HW_ROLE_MAIN_THREAD;
    else if (tid != hw_g.pid && hw_thread_name_matches(hw_g.patterns, name)) role = HW_ROLE_LOOP;
    else { tls_state = TLS_IGNORED; return NULL; }
    return hw_register_current_thread(role);
}

void hw_heartbeat_frames_elsewhere(hw_slot *slot) { slot->frames_elsewhere = true; }

void hw_flush_own_frames(void) {
    // Only the calling thread's buffer: another loop thread may be adding to its
    // own right now. Those write theirs as they exit (hw_slot_release).
    if (tls_state == TLS_WATCHED && tls_slot) hw_flush_frames(tls_slot);
}

void hw_own_loop_waits(void) {
    // What the calling thread does from now on is hangwatch's (the library's
    // exit work: telling the last hangs, waiting for the callback), not the
    // program's: its loop's busy period, if one runs, ends here.
    // A launch parked outside any loop (watchdog.c) stays open: it ends
    // where it parked, not at the exit.
    if (tls_state == TLS_WATCHED && tls_slot &&
        __atomic_load_n(&tls_slot->state, __ATOMIC_ACQUIRE) == HW_STATE_BUSY &&
        __atomic_load_n(&tls_slot->park.busy_seq, __ATOMIC_RELAXED) != tls_slot->busy_seq)
        hw_heartbeat_wait_begin(tls_slot);
}

hw_slot *hw_register_marked_loop(void) {
    // Without a list the program's own marks are the only say there is: watch it.
    // With one, the list decides, by the thread's name now (name it before marking).
    hw_slot *slot = hw_g.patterns[0] ? hw_current_slot() : hw_register_current_thread(HW_ROLE_LOOP);
    if (slot) __atomic_store_n(&slot->program_marks, true, __ATOMIC_RELAXED);
    return slot;
}

/// Make `slot` the calling thread's slot for a while (main-queue work on a
/// dispatch worker); returns what to restore afterwards.
hw_tls_saved hw_tls_enter(hw_slot *slot) {
    hw_tls_saved saved = { tls_slot, tls_state };
    tls_slot = slot;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); // the handler must never see WATCHED with a stale slot
    tls_state = TLS_WATCHED;
    return saved;
}

void hw_tls_leave(hw_tls_saved saved) {
    tls_state = TLS_UNKNOWN;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_slot = saved.slot;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    tls_state = saved.state;
}

// SIGNAL-SAFE. Exposed for the signal handler, which must not take the slow path above.
hw_slot *hw_tls_slot_fast(void);
hw_slot *hw_tls_slot_fast(void) { return tls_state == TLS_WATCHED ? tls_slot : NULL; }

uint64_t hw_tls_stack_top(void) {
    hw_slot *slot = hw_tls_slot_fast();
    return slot ? __atomic_load_n(&slot->stack_hi, __ATOMIC_RELAXED) : 0;
}

void hw_heartbeat_wait_begin(hw_slot *slot) { hw_heartbeat_wait_begin_at(slot, hw_fast_now_ns()); }
void hw_heartbeat_wait_end(hw_slot *slot) { hw_heartbeat_wait_end_at(slot, hw_fast_now_ns()); }

void hw_heartbeat_wait_begin_at(hw_slot *slot, uint64_t now) {
    // The start may come from another clock (the watchdog's probe start, a
    // TSC stamp taken under an older calibration): a few µs ahead is no busy time.
    if (now < slot->busy_since_ns) now = slot->busy_since_ns;
    uint64_t busy = now - slot->busy_since_ns;
    if (!slot->launched) {
        // The launch period is reported on its own, never as a hang.
        hw_emit_busy(slot, HW_REC_BUSY_END, slot->busy_since_ns, now, HW_BUSY_LAUNCH);
        slot->launched = true;
    } else {
        // A period the watchdog announced as a hang (by its own clock) is ended
        // even when this stamp makes it a few µs short: never "in progress" for ever.
        if (busy >= hw_g.config.hang_ns) {
            hw_emit_busy(slot, HW_REC_BUSY_END, slot->busy_since_ns, now, 0);
        } else if (__atomic_load_n(&slot->announced_seq, __ATOMIC_ACQUIRE) == slot->busy_seq) {
            hw_emit_busy(slot, HW_REC_BUSY_END, slot->busy_since_ns, slot->busy_since_ns + hw_g.config.hang_ns, 0);
        }
        // Frames are the owning thread's alone. The main queue's slot in probe
        // mode (the library's dispatchMain()) is ended by the worker that ran
        // the probe or by the watchdog, two threads: it records none (its
        // "frames" would only be the stalls, with estimated starts anyway).
        // A pool worker's jobs are no frames either.
        bool shared_slot = slot->role == HW_ROLE_MAIN_QUEUE && __atomic_load_n(&hw_g.probe_main_queue, __ATOMIC_ACQUIRE);
        if (hw_g.config.frame_ns && !slot->frames_elsewhere && !shared_slot && slot->role != HW_ROLE_JOB) {
            uint32_t i = slot->frame_count;
            if (i >= HW_FRAME_BATCH) { // never past the buffer, whatever went wrong
                hw_flush_frames(slot);
                i = 0;
            }
            slot->frame_start[i] = slot->busy_since_ns;
            slot->frame_us[i] = busy / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(busy / 1000);
            slot->frame_count = i + 1;
            // Flush when full, or when the oldest frame is 250 ms old, so a
            // killed process loses at most a quarter second of frames.
            if (slot->frame_count == HW_FRAME_BATCH || now - slot->frame_start[0] > 250000000ull)
                hw_flush_frames(slot);
        }
    }
    __atomic_store_n(&slot->idle_since_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, HW_STATE_WAITING, __ATOMIC_RELEASE);
}

void hw_heartbeat_wait_end_at(hw_slot *slot, uint64_t now) { hw_heartbeat_wait_end_inline(slot, now); }

bool hw_is_loop_wait(hw_slot *slot, uintptr_t site, enum hw_wait_kind kind, bool has_fds) {
    // A job, and main-queue work, run inside a dispatch worker, never inside
    // a loop of their own: even an epoll wait in them is the work blocking.
    if (slot->role == HW_ROLE_JOB || slot->role == HW_ROLE_MAIN_QUEUE) return false;
    switch (kind) {
    case HW_WAIT_EPOLL:
        // Waiting on an epoll set is waiting on an event loop, nested ones
        // included. On a loop thread the list names (an epoll server's), the
        // first one also claims the loop's site: a poll or sleep from any other
        // site is then a callback blocking, never the loop's wait. The main
        // thread's loop is its run loop's ppoll, whatever it waited on before.
        if (slot->role == HW_ROLE_LOOP && slot->loop_site_count == 0) slot->loop_sites[slot->loop_site_count++] = site;
        return true;
    case HW_WAIT_SLEEP:
        // A sleep is the idle wait only of a frame-deadline loop.
        if (hw_g.config.frame_ns == 0) return false;
        break;
    case HW_WAIT_FDSET:
        if (!has_fds) return false; // poll(NULL, 0, t) is a sleep
        break;
    }
    for (uint32_t i = 0; i < slot->loop_site_count; i++)
        if (slot->loop_sites[i] == site) return true;
    // The first such wait on a thread is its loop's wait (CFRunLoop's ppoll,
    // a C loop's poll); later ones from other call sites are callbacks blocking.
    if (slot->loop_site_count == 0) {
        slot->loop_sites[slot->loop_site_count++] = site;
        return true;
    }
    return false;
}

void hw_blocked_begin(hw_slot *slot, const hw_blocked_context *ctx, int call) {
    // Seqlock-style publication: odd generation while the fields change. The
    // registers are copied into the slot, which outlives any frame.
    __atomic_store_n(&slot->blocked_gen, slot->blocked_gen + 1, __ATOMIC_RELEASE);
    for (int i = 0; i < HW_REG_COUNT; i++) __atomic_store_n(&slot->blocked_regs[i], ctx->regs[i], __ATOMIC_RELAXED);
    __atomic_store_n(&slot->blocked_call, (uint32_t)call, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->blocked_gen, slot->blocked_gen + 1, __ATOMIC_RELEASE);
}

void hw_blocked_end(hw_slot *slot) {
    __atomic_store_n(&slot->blocked_gen, slot->blocked_gen + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->blocked_call, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->blocked_gen, slot->blocked_gen + 1, __ATOMIC_RELEASE);
}

// SIGNAL-SAFE.
uint32_t hw_signal_hits(const hw_slot *slot) {
    return __atomic_load_n(&slot->signal_hits, __ATOMIC_ACQUIRE);
}

// The main thread is registered now, from the constructor, so that no
// registration (which allocates) ever happens inside a signal handler.
static int heartbeat_start(void) {
    if (getpid() == (pid_t)syscall(SYS_gettid)) (void)hw_current_slot();
    return 0;
}

// Frames still buffered: at exit the loop threads no longer write.
static void heartbeat_stop(void) {
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++)
        if (hw_slot_alive(__atomic_load_n(&hw_g.slots[i].life, __ATOMIC_ACQUIRE))) hw_flush_frames(&hw_g.slots[i]);
}

const hw_subsystem hw_heartbeat_subsystem = { .name = "heartbeat", .start = heartbeat_start, .stop = heartbeat_stop };
