// Who holds the lock a hung thread waits for, read from outside. The poller
// already reads the thread's /proc syscall file: blocked in futex, its first
// argument is the address of the word it sleeps on. The words there are
// copied with process_vm_readv (a copy that fails instead of faulting; the
// target is never stopped for it), and read as the agent reads them
// (CSupport/engine/lock_owner.c):
//  - FUTEX_LOCK_PI (Swift's Synchronization.Mutex, PI mutexes): the word
//    holds the owner's tid;
//  - FUTEX_WAIT on a glibc pthread_mutex_t (NSLock, pthread_mutex_lock): the
//    word is 1 or 2 and __data.__owner at +8 is the owner's tid (the layout
//    is checked: a user count of at least one, a known mutex kind);
//  - FUTEX_WAIT on a word that is itself a live thread's tid (pthread_join
//    waits on the joined thread's tid field).
// A candidate must be a live thread of the target other than the waiter.
#include "attach_internal.h"

#include <linux/futex.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define HWA_FUTEX_CMD(op) ((op) & 0x7fu) /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
#define HWA_TID_MASK 0x3fffffffu         /* FUTEX_TID_MASK */

static bool read_target(pid_t pid, uint64_t addr, void *out, size_t len) {
    struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
    return syscall(SYS_process_vm_readv, pid, &local, 1ul, &remote, 1ul, 0ul) == (ssize_t)len;
}

/// Whether `tid` is a live thread of `pid` other than `waiter`.
static bool live_thread(pid_t pid, pid_t tid, pid_t waiter) {
    if (tid <= 0 || tid == waiter) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
    return access(path, F_OK) == 0;
}

uint32_t hwa_lock_identify(pid_t pid, uint64_t addr, uint32_t op, pid_t waiter, pid_t *owner, uint32_t *word) {
    *owner = 0;
    *word = 0;
    uint32_t w[5];
    if (addr == 0 || (addr & 3) || !read_target(pid, addr, w, 4)) return HW_OWNER_NONE;
    *word = w[0];
    switch (HWA_FUTEX_CMD(op)) {
    case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2: case FUTEX_TRYLOCK_PI: {
        pid_t t = (pid_t)(w[0] & HWA_TID_MASK);
        if (live_thread(pid, t, waiter)) { *owner = t; return HW_OWNER_PI; }
        return HW_OWNER_NONE;
    }
    case FUTEX_WAIT: case FUTEX_WAIT_BITSET: {
        // glibc's pthread_mutex_t: __lock, __count, __owner, __nusers, __kind.
        if (read_target(pid, addr, w, sizeof w)) {
            uint32_t kind = w[4];
            bool robust = kind & 16u;
            bool locked = w[0] == 1 || w[0] == 2 || (robust && (w[0] & HWA_TID_MASK) == w[2]);
            if (locked && w[3] >= 1 && (kind & ~0x3f0u) <= 3 && live_thread(pid, (pid_t)w[2], waiter)) {
                *owner = (pid_t)w[2];
                return HW_OWNER_MUTEX;
            }
        }
        if (live_thread(pid, (pid_t)w[0], waiter)) { *owner = (pid_t)w[0]; return HW_OWNER_WORD_TID; }
        return HW_OWNER_NONE;
    }
    default:
        return HW_OWNER_NONE;
    }
}
