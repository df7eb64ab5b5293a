#include "hangwatch_engine.h"
#include "hangwatch_os.h"

// SIGNAL-SAFE: hw_os_monotonic_ns is.
uint64_t hw_now_ns(void) { return hw_os_monotonic_ns(); }
