// The in-process library's view of Swift Concurrency's cooperative pool:
// the imports of dispatch_queue_set_width, dispatch_async_f and
// dispatch_after_f are redirected here (got_redirect.c), so that each job of
// a pool queue runs inside its queue's trampoline (job_pool.c), exactly as
// under the preload agent's wrappers (docs/COOPERATIVE-POOL.md).
//
// The library starts after the runtime may have made its pool queues (an
// async main has run jobs already), so a queue this never saw given its
// width is adopted at its next job, by its label (hw_pool_job_fn). Every
// other queue and function passes straight through: same queue, same
// context, same function.
#include "engine_internal.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef void (*work_fn)(void *);

static struct {
    void (*async_f)(void *, void *, work_fn);
    void (*after_f)(uint64_t, void *, void *, work_fn);
    void (*set_width)(void *, long);
} real;

static void inprocess_dispatch_async_f(void *queue, void *ctx, work_fn fn) {
    work_fn job = hw_pool_job_fn(queue, fn, true);
    if (job) hw_pool_enqueue_job(queue, ctx, job, real.async_f);
    else real.async_f(queue, ctx, fn);
}

static void inprocess_dispatch_after_f(uint64_t when, void *queue, void *ctx, work_fn fn) {
    work_fn job = hw_pool_job_fn(queue, fn, true);
    real.after_f(when, queue, ctx, job ? job : fn);
}

static void inprocess_dispatch_queue_set_width(void *queue, long width) {
    if (hw_pool_is_runtime_queue(queue, width)) (void)hw_pool_queue_register(queue);
    real.set_width(queue, width);
}

/// libdispatch's own calls stay its own; every other image's go through here.
static bool wants_image(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libdispatch.so", 14) != 0 && !hw_inprocess_skips_image(path);
}

uint32_t hw_inprocess_pool_install(void) {
    hw_got_target targets[] = {
        { "dispatch_async_f", (void *)inprocess_dispatch_async_f },
        { "dispatch_after_f", (void *)inprocess_dispatch_after_f },
        { "dispatch_queue_set_width", (void *)inprocess_dispatch_queue_set_width },
    };
    void **reals[] = { (void **)&real.async_f, (void **)&real.after_f, (void **)&real.set_width };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!(*reals[i] = dlsym(RTLD_DEFAULT, targets[i].name))) return 0;
    hw_pool_init();
    return hw_got_redirect(targets, sizeof targets / sizeof targets[0], wants_image);
}
