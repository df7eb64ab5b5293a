// Writing sample records: registers plus the live stack slice. The SIGPROF
// handler copies its own thread's stack (memcpy: it is running on it). The
// watchdog samples blocked threads from outside, and never dereferences
// their memory: it copies with process_vm_readv on its own pid, which
// returns a short count or an error instead of faulting when the stack was
// unmapped under it (a thread that exited, a stack the program freed).
#include "engine_internal.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

typedef enum { COPY_OWN_STACK, COPY_OTHER_STACK } stack_copy;

// SIGNAL-SAFE: two atomic loads.
uint64_t hw_stack_in_use(const hw_slot *slot, uint64_t sp) {
    uint64_t lo = __atomic_load_n(&slot->stack_lo, __ATOMIC_RELAXED);
    uint64_t hi = __atomic_load_n(&slot->stack_hi, __ATOMIC_RELAXED);
    return sp < lo || sp >= hi ? 0 : hi - sp;
}

/// The slice [sp, top) to copy, capped; flags say when it was cut.
/// SIGNAL-SAFE.
static uint64_t slice_len(const hw_slot *slot, uint64_t sp, uint32_t *flags) {
    uint64_t len = hw_stack_in_use(slot, sp);
    if (len > HW_MAX_STACK_COPY) { len = HW_MAX_STACK_COPY; *flags |= HW_SAMPLE_TRUNCATED; }
    return len;
}

/// SIGNAL-SAFE: one raw syscall. A handler that runs on the thread's
/// sigaltstack was interrupted there, outside the stack the slot knows: the
/// slice is [sp, top of the alternate stack), capped. The kernel says
/// whether this thread is on its alternate stack right now (SS_ONSTACK).
static uint64_t altstack_slice_len(uint64_t sp, uint32_t *flags) {
    stack_t ss;
    if (syscall(SYS_sigaltstack, NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK)) return 0;
    uint64_t lo = (uint64_t)(uintptr_t)ss.ss_sp, hi = lo + (uint64_t)ss.ss_size;
    if (sp < lo || sp >= hi) return 0;
    uint64_t len = hi - sp;
    if (len > HW_MAX_STACK_COPY) { len = HW_MAX_STACK_COPY; *flags |= HW_SAMPLE_TRUNCATED; }
    return len;
}

uint64_t hw_stack_slice_len(const hw_slot *slot, uint64_t sp, uint64_t avail, bool avail_at_cap, uint32_t *flags) {
    uint32_t cut = 0;
    uint64_t want = slice_len(slot, sp, &cut);
    if (want == 0) { // not on the stack the slot knows (an alternate stack): keep what came
        if (avail_at_cap) *flags |= HW_SAMPLE_TRUNCATED;
        return avail;
    }
    if (avail < want) { *flags |= HW_SAMPLE_TRUNCATED; return avail; }
    *flags |= cut;
    return want;
}

// SIGNAL-SAFE: reserve and fill in; no copy.
hw_rec_sample *hw_sample_reserve(int32_t tid, uint64_t busy_seq, uint32_t source, int call,
                                 const uint64_t regs[HW_REG_COUNT], uint64_t time_ns, uint64_t stack_len) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return NULL;
    hw_rec_sample *rec = (hw_rec_sample *)hw_log_reserve_kind(hw_g.log, (uint32_t)(sizeof *rec + stack_len),
                                                               HW_REC_SAMPLE);
    if (!rec) return NULL;
    rec->tid = tid;
    rec->generation = hw_g.generation;
    rec->busy_seq = busy_seq;
    rec->time_ns = time_ns;
    rec->source = source;
    rec->call = call;
    rec->stack_addr = regs[HW_REG_RSP];
    memcpy(rec->regs, regs, sizeof rec->regs);
    return rec;
}

// SIGNAL-SAFE. `stack_len` may be less than reserved (a copy that came up short).
void hw_sample_commit(hw_rec_sample *rec, uint32_t flags, uint64_t stack_len) {
    rec->flags = flags;
    rec->stack_len = (uint32_t)stack_len;
    hw_log_commit(&rec->h, HW_REC_SAMPLE);
}

/// SIGNAL-SAFE. The main-queue slot's bounds belong to whichever thread
/// holds the queue now, and the watchdog and that thread's handler rewrite
/// them as the queue passes between threads: a handler copying its own stack
/// with them could read past its stack's end. It copies [sp, its thread
/// descriptor) instead (glibc keeps the descriptor at the top of each
/// thread's stack; the OS main thread never runs the slot's work), capped,
/// and through process_vm_readv, which a wrong guess cannot fault.
static uint64_t own_queue_slice_len(uint64_t sp, uint32_t *flags, stack_copy *how) {
    uint64_t top = (uint64_t)(uintptr_t)pthread_self();
    uint64_t len = top > sp ? top - sp : 0;
    if (len > HW_MAX_STACK_COPY) { len = HW_MAX_STACK_COPY; *flags |= HW_SAMPLE_TRUNCATED; }
    *how = COPY_OTHER_STACK;
    return len;
}

// SIGNAL-SAFE when `how` is COPY_OWN_STACK: reserve, memcpy (process_vm_readv on
// the alternate stack and for the main-queue slot), commit.
static bool write_sample(hw_slot *slot, uint32_t source, int call, const uint64_t regs[HW_REG_COUNT],
                         uint64_t time_ns, stack_copy how) {
    uint64_t sp = regs[HW_REG_RSP];
    uint32_t flags = 0;
    uint64_t len = how == COPY_OWN_STACK && slot->tid == HW_MAIN_QUEUE_ID
        ? own_queue_slice_len(sp, &flags, &how) : slice_len(slot, sp, &flags);
    // On the alternate stack the copy goes through process_vm_readv: the
    // program owns that memory and may have sized it oddly; a fault-safe copy
    // keeps what is mapped.
    if (len == 0 && how == COPY_OWN_STACK) {
        len = altstack_slice_len(sp, &flags);
        if (len) how = COPY_OTHER_STACK;
    }
    uint64_t busy_seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
    hw_rec_sample *rec = hw_sample_reserve(slot->tid, busy_seq, source, call, regs, time_ns, len);
    if (!rec) return false;
    if (len && how == COPY_OWN_STACK) {
        __builtin_memcpy(rec->stack, (const void *)(uintptr_t)sp, len);
    } else if (len) {
        struct iovec local = { rec->stack, len }, remote = { (void *)(uintptr_t)sp, len };
        ssize_t got = process_vm_readv(hw_g.pid, &local, 1, &remote, 1, 0);
        uint64_t copied = got > 0 ? (uint64_t)got : 0;
        if (copied < len) flags |= HW_SAMPLE_TRUNCATED; // the rest was unmapped: keep what is true
        len = copied;
    }
    hw_sample_commit(rec, flags, len);
    return true;
}

// SIGNAL-SAFE.
void hw_write_sample(hw_slot *slot, uint32_t source, int call, const uint64_t regs[HW_REG_COUNT],
                     uint64_t time_ns) {
    (void)write_sample(slot, source, call, regs, time_ns, COPY_OWN_STACK);
}

void hw_write_repeat(hw_slot *slot, uint64_t time_ns, uint32_t extra_ticks) {
    // The sampled period's, not the slot's: a new one may have begun since the poll's look.
    uint64_t seq = slot->session.active ? slot->session.busy_seq : __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
    hw_write_repeat_of(slot, seq, time_ns, extra_ticks);
}

void hw_write_repeat_of(hw_slot *slot, uint64_t busy_seq, uint64_t time_ns, uint32_t extra_ticks) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_repeat *rec = (hw_rec_repeat *)hw_log_reserve_kind(hw_g.log, sizeof *rec, HW_REC_REPEAT);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->busy_seq = busy_seq;
    rec->time_ns = time_ns;
    rec->extra_ticks = extra_ticks;
    hw_log_commit(&rec->h, HW_REC_REPEAT);
}

void hw_write_note(pid_t tid, uint32_t code, uint64_t value) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_note *rec = (hw_rec_note *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = tid;
    rec->code = code;
    rec->value = value;
    hw_log_commit(&rec->h, HW_REC_NOTE);
}

// Watchdog thread: the target sits in an interposed wait, and `regs` are the
// registers its wrapper saved (copied out of the slot under its generation).
// One long wait has one stack: after the first copy, repeats are counted.
enum hw_blocked_write hw_sample_blocked_wrapper(hw_slot *slot, const uint64_t regs[HW_REG_COUNT], uint32_t call,
                                                uint64_t gen) {
    hw_session *ses = &slot->session;
    uint64_t now = hw_now_ns();
    if (ses->last_was_blocked && ses->last_blocked_gen == gen) {
        ses->steady++;
        hw_write_repeat(slot, now, ses->repeat_extra);
        return HW_BLOCKED_REPEAT;
    }
    ses->steady = 0;
    // A sample the log had no room for: nothing for a repeat to stand on.
    if (!write_sample(slot, HW_SRC_BLOCKED_WRAPPER, (int)call, regs, now, COPY_OTHER_STACK)) {
        ses->last_was_blocked = false;
        return HW_BLOCKED_NONE;
    }
    // If the wait ended during the copy the record may mix two stacks; only
    // trust the dedup state when the wait held still throughout.
    ses->last_was_blocked = __atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE) == gen;
    ses->last_blocked_gen = gen;
    return HW_BLOCKED_NEW;
}

// Watchdog thread: blocked in a syscall we did not interpose (read, futex,
// waitpid...). /proc gave us its stack and instruction pointers; the other
// registers are unknown, so the reader's unwind of these may stop early.
enum hw_blocked_write hw_sample_blocked_syscall(hw_slot *slot, long nr, uint64_t sp, uint64_t pc) {
    hw_session *ses = &slot->session;
    uint64_t now = hw_now_ns();
    if (ses->last_was_blocked && ses->last_sys_nr == nr && ses->last_sys_sp == sp
        && ses->last_sys_pc == pc && ses->last_blocked_gen == UINT64_MAX) {
        ses->steady++;
        hw_write_repeat(slot, now, ses->repeat_extra);
        return HW_BLOCKED_REPEAT;
    }
    uint64_t regs[HW_REG_COUNT] = {0};
    regs[HW_REG_RSP] = sp;
    regs[HW_REG_RIP] = pc;
    ses->steady = 0;
    if (!write_sample(slot, HW_SRC_BLOCKED_SYSCALL, HW_CALL_SYSCALL_BASE + (int)nr, regs, now, COPY_OTHER_STACK)) {
        ses->last_was_blocked = false;
        return HW_BLOCKED_NONE;
    }
    ses->last_was_blocked = true;
    ses->last_blocked_gen = UINT64_MAX; // marks "syscall" dedup state
    ses->last_sys_nr = nr;
    ses->last_sys_sp = sp;
    ses->last_sys_pc = pc;
    return HW_BLOCKED_NEW;
}
