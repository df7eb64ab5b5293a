// The engine's entry points that only the preload agent calls: its constructor
// and exit/fork hooks, and the hooks its wait, vfork and dispatch wrappers use.
// Not under include/, so Swift (which imports include/hangwatch_engine.h) never
// sees them; the agent reaches them through agent_internal.h, the engine's own
// files through engine_internal.h.
#ifndef HANGWATCH_AGENT_HOOKS_H
#define HANGWATCH_AGENT_HOOKS_H

#include "hangwatch_engine.h"

// ---- sample log (sample_log.c) ----------------------------------------------

/// Map an existing log (the engine side: the agent maps the file the
/// hangwatch process created).
hw_log_header *hw_log_open(const char *path);

// ---- engine (engine.c) ------------------------------------------------------

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

#endif
