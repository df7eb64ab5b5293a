// `hangwatch dump`: every thread's stack, once. A thread blocked in a syscall
// is read from /proc (sp, pc) plus a copy of its stack, without stopping it;
// a running one is stopped once with ptrace (see ptrace_sample.c). Each
// thread becomes one sample of its own "busy period" (busy_seq 1, announced
// with HANG_START) so the reader keeps and unwinds it like any hang sample.
#include "attach_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// How long dump waits for a thread that did not stop within the sample's
/// 20 ms before it gives up on it. A stop left pending must not meet a second
/// one, so the running threads after it are listed without stacks.
#define HWA_DUMP_RELEASE_NS (500 * 1000000ull)

int hwa_dump(hw_log_header *log, int32_t pid, hwa_dump_thread *out, int max, hwa_dump_stats *stats, uint32_t options) {
    uint64_t t0 = hwa_now_ns();
    memset(stats, 0, sizeof *stats);
    pid_t *tids = malloc(sizeof *tids * (size_t)max);
    uint8_t *stack = malloc(HW_MAX_STACK_COPY);
    if (!tids || !stack) { free(tids); free(stack); errno = ENOMEM; return -1; }
    int n = hwa_list_tasks(pid, tids, max);
    if (n < 0) { free(tids); free(stack); return -1; }
    hwa_maps maps = {0};
    hwa_read_maps(pid, &maps);
    hwa_emit_session(log, pid, t0);
    int written = 0;
    bool holding = false; // a stop we gave up waiting for is still pending
    for (int i = 0; i < n; i++) {
        pid_t tid = tids[i];
        hwa_dump_thread *d = &out[written];
        memset(d, 0, sizeof *d);
        d->tid = tid;
        d->nr = -1;
        if (!hwa_task_name(pid, tid, d->name)) continue; // exited meanwhile
        d->state = hwa_task_state(pid, tid);
        written++;
        hwa_emit_thread(log, tid, tid == pid ? HW_ROLE_MAIN_THREAD : HW_ROLE_LOOP, d->name);
        int fd = hwa_open_task_file(pid, tid, "syscall");
        hwa_probe p = fd >= 0 ? hwa_probe_fd(fd) : (hwa_probe){ .activity = HWA_OTHER, .nr = -1 };
        if (fd >= 0) close(fd);
        uint64_t now = hwa_now_ns();
        hwa_emit_busy(log, HW_REC_HANG_START, tid, 1, now, 0, 0);
        uint64_t regs[HW_REG_COUNT] = {0};
        uint32_t flags = 0, len = 0;
        if (p.activity == HWA_BLOCKED && (!(options & HWA_FLAG_STOP_BLOCKED) || !hwa_stop_safe_while_blocked(&p))) {
            d->nr = (int32_t)p.nr;
            memcpy(d->args, p.args, sizeof d->args);
            len = hwa_copy_stack(pid, &maps, p.sp, stack, &flags);
            regs[HW_REG_RSP] = p.sp;
            regs[HW_REG_RIP] = p.pc;
            regs[HW_REG_RBP] = hwa_guess_frame_pointer(&maps, stack, len, p.sp);
            d->how = HWA_DUMP_PROC;
            hwa_emit_sample(log, tid, 1, now, HW_SRC_BLOCKED_SYSCALL, HW_CALL_SYSCALL_BASE + (int32_t)p.nr, regs,
                            stack, len, p.sp, flags);
        } else if (holding) {
            d->error = EBUSY; // a stop of ours is still pending in another thread: no second one
        } else {
            uint64_t addr = 0;
            hwa_stop_result r = hwa_stop_sample(pid, tid, &maps, stack, &len, &addr, &flags, now);
            if (r.status == -EINPROGRESS) {
                // It did not stop within 20 ms: release it without a stack. The
                // wait is bounded (a thread in uninterruptible sleep may not stop
                // for a long time); one still not stopped is detached by the
                // kernel when hangwatch exits, and no other thread is stopped
                // meanwhile (see HWA_DUMP_RELEASE_NS).
                pid_t left = r.held_tid;
                if (!hwa_finish_stop(pid, &left, now, HWA_DUMP_RELEASE_NS, &r)) {
                    d->error = ETIMEDOUT;
                    stats->abandoned++;
                    holding = true;
                    continue;
                }
                if (r.restarted) stats->restarted++;
                r.status = -ETIMEDOUT;
            }
            if (r.status != 0) { d->error = -r.status; continue; }
            stats->stopped++;
            if (r.stop_ns > stats->stop_ns_max) stats->stop_ns_max = r.stop_ns;
            d->how = HWA_DUMP_STOPPED;
            if (r.restarted) stats->restarted++;
            if (r.syscall_nr >= 0) d->nr = (int32_t)r.syscall_nr;
            hwa_emit_sample(log, tid, 1, now, r.syscall_nr >= 0 ? HW_SRC_BLOCKED_SYSCALL : HW_SRC_SIGNAL,
                            r.syscall_nr >= 0 ? HW_CALL_SYSCALL_BASE + (int32_t)r.syscall_nr : 0, r.regs, stack, len,
                            addr, flags);
        }
    }
    hwa_free_maps(&maps);
    free(tids);
    free(stack);
    stats->capture_ns = hwa_now_ns() - t0;
    return written;
}
