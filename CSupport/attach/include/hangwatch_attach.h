// hangwatch attach: watching a process that is already running, from
// outside it. No agent is loaded, no code is injected, no signal is sent.
//
// The heartbeat is read from /proc/PID/task/TID/syscall at ~1 kHz: a loop
// thread blocked in its loop's wait is idle, anything else is busy. During a
// hang a running thread is sampled with a per-sample ptrace stop (SEIZE,
// INTERRUPT, GETREGS, stack copy, DETACH); a blocked one from /proc and a
// stack copy alone, without stopping it. Everything is written as the agent's
// sample-log records, so the reader's unwinding and reports apply unchanged.
#ifndef HANGWATCH_ATTACH_H
#define HANGWATCH_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hangwatch_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Whether hangwatch may look at the target, and if not, why.
enum hwa_access {
    HWA_ACCESS_OK = 0,
    HWA_ACCESS_NO_PROCESS = 1,   // no such process (or a zombie)
    HWA_ACCESS_OTHER_USER = 2,   // another user's process, and we lack CAP_SYS_PTRACE
    HWA_ACCESS_PTRACE_SCOPE = 3, // same user, refused by Yama's kernel.yama.ptrace_scope
    HWA_ACCESS_DENIED = 4,       // refused for another reason (LSM, dumpable flag, container)
};

/// Checks access to `pid` the way attach will use it (/proc syscall files,
/// stack reads). `why` receives a one-line explanation.
int hwa_check_access(int32_t pid, char *why, size_t why_len);

enum {
    HWA_FLAG_STOP_BLOCKED = 1, // test hook: sample blocked threads with ptrace stops too (worst case)
};

typedef struct hwa_config {
    int32_t pid;
    uint64_t poll_period_ns;   // heartbeat poll (default 1 ms)
    uint64_t sample_period_ns; // samples during a busy period (default 1 ms)
    uint64_t arm_ns;           // busy time after which sampling starts (default 10 ms)
    uint64_t hang_ns;          // busy time that is a hang (announced while it lasts)
    const char *thread_patterns; // '\n'-separated names or globs; NULL or empty: the main thread
    uint32_t flags;            // HWA_FLAG_*
} hwa_config;

/// Figures of one attach, for the report's notes and the benchmarks.
typedef struct hwa_stats {
    uint64_t start_ns, end_ns;     // CLOCK_MONOTONIC
    uint64_t ticks;                // heartbeat polls made
    uint64_t late_ticks;           // polls more than 1 ms late
    uint64_t max_tick_gap_ns;      // longest time between two polls
    uint64_t poller_cpu_ns;        // CPU time of the poller thread (user + system)
    uint64_t stopped_samples;      // samples taken with a ptrace stop
    uint64_t proc_samples;         // samples of blocked threads taken without a stop
    uint64_t repeat_samples;       // ticks that saw the same blocked stack again
    uint64_t stop_ns_total, stop_ns_max, stop_ns_p50; // time each stopped thread stayed stopped
    uint64_t stop_failures;        // stops that could not be made (thread gone, refused, timed out)
    uint64_t eintr_restarts;       // interrupted syscalls we restarted (see ptrace_sample.c)
    uint32_t threads_watched;      // threads watched at any time
    uint32_t busy_at_attach;       // watched threads already busy when attach began
    int32_t first_busy_at_attach;  // one of them
    uint32_t main_queue_mode;      // dispatchMain(): the main queue's workers were watched
    uint32_t target_exited;        // the target exited during the attach
    uint64_t exit_ns;
    int32_t ptrace_errno;          // last errno of a refused PTRACE_SEIZE (0: none)
    uint64_t eintr_left;           // interrupted syscalls that returned EINTR and could not be restarted exactly
    uint64_t exec_stops;           // stops that met an execve (released at the exec stop, no sample)
} hwa_stats;

typedef struct hwa_session hwa_session;

/// Starts watching: a poller thread writes records into `log` until hwa_stop.
/// Block SIGCHLD in every thread of the caller first (see hwa_block_sigchld):
/// the poller waits for each ptrace stop with sigtimedwait.
/// Returns NULL with errno set when the target cannot be watched.
hwa_session *hwa_start(hw_log_header *log, const hwa_config *config);
/// True once the target has exited (the poller then stops by itself).
bool hwa_target_exited(const hwa_session *s);
/// Stops the poller, detaches from every thread, and frees the session.
void hwa_stop(hwa_session *s, hwa_stats *out);

/// Blocks SIGCHLD in the calling thread (and the threads it creates later).
void hwa_block_sigchld(void);

/// One thread of a dump.
typedef struct hwa_dump_thread {
    int32_t tid;
    char name[16];
    char state;         // the /proc state letter (R, S, D, T, t, Z...)
    int32_t nr;         // syscall it is blocked in, -1 when running or not in one
    uint64_t args[6];   // its arguments
    uint32_t how;       // HWA_DUMP_*
    int32_t error;      // errno of a failed stack capture
} hwa_dump_thread;

enum { HWA_DUMP_NONE = 0, HWA_DUMP_PROC = 1, HWA_DUMP_STOPPED = 2 };

typedef struct hwa_dump_stats {
    uint64_t capture_ns;  // time to capture every stack
    uint64_t stop_ns_max; // longest time one thread stayed stopped
    uint32_t stopped;     // threads that were running and had to be stopped
    uint32_t restarted;   // interrupted syscalls restarted (see ptrace_sample.c)
    uint32_t abandoned;   // threads that never stopped within the bounded wait (left to the kernel at exit)
} hwa_dump_stats;

/// Captures every thread's registers and stack once into `log` (SESSION,
/// THREAD, HANG_START with busy_seq 1, one SAMPLE per thread). Threads
/// blocked in a syscall are read from /proc without stopping them; running
/// ones are stopped for one sample. Returns the thread count written to
/// `out` (at most `max`), or -1 with errno set.
/// `options`: HWA_FLAG_STOP_BLOCKED stops blocked threads too (a test of the worst case).
int hwa_dump(hw_log_header *log, int32_t pid, hwa_dump_thread *out, int max, hwa_dump_stats *stats, uint32_t options);

#ifdef __cplusplus
}
#endif
#endif
