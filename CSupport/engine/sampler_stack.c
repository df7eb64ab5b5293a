// Writing sample records: registers plus the live stack slice, copied from
// the sampled thread's own stack. Used by the SIGPROF handler (the thread
// copies itself) and by the watchdog for blocked threads (whose stacks do not
// move while they block).
#include "engine_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// SIGNAL-SAFE: reserve, memcpy, commit.
void hw_write_sample(hw_slot *slot, uint32_t source, int call, const uint64_t regs[HW_REG_COUNT],
                     uint64_t time_ns) {
    if (!hw_g.log || hw_g.disabled) return;
    uint64_t sp = regs[HW_REG_RSP];
    uint64_t len = 0;
    uint32_t flags = 0;
    if (sp >= slot->stack_lo && sp < slot->stack_hi) {
        len = slot->stack_hi - sp;
        if (len > HW_MAX_STACK_COPY) { len = HW_MAX_STACK_COPY; flags |= HW_SAMPLE_TRUNCATED; }
    }
    hw_rec_sample *rec = (hw_rec_sample *)hw_log_reserve(hw_g.log, (uint32_t)(sizeof *rec + len));
    if (!rec) return;
    rec->tid = slot->tid;
    rec->generation = hw_g.generation;
    rec->busy_seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
    rec->time_ns = time_ns;
    rec->source = source;
    rec->call = call;
    rec->flags = flags;
    rec->stack_len = (uint32_t)len;
    rec->stack_addr = sp;
    memcpy(rec->regs, regs, sizeof rec->regs);
    if (len) __builtin_memcpy(rec->stack, (const void *)(uintptr_t)sp, len);
    hw_log_commit(&rec->h, HW_REC_SAMPLE);
}

void hw_write_repeat(hw_slot *slot, uint64_t time_ns) {
    if (!hw_g.log || hw_g.disabled) return;
    hw_rec_repeat *rec = (hw_rec_repeat *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->busy_seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
    rec->time_ns = time_ns;
    hw_log_commit(&rec->h, HW_REC_REPEAT);
}

void hw_write_note(pid_t tid, uint32_t code, uint64_t value) {
    if (!hw_g.log || hw_g.disabled) return;
    hw_rec_note *rec = (hw_rec_note *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = tid;
    rec->code = code;
    rec->value = value;
    hw_log_commit(&rec->h, HW_REC_NOTE);
}

// Watchdog thread: the target thread sits in an interposed wait, so its
// stack above the saved stack pointer is frozen until the wait returns. The
// generation counter tells us whether it returned while we copied.
void hw_sample_blocked_wrapper(hw_slot *slot) {
    hw_session *ses = &slot->session;
    uint64_t gen = __atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE);
    if (gen & 1) return;
    uint32_t call = __atomic_load_n(&slot->blocked_call, __ATOMIC_ACQUIRE);
    if (!call) return;
    uint64_t now = hw_now_ns();
    if (ses->last_was_blocked && ses->last_blocked_gen == gen) {
        hw_write_repeat(slot, now); // same wait, same stack: no need to copy it again
        return;
    }
    hw_blocked_context ctx = *slot->blocked_ctx;
    // The context lives in the blocked thread's frame: only trust the copy if
    // the wait was still the same one after we took it.
    if (__atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE) != gen) return;
    hw_write_sample(slot, HW_SRC_BLOCKED_WRAPPER, (int)call, ctx.regs, now);
    // If the wait ended during the copy the record may mix two stacks; the
    // reader cannot tell, so we only trust the dedup state when it held still.
    bool stable = __atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE) == gen;
    ses->last_was_blocked = stable;
    ses->last_blocked_gen = gen;
}

// Watchdog thread: blocked in a syscall we did not interpose (read, futex,
// waitpid...). /proc gave us its stack and instruction pointers; the other
// registers are unknown, so the reader's unwind of these may stop early.
void hw_sample_blocked_syscall(hw_slot *slot, long nr, uint64_t sp, uint64_t pc) {
    hw_session *ses = &slot->session;
    uint64_t now = hw_now_ns();
    if (ses->last_was_blocked && ses->last_sys_nr == nr && ses->last_sys_sp == sp
        && ses->last_sys_pc == pc && ses->last_blocked_gen == UINT64_MAX) {
        hw_write_repeat(slot, now);
        return;
    }
    uint64_t regs[HW_REG_COUNT] = {0};
    regs[HW_REG_RSP] = sp;
    regs[HW_REG_RIP] = pc;
    hw_write_sample(slot, HW_SRC_BLOCKED_SYSCALL, HW_CALL_SYSCALL_BASE + (int)nr, regs, now);
    ses->last_was_blocked = true;
    ses->last_blocked_gen = UINT64_MAX; // marks "syscall" dedup state
    ses->last_sys_nr = nr;
    ses->last_sys_sp = sp;
    ses->last_sys_pc = pc;
}
