// The waking side of the watchdog's park (the parking side is watchdog.c).
// Apart from the watchdog, so the heartbeat and the dispatch brackets, which
// sit below it, can wake it without depending on it.
#include "engine_internal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// SIGNAL-SAFE: one atomic swap, and a futex wake only when the watchdog parked.
void hw_watchdog_wake(void) {
    if (__atomic_exchange_n(&hw_g.watchdog_parked, 0, __ATOMIC_ACQ_REL))
        syscall(SYS_futex, &hw_g.watchdog_parked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
