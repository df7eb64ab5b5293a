// A program signal handler that runs while its thread sits in the loop's
// wait. Any such handler ends the wait: the agent's waits return EINTR once
// a program handler ran (agent/wait_scope.h), so from the handler's first
// instruction on, the loop is doing its own work again. The handler may
// never return to the wait at all (a siglongjmp back into the loop): the
// wrapper's exit, which would mark the loop busy, is jumped over, and
// without this the engine would believe the loop still waiting while it runs.
//
// So the busy period starts when the handler starts. When the handler
// returns, the thread is back where the signal found it, inside the wait,
// and the wait begins again (a handler that ran for long was a hang of its
// own); the wrapper then ends it as usual. After a jump it stays busy until
// the loop waits again.
//
// The mark is set by the wrapper after its heartbeat and cleared before its
// exit, so the handler never interrupts the heartbeat's own updates of the
// slot; and it is taken while the handler runs, so a nested handler leaves
// the slot alone. A mark left behind by a handler the agent does not see
// (installed with a raw rt_sigaction) only counts while the slot waits.
#include "engine_internal.h"

__thread hw_slot *hw_tls_in_loop_wait __attribute__((tls_model("initial-exec")));

// SIGNAL-SAFE: TLS, atomics, the heartbeat (log records and a futex wake).
hw_slot *hw_handler_enters(void) {
    hw_slot *slot = hw_tls_in_loop_wait;
    if (!slot) return NULL;
    hw_tls_in_loop_wait = NULL;
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != HW_STATE_WAITING) return NULL;
    hw_heartbeat_wait_end(slot);
    return slot;
}

// SIGNAL-SAFE: as above.
void hw_handler_returns(hw_slot *slot) {
    if (!slot) return;
    hw_heartbeat_wait_begin(slot);
    hw_tls_in_loop_wait = slot;
}
