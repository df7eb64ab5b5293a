/*
 * stamp_clock: hangs of known length around timed loop waits, for the
 * heartbeat's clock (issue 11: the TSC stamps).
 *
 *   stamp_clock [--measure FILE]
 *
 * The main loop waits with a timeout (poll, 3 ms) between hangs of 120 to
 * 700 ms, each measured with the program's own CLOCK_MONOTONIC; half of them
 * come after an idle second, when the watchdog has parked and the TSC's
 * calibration is oldest. It also times 40 loop waits of 20 ms and prints how
 * many returned early ("short"): a resumed wait must never end before the
 * program's deadline, whatever clock stamped its start. The test matches the
 * hangs' lengths to the measured ones to well under a millisecond.
 */
#include "safety.h"

static const double lengths_ms[] = {120, 180, 260, 400, 700, 150, 330, 520};

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int early = 0;
    for (int i = 0; i < 40; i++) {
        uint64_t start = now_ns();
        loop_wait(20);
        if (ms_since(start) < 20)
            early++;
    }
    out("timed loop waits that returned early: %d of 40", early);
    for (size_t i = 0; i < sizeof lengths_ms / sizeof lengths_ms[0]; i++) {
        if (i % 2 == 1)
            loop_wait(1000); /* idle: the watchdog parks */
        for (int j = 0; j < 5; j++)
            loop_wait(3);
        char name[32];
        snprintf(name, sizeof name, "stamped_%.0f", lengths_ms[i]);
        MEASURED(name, spin_ms(lengths_ms[i]));
    }
    for (int j = 0; j < 5; j++)
        loop_wait(3);
    out("done");
    return 0;
}
