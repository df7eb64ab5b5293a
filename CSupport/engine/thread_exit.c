// What a watched thread's exit means beyond its slot: it is never watched
// again (later destructors may still wait), a main thread leaving through
// dispatchMain() starts the main-queue probe, a pool worker gives its place
// back; then the slot is released. Above the slot table, which only runs
// this at the exit (hw_slots_on_thread_exit).
#include "engine_internal.h"

static void on_thread_exit(void *value) {
    hw_slot *slot = value;
    hw_tls_never_watch(); // later destructors may still wait: they pass through
    if (!slot || !hw_owned()) return;
    // dispatchMain() ends the OS main thread with pthread_exit: from now on
    // the main queue runs on workers. In library mode no wrapper saw
    // dispatch_main, so this exit is where the main-queue probe starts.
    if (slot->role == HW_ROLE_MAIN_THREAD && !hw_g.interposed) hw_main_thread_parked(slot);
    if (slot->role == HW_ROLE_JOB) hw_pool_worker_gone();
    hw_slot_release(slot, false);
}

static int thread_exit_open(void) { return hw_slots_on_thread_exit(on_thread_exit); }

const hw_subsystem hw_thread_exit_subsystem = { .name = "thread exit", .open = thread_exit_open };
