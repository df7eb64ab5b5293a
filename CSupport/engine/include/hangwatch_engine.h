// hangwatch in-process engine: heartbeat, watchdog, sampler and sample log.
//
// Everything here is plain C so that it can be injected into any program
// (the preload agent) or linked into a Swift program (the HangWatch library).
// Functions marked SIGNAL-SAFE may run inside a signal handler: they never
// allocate, lock, or call anything that can take the loader lock.
#ifndef HANGWATCH_ENGINE_H
#define HANGWATCH_ENGINE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>
#include "hangwatch_log.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- sample log (sample_log.c) ----------------------------------------------

/// Create a fresh log in `path` with a ring of `capacity` bytes and map it.
/// The reader side calls this; the returned header is also the mapping base.
hw_log_header *hw_log_create(const char *path, uint64_t capacity);
/// Map an existing log (the engine side, or a reader reopening a file).
hw_log_header *hw_log_open(const char *path);
/// Wrap anonymous memory as a log (in-process library: no file needed).
hw_log_header *hw_log_create_anonymous(uint64_t capacity);
void hw_log_unmap(hw_log_header *log);

/// SIGNAL-SAFE. Reserve `size` bytes (rounded up to 8) for a record of `type`.
/// Returns NULL (and counts a drop) when the ring is full.
hw_rec_header *hw_log_reserve(hw_log_header *log, uint32_t size);
/// SIGNAL-SAFE. Publish a reserved record.
void hw_log_commit(hw_rec_header *rec, uint32_t type);

/// Reader: the next committed record, or NULL when none is ready.
/// `writer_gone` lets the reader skip records a dead writer never committed.
const hw_rec_header *hw_log_peek(hw_log_header *log, bool writer_gone);
/// Reader: release the record returned by hw_log_peek.
void hw_log_consume(hw_log_header *log, const hw_rec_header *rec);
uint64_t hw_log_dropped(const hw_log_header *log);

// ---- engine (engine.c) ------------------------------------------------------

typedef struct hw_config {
    uint64_t hang_ns;          // busy period that counts as a hang (default 100 ms)
    uint64_t sample_period_ns; // 1e9 / sample rate (default 1 ms)
    uint64_t arm_ns;           // busy time after which sampling starts (default 10 ms)
    uint64_t frame_ns;         // frame deadline; 0 when not a frame loop
    const char *thread_patterns; // '\n'-separated exact names or globs; NULL: main thread only
} hw_config;

/// Start the engine writing into `log`: install the SIGPROF handler, record
/// the module map, start the watchdog thread. Call from the main thread.
/// Returns 0, or -1 with errno set.
int hw_engine_start(hw_log_header *log, const hw_config *config);
/// Stop sampling and write an exit record (safe to call more than once).
void hw_engine_stop(void);
/// Disable every engine action in this process (the child side of fork()).
void hw_engine_disable_after_fork(void);
/// True when the engine runs in this process.
bool hw_engine_running(void);
/// Re-scan loaded images and log the new ones (after dlopen).
void hw_engine_modules_changed(void);

// ---- heartbeat (heartbeat.c) ------------------------------------------------

typedef struct hw_slot hw_slot;

/// The calling thread's watch slot, or NULL when this thread is not watched.
/// First call per thread decides (by role and name) and registers it.
hw_slot *hw_current_slot(void);
/// Register the calling thread explicitly with a role (library API).
hw_slot *hw_register_current_thread(uint32_t role);
/// The loop is about to wait for events: the busy period ends now.
void hw_heartbeat_wait_begin(hw_slot *slot);
/// The loop's wait returned: a busy period starts now.
void hw_heartbeat_wait_end(hw_slot *slot);
/// The same, with a timestamp the caller already read (saves a clock read).
void hw_heartbeat_wait_begin_at(hw_slot *slot, uint64_t now_ns);
void hw_heartbeat_wait_end_at(hw_slot *slot, uint64_t now_ns);

/// What kind of wait an interposed call is, for deciding whether it is the
/// loop's own idle wait or a wait inside a callback (part of a busy period).
enum hw_wait_kind { HW_WAIT_EPOLL, HW_WAIT_FDSET, HW_WAIT_SLEEP };
/// True when a wait made from return address `site` is the loop's own wait.
bool hw_is_loop_wait(hw_slot *slot, uintptr_t site, enum hw_wait_kind kind, bool has_fds);

/// Register context of a thread about to block, captured in an interposed call.
typedef struct hw_blocked_context { uint64_t regs[HW_REG_COUNT]; } hw_blocked_context;
/// Capture the callee-saved registers, stack pointer and pc of the caller (asm).
void hw_capture_context(hw_blocked_context *out);
/// Mark the thread blocked in interposed call `call`; `ctx` must stay valid until hw_blocked_end.
void hw_blocked_begin(hw_slot *slot, hw_blocked_context *ctx, int call);
void hw_blocked_end(hw_slot *slot);
/// SIGNAL-SAFE. Count of our sampling signals handled on this slot's thread.
/// An interposed wait compares it before and after to tell our EINTR from the program's.
uint32_t hw_signal_hits(const hw_slot *slot);

// ---- main dispatch queue (main_queue.c) -------------------------------------
// Under dispatchMain() or an async @main, main-queue blocks and MainActor jobs
// run on changing libdispatch workers. Wrapping each main-queue enqueue lets
// the engine bracket every block: exact busy periods, and the exact thread to
// sample. Blocks that run on the OS main thread (a RunLoop program) are left
// to the run-loop heartbeat.

/// A block was enqueued to run as soon as possible (dispatch_async): the queue is not idle.
void hw_main_queue_enqueued(void);
/// Run main-queue work `fn(ctx)`, bracketed as a main-queue busy period.
/// `counted`: it was announced with hw_main_queue_enqueued.
void hw_main_queue_run(void (*fn)(void *), void *ctx, bool counted);
/// The OS main thread is about to park in dispatch_main(): its launch ends
/// and it is idle from now on.
void hw_main_thread_parks(void);

/// Monotonic clock in ns. SIGNAL-SAFE.
uint64_t hw_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
