#include "hangwatch_os.h"

#include <time.h>

// SIGNAL-SAFE: clock_gettime is async-signal-safe (and a vDSO call here).
uint64_t hw_os_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
