/*
 * stamp_clock: hangs of known length around timed loop waits, for the
 * heartbeat's clock (issue 11: the TSC stamps).
 *
 *   stamp_clock [--measure FILE]
 *
 * The main loop waits with a timeout (poll, 3 ms) between hangs of 120 to
 * 700 ms, each measured with the program's own CLOCK_MONOTONIC; half of them
 * come after an idle 300 ms, when the watchdog has parked and the TSC's
 * pair is oldest. Each hang ends in a timed loop wait of 20 ms: with the
 * signal sampler a sample sent as the hang ends may interrupt that wait
 * (rarely: the window is a few µs; the wrapper tests force it), which is then
 * resumed with a deadline built on the heartbeat's stamp. The program prints how many of its timed waits returned early: none may, plain
 * or watched, whatever clock stamped them. The test matches the hangs'
 * lengths to the measured ones to well under a millisecond.
 */
#include "safety.h"

static const double lengths_ms[] = {120, 260, 700, 150, 400};

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int early = 0, timed = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t start = now_ns();
        loop_wait(20);
        timed++;
        if (ms_since(start) < 20)
            early++;
    }
    for (size_t i = 0; i < sizeof lengths_ms / sizeof lengths_ms[0]; i++) {
        if (i % 2 == 1)
            loop_wait(300); /* idle: the watchdog parks */
        for (int j = 0; j < 5; j++)
            loop_wait(3);
        char name[32];
        snprintf(name, sizeof name, "stamped_%.0f", lengths_ms[i]);
        MEASURED(name, spin_ms(lengths_ms[i]));
        uint64_t start = now_ns(); /* straight out of the hang, as a sample may be in flight */
        loop_wait(20);
        timed++;
        if (ms_since(start) < 20)
            early++;
    }
    out("timed loop waits that returned early: %d of %d", early, timed);
    for (int j = 0; j < 5; j++)
        loop_wait(3);
    out("done");
    return 0;
}
