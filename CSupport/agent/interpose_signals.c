// The program keeps full use of SIGPROF: when it installs a handler, the
// agent records it as the one to chain to instead of letting it replace the
// sampler's handler.
#include "agent_internal.h"
#include "../engine/engine_internal.h"

#include <string.h>

HW_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (sig == SIGPROF && hw_engine_running()) return hw_signal_set_chained(act, old);
    if (!hw_real.sigaction) hw_resolve_real_calls();
    return hw_real.sigaction(sig, act, old);
}

HW_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) {
    if (sig == SIGPROF && hw_engine_running()) {
        struct sigaction act, old;
        memset(&act, 0, sizeof act);
        act.sa_handler = handler;
        act.sa_flags = SA_RESTART; // signal() has BSD semantics in glibc
        hw_signal_set_chained(&act, &old);
        return (old.sa_flags & SA_SIGINFO) ? SIG_DFL : old.sa_handler;
    }
    if (!hw_real.signal) hw_resolve_real_calls();
    return hw_real.signal(sig, handler);
}
