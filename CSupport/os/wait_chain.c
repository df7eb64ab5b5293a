// Who holds the lock a thread waits for, and the wait-for chain beyond it:
// the one reading shared by the engine (inside the watched process) and
// attach (outside it). The caller says how to reach the target
// (hw_os_target): its memory through a copy that fails instead of faulting
// (process_vm_readv, never a dereference), whether a thread id is a live
// thread that may own a lock, and what a thread is blocked in. A futex word
// names its owner when the lock keeps one:
//  - FUTEX_LOCK_PI (Swift's Synchronization.Mutex on Linux, PI mutexes): the
//    word is the owner's tid, with FUTEX_WAITERS (the top bit) set once a
//    waiter sleeps on it;
//  - FUTEX_WAIT on a glibc pthread_mutex_t (NSLock, pthread_mutex_lock): the
//    word is 1 or 2 and __data.__owner at +8 is the holder's tid (the layout
//    is checked: a user count of at least one, a known mutex kind);
//  - FUTEX_WAIT on a word that is itself a live thread's tid: pthread_join
//    waits on the joined thread's tid field (the reader keeps this one only
//    when the waiter's stack is in a join).
// Nothing here allocates, takes a lock or makes a system call of its own:
// SIGNAL-SAFE when the caller's callbacks are.
#include "hangwatch_os.h"

#include <linux/futex.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define HW_FUTEX_CMD(op) ((op) & 0x7fu)  /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
#define HW_TID_MASK 0x3fffffffu          /* FUTEX_TID_MASK */

// SIGNAL-SAFE when t->read and t->may_own are.
uint32_t hw_os_futex_owner(const hw_os_target *t, uint64_t addr, uint32_t op, pid_t waiter, pid_t *owner,
                           uint32_t *word) {
    *owner = 0;
    *word = 0;
    uint32_t w[5];
    if (addr == 0 || (addr & 3) || !t->read(t->ctx, addr, w, 4)) return HW_OS_OWNER_NONE;
    *word = w[0];
    switch (HW_FUTEX_CMD(op)) {
    case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2: case FUTEX_TRYLOCK_PI: {
        pid_t tid = (pid_t)(w[0] & HW_TID_MASK);
        if (t->may_own(t->ctx, tid, waiter)) { *owner = tid; return HW_OS_OWNER_PI; }
        return HW_OS_OWNER_NONE;
    }
    case FUTEX_WAIT: case FUTEX_WAIT_BITSET: {
        // glibc's pthread_mutex_t: __lock, __count, __owner, __nusers, __kind.
        if (t->read(t->ctx, addr, w, sizeof w)) {
            uint32_t kind = w[4];
            bool robust = kind & 16u;
            bool locked = w[0] == 1 || w[0] == 2 || (robust && (w[0] & HW_TID_MASK) == w[2]);
            if (locked && w[3] >= 1 && (kind & ~0x3f0u) <= 3 && t->may_own(t->ctx, (pid_t)w[2], waiter)) {
                *owner = (pid_t)w[2];
                return HW_OS_OWNER_MUTEX;
            }
        }
        if (t->may_own(t->ctx, (pid_t)w[0], waiter)) { *owner = (pid_t)w[0]; return HW_OS_OWNER_WORD_TID; }
        return HW_OS_OWNER_NONE;
    }
    default:
        return HW_OS_OWNER_NONE;
    }
}

// SIGNAL-SAFE when the callbacks are.
bool hw_os_follow_chain(const hw_os_target *t, pid_t hung, pid_t owner, hw_os_wait_chain *out) {
    pid_t members[HW_OS_CHAIN_MAX + 1] = { hung, owner };
    uint32_t m = 2;
    pid_t at = owner;
    out->n = 0;
    // Link 0 (the hung thread's own) is the caller's: from the owner on.
    while (out->n < HW_OS_CHAIN_MAX - 1) {
        hw_os_wait_link *l = &out->links[out->n];
        *l = (hw_os_wait_link){ .waiter = at };
        uint64_t addr = 0;
        uint32_t op = 0;
        pid_t next = 0;
        if (t->futex_wait(t->ctx, out->n, at, &addr, &op)) {
            l->addr = addr;
            l->op = op;
            l->how = hw_os_futex_owner(t, addr, op, at, &next, &l->word);
            l->owner = next;
        }
        out->n++;
        if (!next) return false;
        for (uint32_t i = 0; i < m; i++)
            if (members[i] == next) return true; // back to a thread of the chain: a cycle
        members[m++] = next;
        at = next;
    }
    return false;
}

// SIGNAL-SAFE.
bool hw_os_chain_worth_writing(const hw_os_wait_chain *now, const hw_os_wait_chain *before) {
    bool same = now->n == before->n;
    for (uint32_t i = 0; same && i < now->n; i++) {
        const hw_os_wait_link *a = &now->links[i], *b = &before->links[i];
        same = a->waiter == b->waiter && a->owner == b->owner && a->addr == b->addr && a->how == b->how;
    }
    if (same) return false;
    // A chain that was only the owner, running or waiting elsewhere, is not worth a record the first time.
    return !(before->n == 0 && now->n == 1 && now->links[0].owner == 0);
}
