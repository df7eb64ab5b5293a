// The engine's entry points that the preload agent calls, and the only engine
// header the agent (CSupport/agent) includes: its constructor and exit/fork
// hooks, the hooks its wait, vfork, exec, namespace and dispatch wrappers
// use, and signal chaining. The slot stays opaque here. Not under include/, so
// Swift (which imports include/hangwatch_engine.h) never sees them; the
// engine's own files reach them through engine_internal.h.
#ifndef HANGWATCH_AGENT_HOOKS_H
#define HANGWATCH_AGENT_HOOKS_H

#include "hangwatch_engine.h"

// ---- sample log (sample_log.c) ----------------------------------------------

/// Map an existing log (the engine side: the agent maps the file the
/// hangwatch process created).
hw_log_header *hw_log_open(const char *path);

// ---- engine (lifecycle.c, engine_state.c) -----------------------------------

/// Stop sampling and write an exit record (safe to call more than once).
void hw_engine_stop(void);
/// Disable every engine action in this process (the child side of fork()).
void hw_engine_disable_after_fork(void);
/// The preload agent wraps the program's waits: call before hw_engine_start.
void hw_engine_set_interposed(void);

// ---- program handlers inside the loop's wait (handler_in_wait.c) ----------

/// The wait a program handler may jump out of: set by a loop wait's wrapper
/// after its heartbeat, cleared before its exit.
extern __thread hw_slot *hw_tls_in_loop_wait __attribute__((tls_model("initial-exec")));
/// SIGNAL-SAFE. A program handler starts: if its thread sits in the loop's
/// wait, the wait ends now (busy from here). Returns what to hand back.
hw_slot *hw_handler_enters(void);
/// SIGNAL-SAFE. The handler returned into the wait: the wait begins again.
void hw_handler_returns(hw_slot *slot);

// ---- heartbeat (heartbeat.c) ------------------------------------------------

/// What kind of wait an interposed call is, for deciding whether it is the
/// loop's own idle wait or a wait inside a callback (part of a busy period).
enum hw_wait_kind { HW_WAIT_EPOLL, HW_WAIT_FDSET, HW_WAIT_SLEEP };
/// True when a wait made from return address `site` is the loop's own wait.
bool hw_is_loop_wait(hw_slot *slot, uintptr_t site, enum hw_wait_kind kind, bool has_fds);

/// Register context of a thread about to block, captured in an interposed call.
typedef struct hw_blocked_context { uint64_t regs[HW_REG_COUNT]; } hw_blocked_context;
/// Capture the callee-saved registers, stack pointer and pc of the caller (asm,
/// capture_context.c).
void hw_capture_context(hw_blocked_context *out);
/// Mark the thread blocked in interposed call `call`. The registers are copied
/// into the thread's slot; `ctx` may go away as soon as this returns.
void hw_blocked_begin(hw_slot *slot, const hw_blocked_context *ctx, int call);
void hw_blocked_end(hw_slot *slot);

/// SIGNAL-SAFE. The top of the calling thread's stack as its slot knows it;
/// 0 when the thread is not watched now (user_memory.h copies directly only
/// between the stack pointer and this).
uint64_t hw_tls_stack_top(void);

/// For the vfork wrapper: the calling thread is about to vfork. Until its own
/// next wait, waits made on its TLS by another task (the child) are not heartbeats.
void hw_heartbeat_vfork_begin(void);

// ---- main dispatch queue (main_queue.c) -------------------------------------
// Under dispatchMain() or an async @main, main-queue blocks and MainActor jobs
// run on changing libdispatch workers. Wrapping each main-queue enqueue lets
// the engine bracket every block: exact busy periods, and the exact thread to
// sample. Blocks that run on the OS main thread (a RunLoop program) are left
// to the run-loop heartbeat. (The in-process library has no wrappers and
// probes the main queue instead: engine_internal.h.)

/// A block was enqueued to run as soon as possible (dispatch_async): the queue is not idle.
void hw_main_queue_enqueued(void);
/// Run main-queue work `fn(ctx)`, bracketed as a main-queue busy period.
/// `counted`: it was announced with hw_main_queue_enqueued.
void hw_main_queue_run(void (*fn)(void *), void *ctx, bool counted);
/// The OS main thread is about to park in dispatch_main(): its launch ends
/// and it is idle from now on.
void hw_main_thread_parks(void);

// ---- Swift Concurrency's cooperative pool (job_pool.c) ----------------------

/// Pool queues told apart (one per job priority the program uses).
#define HW_POOL_QUEUES 8
/// `queue` was given the pool's width (dispatch_queue_set_width with
/// DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS): watch its jobs. Returns its index,
/// or -1 when it is not watched (the engine is off, the table is full).
int hw_pool_queue_register(void *queue);
/// The index of a registered pool queue, or -1: a few loads, for every enqueue.
int hw_pool_queue_index(const void *queue);
/// Engine start in the agent: the pool's width, and whether this libdispatch
/// would bypass the wrappers.
void hw_pool_init(void);
/// Whether `queue`, given `width`, is one of the runtime's pool queues: the
/// width DISPATCH_QUEUE_WIDTH_MAX_LOGICAL_CPUS and the runtime's label.
bool hw_pool_is_runtime_queue(void *queue, long width);
/// The function to enqueue in place of `fn` on `queue`: its pool queue's
/// trampoline, which runs the job (the same pointer) bracketed as a busy
/// period of its worker, when `queue` is a watched pool queue and `fn` the
/// runtime's job function; NULL otherwise. `adopting`: a queue never
/// registered is checked by its label and registered when it is the pool's
/// (the library starts after the runtime may have made its queues).
void (*hw_pool_job_fn(void *queue, void (*fn)(void *), bool adopting))(void *);
/// The agent's dispatch_async_f, for every job: enqueue(queue, ctx, the
/// trampoline) when hw_pool_job_fn(queue, fn, false) has one, else
/// other(queue, ctx, fn). Both are tail calls, so a pool job's enqueue saves
/// no register on its way through the wrapper.
typedef void (*hw_async_fn)(void *queue, void *ctx, void (*fn)(void *));
void hw_pool_async_f(void *queue, void *ctx, void (*fn)(void *), hw_async_fn enqueue, hw_async_fn other);
/// enqueue(queue, ctx, job) for `job`, a trampoline from hw_pool_job_fn;
/// the first job on a queue the watchdog sees full is noted as waiting (one
/// load otherwise). For the library's dispatch_async_f, and hw_pool_async_f's
/// slow way (a full queue's jobs go there).
void hw_pool_enqueue_job(void *queue, void *ctx, void (*job)(void *), hw_async_fn enqueue);

// ---- signal chaining and counts (sigprof_disposition.c, signal_request.c) ---

/// SIGNAL-SAFE. Whether `si` is one of our sampling signals.
bool hw_signal_is_ours(const void *siginfo);
/// Forward a program's own sigaction for SIGPROF to the chain instead of replacing ours.
int hw_signal_set_chained(const void *act, void *oldact);
/// SIGNAL-SAFE. Whether our SIGPROF handler is in place (in this process or
/// the parent it was forked from): the program's SIGPROF dispositions then
/// go through hw_signal_set_chained.
bool hw_signal_owns_sigprof(void);
/// Per-thread counts of the signal handlers that ran on a thread, so that an
/// interposed wait cut short by EINTR knows whose signal did it. `unseen`:
/// signals the program would never have received without us (our samples, a
/// SIGPROF it ignores); `program`: the program's own handlers (wrapped by the
/// agent, or its SIGPROF handler chained from ours). Only handlers running on
/// the thread itself write them, so one 8-byte load reads both consistently.
typedef union hw_signal_counts { struct { uint32_t unseen, program; } n; uint64_t both; } hw_signal_counts;
extern __thread hw_signal_counts hw_tls_signal_counts __attribute__((tls_model("initial-exec")));
/// SIGNAL-SAFE. This thread's counts now: one TLS load.
static inline hw_signal_counts hw_signal_counts_now(void) {
    return (hw_signal_counts){ .both = __atomic_load_n(&hw_tls_signal_counts.both, __ATOMIC_RELAXED) };
}
/// SIGNAL-SAFE. A program's signal handler is about to run on this thread.
static inline void hw_signal_count_program(void) {
    __atomic_fetch_add(&hw_tls_signal_counts.n.program, 1, __ATOMIC_RELAXED);
}

// ---- the heartbeat's clock (tsc_clock.c) ------------------------------------

/// SIGNAL-SAFE. hw_fast_now_ns(), and whether the TSC gave it (false: clock_gettime did).
uint64_t hw_stamp_ns(bool *from_tsc);

// ---- the watchdog thread (watchdog.c) ---------------------------------------

/// Start the watchdog thread (engine start, and after hw_watchdog_stop).
int hw_watchdog_start(void);
/// Stop the watchdog thread and wait until it is gone (the process must be
/// single-threaded for unshare(CLONE_NEWUSER)); hw_watchdog_start restarts it.
void hw_watchdog_stop(void);

// ---- exec guard (exec_guard.c) ----------------------------------------------

/// Before a real exec in the owner process: no sampling signal is sent from
/// now on, and none of ours is left pending on this thread to kill the new
/// image (SIGPROF's default action). Returns whether it quiesced anything.
bool hw_exec_prepare(void);
/// The exec failed: sampling resumes.
void hw_exec_failed(bool prepared);

#endif
