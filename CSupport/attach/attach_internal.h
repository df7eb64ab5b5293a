// State shared between the attach files. Not part of the public API.
#ifndef HANGWATCH_ATTACH_INTERNAL_H
#define HANGWATCH_ATTACH_INTERNAL_H

#include "hangwatch_attach.h"
#include "hangwatch_engine.h" // hw_log_reserve / hw_log_commit, hw_thread_name_matches
#include "hangwatch_os.h"
#include <sys/types.h>

/// What /proc says a thread is doing.
typedef enum { HWA_RUNNING, HWA_BLOCKED, HWA_OTHER, HWA_GONE } hwa_activity;

typedef struct hwa_probe {
    hwa_activity activity;
    long nr;            // HWA_BLOCKED: the syscall
    uint64_t args[6];
    uint64_t sp, pc;    // HWA_BLOCKED (and HWA_OTHER when known)
} hwa_probe;

/// Address ranges from /proc/PID/maps: executable code and every mapping (for stack bounds).
typedef struct hwa_range { uint64_t lo, hi; } hwa_range;
typedef struct hwa_maps {
    hwa_range *code; size_t code_count;
    hwa_range *all;  size_t all_count;
} hwa_maps;

// ---- /proc (proc_threads.c) ------------------------------------------------
uint64_t hwa_now_ns(void);
int hwa_open_task_file(pid_t pid, pid_t tid, const char *name);
hwa_probe hwa_probe_fd(int syscall_fd);
/// The state letter of /proc/PID/task/TID/stat, or 0.
char hwa_task_state(pid_t pid, pid_t tid);
/// The thread's name (comm), NUL-terminated, at most 15 bytes.
bool hwa_task_name(pid_t pid, pid_t tid, char name[16]);
/// The thread ids of `pid`, into `out` (at most `max`); the count, or -1.
int hwa_list_tasks(pid_t pid, pid_t *out, int max);
/// num_threads of /proc/PID/stat read through an open descriptor; -1 when the process is gone.
int hwa_thread_count(int stat_fd);
bool hwa_read_maps(pid_t pid, hwa_maps *maps);
void hwa_free_maps(hwa_maps *maps);
bool hwa_in_code(const hwa_maps *maps, uint64_t addr);
/// The mapping that holds `addr` (a stack pointer), or false.
bool hwa_mapping_of(const hwa_maps *maps, uint64_t addr, hwa_range *out);
/// Whether `tid` has a signal pending that it does not block (it is about to take it).
/// Signals ignored (SIG_IGN, or default-ignored without a handler) are not counted.
bool hwa_signal_pending(pid_t pid, pid_t tid);
/// Whether the process ignores `sig` (it would drop it were the thread not traced).
bool hwa_signal_ignored(pid_t pid, pid_t tid, int sig);
/// TracerPid of the thread, or -1 when it cannot be read (gone).
pid_t hwa_tracer_of(pid_t pid, pid_t tid);

// ---- sampling (ptrace_sample.c) ---------------------------------------------
typedef struct hwa_stop_result {
    int status;          // 0: sampled; else -errno (ESRCH gone, EPERM refused, ETIMEDOUT stuck)
    uint64_t regs[HW_REG_COUNT];
    uint64_t stop_ns;    // how long the thread stayed stopped
    bool restarted;      // an interrupted syscall was set to restart
    long syscall_nr;     // the syscall the stop found it in (-1: it was running user code)
    pid_t held_tid;      // -EINPROGRESS: the tracee still held (the pid itself if the thread exec'd)
    bool exec_seen;      // the thread exec'd while held: detached at its exec stop
    bool left_eintr;     // a syscall our stop interrupted returned EINTR and could not be restarted exactly
} hwa_stop_result;

/// Stops `tid` once (seize, interrupt, wait), reads its registers, copies
/// its stack into `stack` (see hwa_copy_stack), and detaches.
hwa_stop_result hwa_stop_sample(pid_t pid, pid_t tid, const hwa_maps *maps, uint8_t *stack, uint32_t *stack_len,
                                uint64_t *stack_addr, uint32_t *flags, uint64_t waited_since_ns);
/// A stop that hwa_stop_sample left pending (-EINPROGRESS, res.held_tid):
/// waits up to `wait_ns` for it, then detaches with the same fix-up as a
/// sample (no sample). Returns 1 when released (or gone), 0 while still
/// pending; *tid follows the thread through an exec. Never blocks longer.
int hwa_finish_stop(pid_t pid, pid_t *tid, uint64_t waited_since_ns, uint64_t wait_ns, hwa_stop_result *res);
/// Whether a thread /proc shows blocked as `p` may be stopped (the
/// HWA_FLAG_STOP_BLOCKED test hook): not in a call whose -EINTR we could not
/// restart exactly, such as an epoll_wait with a timeout that began at an
/// unknown time. Running threads entered any call at most µs before the stop.
bool hwa_stop_safe_while_blocked(const hwa_probe *p);
/// Copies [sp, min(top, sp + HW_MAX_STACK_COPY)) of `pid` with process_vm_readv, page by page.
uint32_t hwa_copy_stack(pid_t pid, const hwa_maps *maps, uint64_t sp, uint8_t *out, uint32_t *flags);
/// For a sample with only sp and pc (read from /proc), a frame pointer found
/// by walking a plausible rbp chain in the copied stack; 0 when none is found.
uint64_t hwa_guess_frame_pointer(const hwa_maps *maps, const uint8_t *stack, uint32_t len, uint64_t stack_addr);

// ---- lock owners (lock_owner.c) ----------------------------------------------
/// The owner of the futex at `addr` of process `pid` that `waiter` waits on
/// with `op`, read with process_vm_readv: how it was known (enum
/// hw_owner_how), the owner in *owner (0: none) and the word as read.
uint32_t hwa_lock_identify(pid_t pid, uint64_t addr, uint32_t op, pid_t waiter, pid_t *owner, uint32_t *word);
/// The wait-for chain from `owner`, the owner of the lock the hung thread
/// `hung` waits on (hw_os_follow_chain): `futex_wait` says what each link's
/// waiter waits in (and may sample it). True when the chain is a cycle.
bool hwa_lock_chain(pid_t pid, pid_t hung, pid_t owner,
                    bool (*futex_wait)(void *ctx, uint32_t index, pid_t tid, uint64_t *addr, uint32_t *op), void *ctx,
                    hw_os_wait_chain *out);

// ---- records (records.c) ----------------------------------------------------
void hwa_emit_session(hw_log_header *log, pid_t pid, uint64_t now);
void hwa_emit_thread(hw_log_header *log, pid_t tid, uint32_t role, const char name[16]);
void hwa_emit_busy(hw_log_header *log, uint32_t type, pid_t tid, uint64_t seq, uint64_t start, uint64_t end, uint32_t flags);
void hwa_emit_sample(hw_log_header *log, pid_t tid, uint64_t seq, uint64_t now, uint32_t source, int32_t call,
                     const uint64_t regs[HW_REG_COUNT], const uint8_t *stack, uint32_t stack_len, uint64_t stack_addr,
                     uint32_t flags);
/// A sample of the owner of the lock thread `waiter`'s busy period `seq` waits
/// for (HW_REC_OWNER_SAMPLE: the sample's layout, tid = the owner's).
void hwa_emit_owner_sample(hw_log_header *log, pid_t owner, uint64_t seq, uint64_t now, uint32_t source, int32_t call,
                           const uint64_t regs[HW_REG_COUNT], const uint8_t *stack, uint32_t stack_len,
                           uint64_t stack_addr, uint32_t flags);
/// The lock `waiter` waits on in its busy period `seq`, and its owner (0: none known).
void hwa_emit_lock_owner(hw_log_header *log, pid_t waiter, uint64_t seq, uint64_t now, uint64_t addr, uint32_t op,
                         uint32_t how, pid_t owner, uint32_t word, const char owner_name[16]);
/// A further link of the wait-for chain of thread `hung`'s busy period `seq`
/// (HW_REC_WAIT_LINK: the LOCK_OWNER layout, os_tid = the link's waiter).
void hwa_emit_wait_link(hw_log_header *log, pid_t hung, uint64_t seq, uint64_t now, const hw_os_wait_link *link,
                        const char owner_name[16]);
void hwa_emit_repeat(hw_log_header *log, pid_t tid, uint64_t seq, uint64_t now);
void hwa_emit_exit(hw_log_header *log, uint64_t now);


#endif
