/*
 * frame_loop: a 60 Hz frame loop with known hitches and one hang, for the
 * hangwatch frame-deadline (hitch) feature.
 *
 *   cc -O2 -o frame_loop frame_loop.c
 *   frame_loop [--measure FILE] [--pid-file FILE] [--verbose]
 *
 * 120 frames (numbered 0..119). Each frame runs simulate_frame(), then sleeps
 * with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until the next vsync
 * deadline on a fixed 16.667 ms grid (EINTR is retried). A frame that overruns
 * its deadline makes the loop skip to the first grid point still in the future,
 * as a vsync'd renderer would. simulate_frame() takes:
 *
 *     4 ms normally, 25 ms in frame 30, 40 ms in frame 60, 22 ms in frame 90
 *     (hitches: longer than one 16.667 ms frame, shorter than the 100 ms hang
 *     threshold) and 130 ms in frame 100 (a hang, below the 250 ms report
 *     threshold). Total run time is about 2.2 s.
 *
 * --measure FILE: one line per frame, in frame order (line N = frame N):
 *     simulate_frame <startNs> <endNs> <durationMs>
 * (CLOCK_MONOTONIC nanoseconds; duration in ms with three decimals).
 * Nothing is written to stdout; diagnostics go to stderr with --verbose only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ULL
#define FRAMES 120
#define PERIOD_NS 16666667ULL

#define DEMO_NAME "frame_loop"
#include "demo_support.h"


/* Milliseconds of work for frame `i`. */
static uint64_t frame_cost_ms(int i)
{
    switch (i) {
    case 30: return 25;
    case 60: return 40;
    case 90: return 22;
    case 100: return 130;
    default: return 4;
    }
}

/* Particle update: real arithmetic until the deadline, in ~2 µs chunks. */
__attribute__((noinline)) void simulate_frame(uint64_t cost_ms)
{
    static float pos[512], vel[512];
    uint64_t deadline = now_ns() + cost_ms * MS;
    float energy = 0;
    do {
        for (int i = 0; i < 512; i++) {
            vel[i] = vel[i] * 0.99f + (float)((i * 37) & 15) * 0.001f - pos[i] * 0.01f;
            pos[i] += vel[i] * 0.016f;
            energy += vel[i] * vel[i];
        }
    } while (now_ns() < deadline);
    sink += (uint64_t)energy;
}

static void sleep_until(uint64_t t, int *eintr)
{
    struct timespec ts = {(time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL)};
    int r;
    while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
        (*eintr)++;
    if (r != 0)
        fprintf(stderr, "frame_loop: clock_nanosleep: %s\n", strerror(r));
}

int main(int argc, char **argv)
{
    t_start = now_ns();
    const char *measure = NULL, *pid_file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--measure") && i + 1 < argc)
            measure = argv[++i];
        else if (!strcmp(a, "--pid-file") && i + 1 < argc)
            pid_file = argv[++i];
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
            verbose = 1;
        else {
            fprintf(stderr, "usage: frame_loop [--measure FILE] [--pid-file FILE] [--verbose]\n");
            return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
        }
    }
    if (measure) {
        measure_fd = open(measure, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (measure_fd < 0) {
            fprintf(stderr, "frame_loop: cannot open %s: %s\n", measure, strerror(errno));
            return 2;
        }
    }
    if (pid_file)
        write_pid_file(pid_file);

    int eintr = 0, missed = 0;
    uint64_t grid0 = now_ns() + PERIOD_NS; /* first vsync */
    uint64_t k = 0;                        /* grid index of the next deadline */
    sleep_until(grid0, &eintr);
    for (int frame = 0; frame < FRAMES; frame++) {
        uint64_t s = now_ns();
        simulate_frame(frame_cost_ms(frame));
        uint64_t e = now_ns();
        record("simulate_frame", s, e);
        /* Next vsync still in the future; overruns skip the missed ones. */
        k++;
        uint64_t now = now_ns();
        if (grid0 + k * PERIOD_NS <= now) {
            uint64_t nk = (now - grid0) / PERIOD_NS + 1;
            missed += (int)(nk - k);
            logf_("frame %d took %.3f ms: missed %d vsync(s)", frame, (e - s) / 1e6, (int)(nk - k));
            k = nk;
        }
        if (frame + 1 < FRAMES)
            sleep_until(grid0 + k * PERIOD_NS, &eintr);
    }
    logf_("%d frames, %d missed vsyncs, %d EINTR; exit 0", FRAMES, missed, eintr);
    if (measure_fd >= 0)
        close(measure_fd);
    return 0;
}
