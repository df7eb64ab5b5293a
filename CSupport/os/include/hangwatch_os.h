// The OS layer under the engine (inside the watched process) and attach
// (outside it): every /proc file either of them reads is parsed here, once,
// plus the monotonic clock.
//
// Callers open the files (where a descriptor may live is their policy: the
// engine keeps its own away from the program's numbers) and hand the
// descriptor in; each read starts at offset 0 (pread), so one descriptor
// serves many reads. Nothing here allocates, takes a lock or calls a
// function the agent wraps. Functions marked SIGNAL-SAFE may be called from
// a signal handler; the others run on the watchdog or the attach poller
// (sscanf and strtoull are not on POSIX's async-signal-safe list).
#ifndef HANGWATCH_OS_H
#define HANGWATCH_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- clock (clock.c) ---------------------------------------------------------
/// SIGNAL-SAFE. CLOCK_MONOTONIC in nanoseconds (a vDSO call).
uint64_t hw_os_monotonic_ns(void);

// ---- /proc/PID/task/TID/syscall (proc_syscall.c) -------------------------------
/// What a thread's syscall file says it is doing.
typedef enum hw_os_activity {
    HW_OS_UNKNOWN = 0,      // unreadable (not gone) or not understood
    HW_OS_RUNNING,          // "running"
    HW_OS_IN_SYSCALL,       // "nr args... sp pc": blocked in system call nr
    HW_OS_OUTSIDE_SYSCALL,  // "-1 sp pc": stopped or faulting, not in a system call
    HW_OS_GONE,             // the thread no longer exists (ESRCH, ENOENT)
} hw_os_activity;

typedef struct hw_os_syscall {
    hw_os_activity activity;
    long nr;            // HW_OS_IN_SYSCALL; else -1
    uint64_t args[6];   // HW_OS_IN_SYSCALL
    uint64_t sp, pc;    // HW_OS_IN_SYSCALL and HW_OS_OUTSIDE_SYSCALL
} hw_os_syscall;

/// Reads and parses the syscall file open as `fd`.
hw_os_syscall hw_os_read_syscall(int fd);

// ---- /proc/PID/task/TID/stat (proc_stat.c) -------------------------------------
typedef struct hw_os_stat {
    char state;         // the state letter (R, S, D, T, t, Z, X...)
    int num_threads;    // the process's thread count (field 20)
} hw_os_stat;

/// Reads and parses the stat file open as `fd`: 1 when parsed, 0 when read
/// but not understood, -1 when the read failed (errno says why).
int hw_os_read_stat(int fd, hw_os_stat *out);

// ---- /proc/PID/task/TID/schedstat (proc_schedstat.c) ----------------------------
/// Reads the schedstat file open as `fd`: the nanoseconds the thread ran and
/// waited runnable on a run queue. False when unreadable.
bool hw_os_read_schedstat(int fd, uint64_t *run_ns, uint64_t *wait_ns);

// ---- /proc/PID/task/TID/status (proc_status.c) ----------------------------------
/// Reads the status file open as `fd` into `buf` (NUL-terminated); its length, or -1.
ssize_t hw_os_read_status(int fd, char *buf, size_t len);
/// The number after `field` (say "SigBlk:") in a status text, in `base`.
bool hw_os_status_field(const char *status, const char *field, int base, unsigned long long *value);

// ---- /proc/PID/maps (proc_maps.c) ----------------------------------------------
/// One line of a maps file. `path` holds the first HW_OS_MAPS_PATH_KEPT bytes
/// of the path (not NUL-terminated); `path_len` is its whole length.
#define HW_OS_MAPS_PATH_KEPT 8
typedef struct hw_os_mapping {
    uint64_t start, end;
    char perms[4];      // "rwxp" as listed
    char path[HW_OS_MAPS_PATH_KEPT];
    size_t path_len;
} hw_os_mapping;

/// Calls `each` for every line of the maps file open as `fd`, in the
/// kernel's (address) order, until it returns false. Reads as a stream
/// through a buffer on the stack: lines of any length, no allocation.
void hw_os_scan_maps(int fd, bool (*each)(const hw_os_mapping *m, void *ctx), void *ctx);

// ---- /proc/PID/task (proc_tasks.c) ---------------------------------------------
/// Calls `each` for every thread id listed in the task directory open as
/// `dir_fd` (raw getdents64: no allocation), until it returns false.
void hw_os_scan_tasks(int dir_fd, bool (*each)(pid_t tid, void *ctx), void *ctx);

// ---- lock owners and wait-for chains (wait_chain.c) -----------------------------
/// How a lock's owner was known: the numbers of hw_owner_how (hangwatch_log.h).
enum { HW_OS_OWNER_NONE = 0, HW_OS_OWNER_PI = 1, HW_OS_OWNER_MUTEX = 2, HW_OS_OWNER_WORD_TID = 3 };

/// The caller's way into the watched process (the engine's from inside, attach's from outside).
typedef struct hw_os_target {
    /// Copies `len` bytes at `addr` (process_vm_readv: never a dereference); false when not all could be.
    bool (*read)(void *ctx, uint64_t addr, void *out, size_t len);
    /// Whether `tid` is a live thread of the process that may own the lock `waiter` waits on.
    bool (*may_own)(void *ctx, pid_t tid, pid_t waiter);
    /// Chain walks only: whether `tid`, the waiter of link `index`, is blocked in futex now, and
    /// on which word with which op. The caller may sample the thread here.
    bool (*futex_wait)(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op);
    void *ctx;
} hw_os_target;

/// The owner of the futex at `addr` that `waiter` waits on with `op`: how it
/// was known (HW_OS_OWNER_*), the owner in *owner (0: none) and the word as read.
uint32_t hw_os_futex_owner(const hw_os_target *t, uint64_t addr, uint32_t op, pid_t waiter, pid_t *owner,
                           uint32_t *word);

/// Links followed from a hung thread, its own included.
#define HW_OS_CHAIN_MAX 8
typedef struct hw_os_wait_link {
    pid_t waiter, owner; // owner 0: the waiter runs, waits on something else or on a lock with no owner
    uint64_t addr;
    uint32_t op, how, word;
} hw_os_wait_link;
/// The links from the owner of the hung thread's lock on (its own link is not in it).
typedef struct hw_os_wait_chain {
    uint32_t n;
    hw_os_wait_link links[HW_OS_CHAIN_MAX - 1];
} hw_os_wait_chain;

/// Follows the wait-for chain from `owner`, the owner of the lock the hung
/// thread `hung` waits on: each link's waiter is asked what it waits in
/// (t->futex_wait), its lock's owner read (hw_os_futex_owner). It stops at a
/// thread that waits on no lock with a known owner, after HW_OS_CHAIN_MAX
/// links counting the hung thread's, or at a thread already in the chain:
/// then it returns true, a cycle (a deadlock).
bool hw_os_follow_chain(const hw_os_target *t, pid_t hung, pid_t owner, hw_os_wait_chain *out);

/// Whether the chain `now` is to be written, the last one written being
/// `before`: it differs, and it is not a first chain of the owner alone that waits on nothing known.
bool hw_os_chain_worth_writing(const hw_os_wait_chain *now, const hw_os_wait_chain *before);

#ifdef __cplusplus
}
#endif

#endif
