// The preload agent: loaded into the target with LD_PRELOAD by `hangwatch run`.
// Its constructor maps the log named by HANGWATCH_LOG and starts the engine.
// Pure C with no Swift runtime, so any program can host it. A child process
// (fork, or exec of another program) sees that the log belongs to another pid
// and stays inert: only the launched program is watched.
#include "agent_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

hw_real_calls hw_real;

#define RESOLVE(field, symbol) \
    if (!hw_real.field) hw_real.field = (__typeof__(hw_real.field))dlsym(RTLD_NEXT, symbol)

void hw_resolve_real_calls(void) {
    RESOLVE(ppoll, "ppoll");
    RESOLVE(poll, "poll");
    RESOLVE(poll_chk, "__poll_chk");
    RESOLVE(ppoll_chk, "__ppoll_chk");
    RESOLVE(select, "select");
    RESOLVE(pselect, "pselect");
    RESOLVE(epoll_wait, "epoll_wait");
    RESOLVE(epoll_pwait, "epoll_pwait");
    RESOLVE(nanosleep, "nanosleep");
    RESOLVE(clock_nanosleep, "clock_nanosleep");
    RESOLVE(usleep, "usleep");
    RESOLVE(sleep, "sleep");
    RESOLVE(sigaction, "sigaction");
    RESOLVE(signal, "signal");
    RESOLVE(sysv_signal, "sysv_signal");
    RESOLVE(sigset, "sigset");
    RESOLVE(siginterrupt, "siginterrupt");
    RESOLVE(sigignore, "sigignore");
    RESOLVE(sigtimedwait, "sigtimedwait");
    RESOLVE(sigwaitinfo, "sigwaitinfo");
    RESOLVE(pause, "pause");
    RESOLVE(sigsuspend, "sigsuspend"); // last: HW_ENSURE_REAL_CALLS tests it
}

static void child_after_fork(void) { hw_engine_disable_after_fork(); }

__attribute__((constructor)) static void hw_agent_start(void) {
    hw_resolve_real_calls();
    const char *path = getenv("HANGWATCH_LOG");
    if (!path || !*path) return;
    hw_log_header *log = hw_log_open(path);
    if (!log) return;
    int32_t me = (int32_t)getpid(), owner = 0;
    if (!__atomic_compare_exchange_n(&log->owner_pid, &owner, me, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)
        && owner != me) {
        hw_log_unmap(log); // another process owns this log: we are its child
        return;
    }
    hw_config config = {
        .hang_ns = log->hang_ns,
        .sample_period_ns = log->sample_period_ns,
        .arm_ns = 0,
        .frame_ns = log->frame_ns,
        .thread_patterns = log->thread_patterns,
        .flags = ((log->flags & HW_LOG_SIGNAL_SAMPLES) ? HW_CONFIG_SIGNAL_SAMPLES : 0)
                 | ((log->flags & HW_LOG_VDSO_CLOCK) ? HW_CONFIG_VDSO_CLOCK : 0),
    };
    pthread_atfork(NULL, NULL, child_after_fork);
    hw_engine_set_interposed();
    hw_engine_start(log, &config);
}

__attribute__((destructor)) static void hw_agent_stop(void) { hw_engine_stop(); }
