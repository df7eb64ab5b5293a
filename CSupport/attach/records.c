// Sample-log records, written exactly as the in-process engine writes them
// (hangwatch_log.h), so that CaptureCollector reads an attach like a run.
// Slot ids are OS thread ids; there is one image generation (1).
#include "attach_internal.h"

#include <string.h>

void hwa_emit_session(hw_log_header *log, pid_t pid, uint64_t now) {
    hw_rec_session *rec = (hw_rec_session *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return;
    rec->generation = 1;
    rec->pid = pid;
    rec->start_ns = now;
    // owner_pid stays 0: the writer is this process (the poller), whose threads
    // the reader's liveness check must look at, not the target's.
    __atomic_store_n(&log->generation, 1, __ATOMIC_RELEASE);
    hw_log_commit(&rec->h, HW_REC_SESSION);
}

void hwa_emit_thread(hw_log_header *log, pid_t tid, uint32_t role, const char name[16]) {
    hw_rec_thread *rec = (hw_rec_thread *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return;
    rec->tid = tid;
    rec->role = role;
    memcpy(rec->name, name, sizeof rec->name);
    rec->name[15] = 0;
    rec->os_tid = tid;
    rec->reserved = 0;
    hw_log_commit(&rec->h, HW_REC_THREAD);
}

void hwa_emit_busy(hw_log_header *log, uint32_t type, pid_t tid, uint64_t seq, uint64_t start, uint64_t end,
                   uint32_t flags) {
    hw_rec_busy *rec = (hw_rec_busy *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return;
    rec->tid = tid;
    rec->flags = flags;
    rec->busy_seq = seq;
    rec->start_ns = start;
    rec->end_ns = end;
    rec->os_tid = tid;
    rec->pool_queue = 0;
    hw_log_commit(&rec->h, type);
}

static void emit_sample(hw_log_header *log, uint32_t kind, pid_t tid, uint64_t seq, uint64_t now, uint32_t source,
                        int32_t call, const uint64_t regs[HW_REG_COUNT], const uint8_t *stack, uint32_t stack_len,
                        uint64_t stack_addr, uint32_t flags) {
    // Reserved as a sample whatever its kind: an owner's samples leave the headroom to control records too.
    hw_rec_sample *rec = (hw_rec_sample *)hw_log_reserve_kind(log, (uint32_t)(sizeof *rec + stack_len), HW_REC_SAMPLE);
    if (!rec) return;
    rec->tid = tid;
    rec->generation = 1;
    rec->busy_seq = seq;
    rec->time_ns = now;
    rec->source = source;
    rec->call = call;
    rec->flags = flags;
    rec->stack_len = stack_len;
    rec->stack_addr = stack_addr;
    memcpy(rec->regs, regs, sizeof rec->regs);
    if (stack_len) memcpy(rec->stack, stack, stack_len);
    hw_log_commit(&rec->h, kind);
}

void hwa_emit_sample(hw_log_header *log, pid_t tid, uint64_t seq, uint64_t now, uint32_t source, int32_t call,
                     const uint64_t regs[HW_REG_COUNT], const uint8_t *stack, uint32_t stack_len, uint64_t stack_addr,
                     uint32_t flags) {
    emit_sample(log, HW_REC_SAMPLE, tid, seq, now, source, call, regs, stack, stack_len, stack_addr, flags);
}

void hwa_emit_owner_sample(hw_log_header *log, pid_t owner, uint64_t seq, uint64_t now, uint32_t source, int32_t call,
                           const uint64_t regs[HW_REG_COUNT], const uint8_t *stack, uint32_t stack_len,
                           uint64_t stack_addr, uint32_t flags) {
    emit_sample(log, HW_REC_OWNER_SAMPLE, owner, seq, now, source, call, regs, stack, stack_len, stack_addr, flags);
}

static void emit_wait(hw_log_header *log, uint32_t kind, pid_t hung, uint64_t seq, uint64_t now,
                      const hw_os_wait_link *l, const char owner_name[16]) {
    hw_rec_lock_owner *rec = (hw_rec_lock_owner *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return;
    rec->tid = hung;
    rec->os_tid = l->waiter;
    rec->busy_seq = seq;
    rec->time_ns = now;
    rec->futex_addr = l->addr;
    rec->futex_op = l->op;
    rec->how = l->how;
    rec->owner_tid = l->owner;
    rec->word = l->word;
    memcpy(rec->owner_name, owner_name, sizeof rec->owner_name);
    rec->owner_name[15] = 0;
    hw_log_commit(&rec->h, kind);
}

void hwa_emit_lock_owner(hw_log_header *log, pid_t waiter, uint64_t seq, uint64_t now, uint64_t addr, uint32_t op,
                         uint32_t how, pid_t owner, uint32_t word, const char owner_name[16]) {
    hw_os_wait_link own = { .waiter = waiter, .owner = owner, .addr = addr, .op = op, .how = how, .word = word };
    emit_wait(log, HW_REC_LOCK_OWNER, waiter, seq, now, &own, owner_name);
}

void hwa_emit_wait_link(hw_log_header *log, pid_t hung, uint64_t seq, uint64_t now, const hw_os_wait_link *link,
                        const char owner_name[16]) {
    emit_wait(log, HW_REC_WAIT_LINK, hung, seq, now, link, owner_name);
}

void hwa_emit_repeat(hw_log_header *log, pid_t tid, uint64_t seq, uint64_t now) {
    hw_rec_repeat *rec = (hw_rec_repeat *)hw_log_reserve_kind(log, sizeof *rec, HW_REC_REPEAT);
    if (!rec) return;
    rec->tid = tid;
    rec->extra_ticks = 0; // one repeat per tick
    rec->busy_seq = seq;
    rec->time_ns = now;
    hw_log_commit(&rec->h, HW_REC_REPEAT);
}

void hwa_emit_exit(hw_log_header *log, uint64_t now) {
    hw_rec_exit *rec = (hw_rec_exit *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return;
    rec->time_ns = now;
    hw_log_commit(&rec->h, HW_REC_EXIT);
}
