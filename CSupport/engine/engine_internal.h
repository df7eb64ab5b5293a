// State shared between the engine's files. Not part of the public API.
#ifndef HANGWATCH_ENGINE_INTERNAL_H
#define HANGWATCH_ENGINE_INTERNAL_H

#include "hangwatch_engine.h"
#include <pthread.h>
#include <signal.h>

#define HW_MAX_SLOTS 64
#define HW_SAMPLE_COOKIE 0x48574348   /* si_value marking our own SIGPROF */
#define HW_IDENTIFY_COOKIE 0x48574349 /* ours too: "are you running the main queue?" */

enum { HW_STATE_BUSY = 0, HW_STATE_WAITING = 1 };

/// Watchdog-private bookkeeping for one slot's current sampling session.
typedef struct hw_session {
    bool active;
    bool hang_announced;
    uint64_t busy_seq;
    int syscall_fd;            // /proc/self/task/TID/syscall, open while sampling
    uint64_t last_blocked_gen; // dedups samples of one long interposed wait
    uint64_t last_sys_sp, last_sys_pc; // dedups samples of one long other syscall
    long last_sys_nr;
    bool last_was_blocked;
    uint32_t hits_at_start;
    uint32_t requested;
    uint32_t ticks;
    pid_t os_tid;              // thread the session samples
    bool signal_blocked;       // the thread blocks SIGPROF: no signals this session
} hw_session;

struct hw_slot {
    // Written by the watched thread (heartbeat), read by the watchdog.
    uint32_t state;            // HW_STATE_*
    uint64_t busy_seq;         // bumped at every busy-period start
    uint64_t busy_since_ns;
    bool launched;             // first loop wait seen
    // Interposed blocking call in progress.
    uint32_t blocked_call;     // HW_CALL_*; 0 when not blocked
    uint64_t blocked_gen;      // odd while a context is being published
    hw_blocked_context *blocked_ctx;
    // Written by the signal handler on the watched thread.
    uint32_t signal_hits;
    // Identity. `tid` is the slot id written in records; `os_tid` the thread
    // running its work now (they differ only for the main queue).
    pid_t tid;
    pid_t os_tid;
    uint32_t pending;          // main queue: blocks enqueued and not yet started
    uint32_t role;
    uint64_t stack_lo, stack_hi;
    // Loop-wait call sites learned for fd-set waits (poll/ppoll/select).
    uintptr_t loop_sites[4];
    uint32_t loop_site_count;
    // Frame loops: frames not yet written (owned by the watched thread).
    uint32_t frame_count;
    uint64_t frame_start[HW_FRAME_BATCH];
    uint32_t frame_us[HW_FRAME_BATCH];
    // Watchdog-private.
    hw_session session;
    uint64_t announced_seq;
};

typedef struct hw_engine {
    hw_log_header *log;
    hw_config config;
    uint32_t generation;
    pid_t pid;
    bool running;
    bool disabled;             // set in a forked child
    pthread_t watchdog;
    hw_slot slots[HW_MAX_SLOTS];
    uint32_t slot_count;       // atomic: published slots
    pid_t watchdog_tid;
    uint32_t watchdog_parked;  // futex word: 1 while the watchdog sleeps until a busy period
    sigset_t program_sigmask;  // the starting thread's mask, for threads libdispatch spawns from ours
    bool probe_main_queue;     // library mode: no wrappers, so the main queue is probed
    char patterns[512];
} hw_engine;

extern hw_engine hw_g;

// heartbeat.c
hw_slot *hw_slot_register(pid_t tid, uint32_t role);
void hw_log_thread(const hw_slot *slot);
/// Write the frames a slot has buffered (its own thread, or at exit).
void hw_flush_frames(hw_slot *slot);
typedef struct hw_tls_saved { hw_slot *slot; uint8_t state; } hw_tls_saved;
hw_tls_saved hw_tls_enter(hw_slot *slot);
void hw_tls_leave(hw_tls_saved saved);
void hw_emit_busy(hw_slot *slot, uint32_t type, uint64_t start, uint64_t end, uint32_t flags);

// modules.c
void hw_modules_record(hw_log_header *log, uint32_t generation);

// sampler_signal.c
int hw_signal_install(void);
/// SIGNAL-SAFE. Whether `si` is one of our sampling signals.
bool hw_signal_is_ours(const void *siginfo);
/// Ask thread `tid` for a CPU sample. Returns false when the signal could not be sent.
bool hw_signal_request(pid_t tid);
/// Ask thread `tid` whether it is running main-queue work (probe mode).
bool hw_signal_request_identify(pid_t tid);
/// Forward a program's own sigaction for SIGPROF to the chain instead of replacing ours.
int hw_signal_set_chained(const void *act, void *oldact);

// sampler_blocked.c
/// Take a sample of a thread blocked in an interposed wait (watchdog thread).
void hw_sample_blocked_wrapper(hw_slot *slot);
/// Take a sample of a thread blocked in another syscall (sp/pc only).
void hw_sample_blocked_syscall(hw_slot *slot, long nr, uint64_t sp, uint64_t pc);
/// SIGNAL-SAFE. Write one sample record for `slot` from registers and its own stack.
void hw_write_sample(hw_slot *slot, uint32_t source, int call, const uint64_t regs[HW_REG_COUNT],
                     uint64_t time_ns);
void hw_write_repeat(hw_slot *slot, uint64_t time_ns);
void hw_write_note(pid_t tid, uint32_t code, uint64_t value);

// watchdog.c
int hw_watchdog_start(void);
/// A busy period started while the watchdog may be parked: wake it.
void hw_watchdog_wake(void);
/// Whether `tid` runs and may take a signal without the program seeing EINTR.
bool hw_thread_is_running(pid_t tid);

// main_queue.c (probe mode: the in-process library under dispatchMain)
/// The watchdog's per-tick duty for the main-queue probe.
void hw_main_queue_probe_tick(uint64_t now);
/// The OS main thread was found parked (sigsuspend/pause): dispatchMain() ran.
void hw_main_thread_parked(hw_slot *slot);
/// SIGNAL-SAFE. The main-queue slot if the calling thread is the worker running it.
hw_slot *hw_main_queue_slot_if_running_here(void);
/// SIGNAL-SAFE. Answer an identify request: claim the main queue if this thread runs it.
hw_slot *hw_main_queue_identify_here(uint64_t sp);

// glob.c
bool hw_thread_name_matches(const char *patterns, const char *name);

#endif
