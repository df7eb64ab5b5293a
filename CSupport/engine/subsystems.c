// The engine's subsystems in the order their hooks run (lifecycle.c). Each
// subsystem defines its own hw_subsystem beside the code it starts; this
// table only orders them. A plain static table, so the order is written down
// here and never depends on how the linker or the loader runs constructors.
//
// Order matters:
//  - open: the thread-exit hook before any slot can be claimed; the session
//    record before the module records it introduces; the SIGPROF handler
//    last, once everything it writes into is there;
//  - start: the main thread's slot before anything that may look for it; the
//    watchdog last, once there is something to watch;
//  - after_fork: the sessions' kernel samplers, then the lock owners', then
//    the TSC clock (no watchdog in the child refreshes its scale).
#include "engine_internal.h"

extern const hw_subsystem hw_thread_exit_subsystem, hw_session_record_subsystem, hw_modules_subsystem,
    hw_signal_subsystem, hw_heartbeat_subsystem, hw_pool_subsystem, hw_main_queue_probe_subsystem,
    hw_watchdog_subsystem, hw_perf_subsystem, hw_lock_owner_subsystem, hw_tsc_clock_subsystem;

const hw_subsystem *const hw_subsystems[] = {
    &hw_thread_exit_subsystem,
    &hw_session_record_subsystem,
    &hw_modules_subsystem,
    &hw_signal_subsystem,
    &hw_heartbeat_subsystem,
    &hw_pool_subsystem,
    &hw_main_queue_probe_subsystem,
    &hw_watchdog_subsystem,
    &hw_perf_subsystem,
    &hw_lock_owner_subsystem,
    &hw_tsc_clock_subsystem,
};

const size_t hw_subsystem_count = sizeof hw_subsystems / sizeof hw_subsystems[0];
