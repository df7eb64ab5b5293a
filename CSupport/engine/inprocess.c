// The in-process library's wrappers: which of them go in front of the
// program's imports (inprocess_waits.c, inprocess_pool.c), decided once, on
// the thread that started the engine, and told in the log.
#include "engine_internal.h"

#include <dlfcn.h>
#include <string.h>

/// The preload agent is loaded: it wraps these calls for every image already
/// (the name its exported epoll_wait comes from).
static bool agent_loaded(void) {
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, "epoll_wait");
    return f && dladdr(f, &info) && info.dli_fname && strstr(info.dli_fname, "libhangwatch-agent");
}

uint32_t hw_inprocess_interpose(uint32_t what) {
    if (!hw_engine_running() || hw_g.interposed || agent_loaded()) return 0;
    uint32_t done = 0;
    // The waits also serve the pool: a wait inside a job is a blocked call
    // whose registers give its sample and its name, as under the agent.
    if ((what & (HW_INPROCESS_WAITS | HW_INPROCESS_POOL)) && hw_inprocess_waits_install() > 0)
        done |= what & HW_INPROCESS_WAITS;
    if (what & HW_INPROCESS_POOL) {
        if (hw_inprocess_pool_install() > 0) done |= HW_INPROCESS_POOL;
        else hw_write_note(0, HW_NOTE_POOL_UNWATCHED, HW_POOL_WHY_NOT_REDIRECTED);
    }
    if ((what & HW_INPROCESS_EXEC) && hw_inprocess_exec_install() > 0) done |= HW_INPROCESS_EXEC;
    hw_write_note(0, HW_NOTE_INPROCESS, (uint64_t)what << 32 | done);
    return done;
}

void hw_never_watch_this_thread(void) { hw_tls_never_watch(); }

// The linker defines these bounds of a section whose name is a C identifier
// (wrapper_text.h); weak, so an image without the section links too.
extern const char __start_hw_wrapper_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_hw_wrapper_text[] __attribute__((weak, visibility("hidden")));

bool hw_wrapper_text_range(uintptr_t *start, uintptr_t *end) {
    if (!__start_hw_wrapper_text || !__stop_hw_wrapper_text) return false;
    *start = (uintptr_t)__start_hw_wrapper_text;
    *end = (uintptr_t)__stop_hw_wrapper_text;
    return *end > *start;
}
