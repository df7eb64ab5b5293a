// Who holds the lock a hung thread waits for, read from outside, and the
// wait-for chain beyond it. The poller already reads the thread's /proc
// syscall file: blocked in futex, its first argument is the address of the
// word it sleeps on. The words there are copied with process_vm_readv (a
// copy that fails instead of faulting; the target is never stopped for it),
// and read as the agent reads them: CSupport/os/wait_chain.c, shared with
// the engine, says which locks keep their owner. A candidate must be a live
// thread of the target other than the waiter.
#include "attach_internal.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/// The target, and the poller's way to what a chain's thread waits in.
typedef struct target_ctx {
    pid_t pid;
    bool (*futex_wait)(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op);
    void *ctx;
} target_ctx;

static bool read_target(void *ctx, uint64_t addr, void *out, size_t len) {
    const target_ctx *c = ctx;
    struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
    return syscall(SYS_process_vm_readv, c->pid, &local, 1ul, &remote, 1ul, 0ul) == (ssize_t)len;
}

/// Whether `tid` is a live thread of the target other than `waiter`.
static bool live_thread(void *ctx, pid_t tid, pid_t waiter) {
    const target_ctx *c = ctx;
    if (tid <= 0 || tid == waiter) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d", (int)c->pid, (int)tid);
    return access(path, F_OK) == 0;
}

static bool chain_futex_wait(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op) {
    const target_ctx *c = ctx;
    return c->futex_wait(c->ctx, index, tid, addr, op);
}

// The numbers of hw_owner_how (a static assertion in engine/lock_owner.c).
uint32_t hwa_lock_identify(pid_t pid, uint64_t addr, uint32_t op, pid_t waiter, pid_t *owner, uint32_t *word) {
    target_ctx c = { .pid = pid };
    hw_os_target target = { .read = read_target, .may_own = live_thread, .ctx = &c };
    return hw_os_futex_owner(&target, addr, op, waiter, owner, word);
}

bool hwa_lock_chain(pid_t pid, pid_t hung, pid_t owner,
                    bool (*futex_wait)(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op), void *ctx,
                    hw_os_wait_chain *out) {
    target_ctx c = { .pid = pid, .futex_wait = futex_wait, .ctx = ctx };
    hw_os_target target = { .read = read_target, .may_own = live_thread, .futex_wait = chain_futex_wait, .ctx = &c };
    return hw_os_follow_chain(&target, hung, owner, out);
}
