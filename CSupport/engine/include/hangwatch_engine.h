// hangwatch in-process engine: heartbeat, watchdog, sampler and sample log.
//
// Everything here is plain C so that it can be injected into any program
// (the preload agent) or linked into a Swift program (the HangWatch library).
// This header is what Swift (the library and the log reader), the attach
// poller and the CLI's C use; the entry points only the preload agent calls
// are declared in ../agent_hooks.h, which Swift never sees, and what the
// engine's own files share in ../engine_internal.h, which nothing outside
// CSupport/engine includes.
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
/// Wrap anonymous memory as a log (in-process library: no file needed).
hw_log_header *hw_log_create_anonymous(uint64_t capacity);
void hw_log_unmap(hw_log_header *log);

/// SIGNAL-SAFE. Reserve `size` bytes (rounded up to 8, header included) for a
/// control record (any kind but SAMPLE/REPEAT): it may use the ring's headroom.
/// Returns NULL (and counts a drop) when the ring is full.
hw_rec_header *hw_log_reserve(hw_log_header *log, uint32_t size);
/// SIGNAL-SAFE. The same for a record of kind `kind` (enum hw_record_type):
/// SAMPLE and REPEAT are refused once only the headroom is left, and a drop
/// is counted under `kind`.
hw_rec_header *hw_log_reserve_kind(hw_log_header *log, uint32_t size, uint32_t kind);
/// SIGNAL-SAFE. Publish a reserved record (a no-op if the reader gave up on
/// it meanwhile and the space was claimed again).
void hw_log_commit(hw_rec_header *rec, uint32_t type);

/// Reader: the next whole committed record, or NULL when none is ready.
/// `writer_gone` lets the reader skip at once records a dead writer never
/// committed; while it lives they are skipped after a bounded wait.
const hw_rec_header *hw_log_peek(hw_log_header *log, bool writer_gone);
/// Reader: hw_log_peek with the current CLOCK_MONOTONIC time given (tests).
const hw_rec_header *hw_log_peek_at(hw_log_header *log, bool writer_gone, uint64_t now_ns);
/// Reader: release the record returned by hw_log_peek.
void hw_log_consume(hw_log_header *log, const hw_rec_header *rec);
uint64_t hw_log_dropped(const hw_log_header *log);
/// Refused reservations of kind `kind` (0: reservations made without a kind).
uint64_t hw_log_dropped_kind(const hw_log_header *log, uint32_t kind);
/// Reader of a file log: drop this process's page mappings of the ring bytes
/// consumed since `*released` (the file keeps the data; the writer's mapping
/// is untouched), so the reader's RSS does not grow with the ring. Never call
/// it on an anonymous (in-process) log. Updates `*released`.
void hw_log_release_consumed(hw_log_header *log, uint64_t *released);

// ---- reader parking (reader_park.c) ------------------------------------------

/// Watchdog: a sampling session begins; wakes a parked reader.
void hw_log_sampling_begins(hw_log_header *log);
/// Watchdog: a sampling session begun with hw_log_sampling_begins ends.
void hw_log_sampling_ends(hw_log_header *log);
/// Engine start in a new process image: the sessions of the image exec
/// replaced ended with its threads.
void hw_log_sampling_reset(hw_log_header *log);
/// Threads the watchdog samples now (the reader drains faster the more there are).
uint32_t hw_log_sampling_sessions(const hw_log_header *log);
/// Reader: the session epoch, read before a drain and handed to the park
/// that follows it.
uint32_t hw_log_sampling_epoch(const hw_log_header *log);
/// Reader, while threads are sampled: sleeps until the watchdog starts
/// sampling another, `*stop` (optional) is set and hw_log_reader_wake called,
/// or `timeout_ns` passes (its next drain). Refused at once when a session
/// began or ended since `epoch` was read, or when `*stop` is set. Returns as
/// hw_log_reader_park does.
int hw_log_reader_wait(hw_log_header *log, uint32_t epoch, const uint32_t *stop, uint64_t timeout_ns);
/// Reader: sleeps until the watchdog starts sampling a thread, `*stop`
/// (optional) is set and hw_log_reader_wake called, or `timeout_ns` passes.
/// Refused at once, without sleeping, while a thread is being sampled, when
/// a session began or ended since `epoch` was read (its records may have
/// come after the drain), or when `*stop` is set. Returns 1 when woken, 0
/// when the time ran out (or a signal ended the wait), -1 when refused.
int hw_log_reader_park(hw_log_header *log, uint32_t epoch, const uint32_t *stop, uint64_t timeout_ns);
/// SIGNAL-SAFE (an atomic swap and a futex wake: `attach`'s Ctrl-C handler
/// calls it). Ends the reader's park now (any thread or process mapping the log).
void hw_log_reader_wake(hw_log_header *log);

// ---- engine (lifecycle.c, engine_state.c) -----------------------------------

typedef struct hw_config {
    uint64_t hang_ns;          // busy period that counts as a hang (default 100 ms)
    uint64_t sample_period_ns; // 1e9 / sample rate (default 1 ms)
    uint64_t arm_ns;           // busy time after which sampling starts (default 10 ms)
    uint64_t frame_ns;         // frame deadline; 0 when not a frame loop
    const char *thread_patterns; // '\n'-separated exact names or globs; NULL: main thread only
    uint32_t flags;            // HW_CONFIG_*
} hw_config;

/// hw_config.flags: sample running threads with SIGPROF even where the
/// kernel's perf_event sampler works (the fallback, chosen on purpose).
#define HW_CONFIG_SIGNAL_SAMPLES 1u
/// hw_config.flags: the heartbeat stamps waits with clock_gettime even where
/// the TSC could serve (comparisons, and a way out should a TSC misbehave).
#define HW_CONFIG_VDSO_CLOCK 2u

/// Start the engine writing into `log`: install the SIGPROF handler, record
/// the module map, start the watchdog thread. Call from the main thread.
/// Returns 0, or -1 with errno set.
int hw_engine_start(hw_log_header *log, const hw_config *config);
/// True when the engine runs in this process.
bool hw_engine_running(void);

// ---- heartbeat (heartbeat.c) ------------------------------------------------

typedef struct hw_slot hw_slot;

/// The calling thread's watch slot, or NULL when this thread is not watched.
/// First call per thread decides (by role and name) and registers it.
hw_slot *hw_current_slot(void);
/// Register the calling thread explicitly with a role (library API).
hw_slot *hw_register_current_thread(uint32_t role);
/// The calling thread's slot for a loop the program marks itself (the library's
/// LoopHeartbeat and FrameMonitor): with no thread list every such thread is
/// watched; with one, only a thread it names ("main" for the main thread), as
/// for the agent's waits. NULL when the thread is not watched.
hw_slot *hw_register_marked_loop(void);
/// The loop is about to wait for events: the busy period ends now.
void hw_heartbeat_wait_begin(hw_slot *slot);
/// The loop's wait returned: a busy period starts now.
void hw_heartbeat_wait_end(hw_slot *slot);
/// The same, with a timestamp the caller already read (saves a clock read).
void hw_heartbeat_wait_begin_at(hw_slot *slot, uint64_t now_ns);
void hw_heartbeat_wait_end_at(hw_slot *slot, uint64_t now_ns);
/// The loop on `slot` counts its frames itself (a FrameMonitor): with a frame
/// deadline the engine records none for it, so they are not counted twice.
void hw_heartbeat_frames_elsewhere(hw_slot *slot);
/// Writes the frames the calling thread's loop has buffered (they are written
/// in batches, and at the thread's exit): before a report, so it has them all.
void hw_flush_own_frames(void);
/// The calling thread's loop, if it is a watched one that is busy, counts as
/// waiting from now: for hangwatch's own work at the program's exit, which is
/// no hang of the program's.
void hw_own_loop_waits(void);

/// hw_inprocess_interpose: what to put in front of the program's imports.
/// Event-loop waits (epoll_wait, epoll_pwait, poll, ppoll): the heartbeat of
/// loop threads the thread list names and the program does not mark itself.
#define HW_INPROCESS_WAITS 1u
/// The dispatch calls that hand Swift Concurrency's jobs to its pool.
#define HW_INPROCESS_POOL 2u
/// The exec family: no sampling signal of ours is pending when a new image
/// starts (SIGPROF kills there). Every library start asks for it.
#define HW_INPROCESS_EXEC 4u
/// In-process (the library), after hw_engine_start, on the same thread:
/// redirects the loaded images' imports of the calls `what` names to the
/// engine's wrappers, which pass every call on unchanged and keep the
/// heartbeat of watched threads. Nothing when the preload agent is loaded (it
/// wraps them already). Returns the HW_INPROCESS_* bits that took effect;
/// the log holds a note of what was asked and done.
uint32_t hw_inprocess_interpose(uint32_t what);
/// The calling thread is hangwatch's own (the library's reader, its callback
/// and exporter threads): never watched, whatever the thread list says.
void hw_never_watch_this_thread(void);
/// The addresses [start, end) of this image's wrapper functions (the
/// in-process wait wrappers and the pool's job trampolines): frames there are
/// hangwatch's, not the program's. False when the image has none.
bool hw_wrapper_text_range(uintptr_t *start, uintptr_t *end);

/// Monotonic clock in ns. SIGNAL-SAFE.
uint64_t hw_now_ns(void);
/// SIGNAL-SAFE. CLOCK_MONOTONIC nanoseconds read from the TSC where the
/// kernel trusts it (tsc_clock.c): the heartbeat's stamps. Within tens of µs
/// of hw_now_ns(); hw_now_ns() itself where the TSC is not used.
uint64_t hw_fast_now_ns(void);

/// Whether thread `name` is selected by `patterns`: exact names or shell globs
/// (`*`, `?`), one per line; NULL or empty selects "main" only (glob.c). The
/// agent and `attach` choose threads by the same rule.
bool hw_thread_name_matches(const char *patterns, const char *name);

#ifdef __cplusplus
}
#endif
#endif
