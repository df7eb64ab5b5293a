// Main-queue work under dispatchMain() and async @main runs on libdispatch
// workers, where no wait call marks the loop's heartbeat. The agent wraps the
// calls that put work on the main queue (dispatch_async[_f], dispatch_after[_f]:
// DispatchQueue.main.async/asyncAfter and MainActor jobs all go through them)
// so that each block is bracketed as main-queue work on whatever thread runs
// it, and dispatch_main() so the parked OS main thread is not taken for a hang.
// Swift Concurrency's pool queues are recognised by the width the runtime
// gives them (dispatch_queue_set_width) and their jobs bracketed without an
// allocation (engine/job_pool.c). Everything else passes straight through.
#include "agent_internal.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void *dispatch_queue_ref;
typedef uint64_t dispatch_time_value;
typedef void (*work_fn)(void *);

static struct {
    void *main_queue; // &_dispatch_main_q
    void (*async_f)(dispatch_queue_ref, void *, work_fn);
    void (*after_f)(dispatch_time_value, dispatch_queue_ref, void *, work_fn);
    void (*async)(dispatch_queue_ref, void *);
    void (*after)(dispatch_time_value, dispatch_queue_ref, void *);
    void (*dispatch_main)(void);
    void (*set_width)(dispatch_queue_ref, long);
    void *(*block_copy)(const void *);
    void (*block_release)(const void *);
    bool resolved;
} dq;

static void resolve(void) {
    if (__atomic_load_n(&dq.resolved, __ATOMIC_ACQUIRE)) return;
    dq.main_queue = dlsym(RTLD_DEFAULT, "_dispatch_main_q");
    dq.async_f = (__typeof__(dq.async_f))dlsym(RTLD_NEXT, "dispatch_async_f");
    dq.after_f = (__typeof__(dq.after_f))dlsym(RTLD_NEXT, "dispatch_after_f");
    dq.async = (__typeof__(dq.async))dlsym(RTLD_NEXT, "dispatch_async");
    dq.after = (__typeof__(dq.after))dlsym(RTLD_NEXT, "dispatch_after");
    dq.dispatch_main = (__typeof__(dq.dispatch_main))dlsym(RTLD_NEXT, "dispatch_main");
    dq.set_width = (__typeof__(dq.set_width))dlsym(RTLD_NEXT, "dispatch_queue_set_width");
    dq.block_copy = (__typeof__(dq.block_copy))dlsym(RTLD_DEFAULT, "_Block_copy");
    dq.block_release = (__typeof__(dq.block_release))dlsym(RTLD_DEFAULT, "_Block_release");
    __atomic_store_n(&dq.resolved, true, __ATOMIC_RELEASE);
}

static bool wrap_for(dispatch_queue_ref q) {
    resolve();
    return q && q == dq.main_queue && hw_engine_running();
}

typedef struct wrapped_work {
    work_fn fn;
    void *ctx;
    bool counted;
} wrapped_work;

static void run_wrapped(void *p) {
    wrapped_work w = *(wrapped_work *)p;
    free(p);
    hw_main_queue_run(w.fn, w.ctx, w.counted);
}

static wrapped_work *wrap(work_fn fn, void *ctx, bool counted) {
    wrapped_work *w = malloc(sizeof *w);
    if (w) *w = (wrapped_work){ fn, ctx, counted };
    return w;
}

// A block literal starts with isa, flags, reserved, then its invoke function.
typedef struct block_header {
    void *isa;
    int flags;
    int reserved;
    void (*invoke)(void *);
} block_header;

static void run_block(void *block) {
    ((block_header *)block)->invoke(block);
    dq.block_release(block);
}

/// The trampoline for a job of a watched pool queue, or NULL.
static work_fn job_trampoline(dispatch_queue_ref q, work_fn fn) { return hw_pool_job_fn(q, fn, false); }

/// dispatch_async_f of anything but a pool job.
static void async_f_not_a_job(dispatch_queue_ref q, void *ctx, work_fn fn) {
    wrapped_work *w = wrap_for(q) ? wrap(fn, ctx, true) : NULL;
    if (!w) { dq.async_f(q, ctx, fn); return; }
    hw_main_queue_enqueued();
    dq.async_f(q, w, run_wrapped);
}

HW_EXPORT void dispatch_async_f(dispatch_queue_ref q, void *ctx, work_fn fn) {
    // A pool queue is registered by the dispatch_queue_set_width wrapper,
    // after resolve(): dq.async_f is set whenever there is a pool job.
    hw_pool_async_f(q, ctx, fn, dq.async_f, async_f_not_a_job);
}

HW_EXPORT void dispatch_after_f(dispatch_time_value when, dispatch_queue_ref q, void *ctx, work_fn fn) {
    work_fn job = job_trampoline(q, fn);
    if (job) { dq.after_f(when, q, ctx, job); return; }
    wrapped_work *w = wrap_for(q) ? wrap(fn, ctx, false) : NULL;
    if (!w) { dq.after_f(when, q, ctx, fn); return; }
    dq.after_f(when, q, w, run_wrapped);
}

HW_EXPORT void dispatch_async(dispatch_queue_ref q, void *block) {
    wrapped_work *w = (wrap_for(q) && dq.block_copy && dq.block_release && dq.async_f)
                          ? wrap(run_block, dq.block_copy(block), true) : NULL;
    if (!w) { dq.async(q, block); return; }
    hw_main_queue_enqueued();
    dq.async_f(q, w, run_wrapped);
}

HW_EXPORT void dispatch_after(dispatch_time_value when, dispatch_queue_ref q, void *block) {
    wrapped_work *w = (wrap_for(q) && dq.block_copy && dq.block_release && dq.after_f)
                          ? wrap(run_block, dq.block_copy(block), false) : NULL;
    if (!w) { dq.after(when, q, block); return; }
    dq.after_f(when, q, w, run_wrapped);
}


HW_EXPORT void dispatch_queue_set_width(dispatch_queue_ref q, long width) {
    resolve();
    if (hw_pool_is_runtime_queue(q, width)) (void)hw_pool_queue_register(q);
    if (dq.set_width) dq.set_width(q, width);
}

HW_EXPORT void dispatch_main(void) {
    resolve();
    hw_main_thread_parks();
    dq.dispatch_main();
    abort(); // dispatch_main never returns
}
