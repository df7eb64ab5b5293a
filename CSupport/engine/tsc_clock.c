// The heartbeat's clock: the CPU's time-stamp counter, scaled to
// CLOCK_MONOTONIC nanoseconds.
//
// A watched loop stamps every wait twice. Through the vDSO each stamp costs
// about 21 ns on the VMs we measure (a seqlock, an ordered rdtsc, a scale);
// a bare rdtsc costs about 9 ns. The scale is learned, not assumed: the
// watchdog reads (TSC, CLOCK_MONOTONIC) pairs as it ticks (every 5 ms while
// it samples, at least every 50 ms even parked) and publishes the latest pair
// and the rate over the last seconds. A stamp is extrapolated from a pair at
// most HW_TSC_MAX_AGE_NS old, so it differs from clock_gettime by the
// clock's change of rate since then (NTP slewing: 500 ppm of 50 ms is 25 µs)
// and before each publication the watchdog checks the old pair's prediction
// against the new pair: more than HW_STAMP_MAX_ERROR_NS off (a suspend, where
// the TSC runs on and CLOCK_MONOTONIC stops; a fast slew; a TSC that went
// back) and stamps fall back to clock_gettime while the rate is learned
// again. Everything that compares stamps from both clocks (the watchdog's
// busy ages, the heartbeat's busy lengths, a thread's exit) tolerates a stamp
// a little ahead of, or behind, the other clock.
//
// Used only where the kernel itself trusts the TSC: its clocksource is
// `tsc` (the TSC is synchronised across CPUs) and the CPU says constant_tsc
// and nonstop_tsc. Otherwise, while the rate is learned (the first 2 ms, and
// after a miss), for a stamp whose pair is too old (a stopped or starved
// watchdog), or when asked (HW_CONFIG_VDSO_CLOCK), a stamp is a clock_gettime.
#include "engine_internal.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

// A pair older than this is not trusted: the scale is extrapolated no further
// (a parked watchdog refreshes it every 50 ms).
#define HW_TSC_MAX_AGE_NS (100 * 1000000ull)
// A stamp read just before the pair it uses (another CPU published it
// meanwhile) is at most this much earlier; anything more is not believed.
#define HW_TSC_MAX_BACK_NS (1000000ull)
// The rate is measured over at least this long before it is used...
#define HW_TSC_MIN_BASELINE_NS (2 * 1000000ull)
// ...and over the last 2-4 s once the run is that long (the clock's own rate
// follows NTP; a rate from the start of a long run would not).
#define HW_TSC_WINDOW_NS (2000 * 1000000ull)
// The watchdog refreshes the pair at most this often.
#define HW_TSC_REFRESH_NS (5 * 1000000ull)
// A pair whose clock reads were further apart (the watchdog was preempted
// between them) is not used.
#define HW_TSC_MAX_BRACKET_NS (10 * 1000ull)

/// What a stamp needs (engine_internal.h), published by the watchdog.
hw_tsc_published hw_tsc_pub;

/// A (TSC, CLOCK_MONOTONIC) pair.
typedef struct tsc_pair { uint64_t tsc, ns; } tsc_pair;

/// The watchdog's own state.
static struct {
    bool usable;
    tsc_pair anchor;   // the rate's baseline starts here
    tsc_pair next;     // becomes the anchor once the window is full
    tsc_pair last;     // the latest pair read
    uint64_t mult;     // the rate published with `last` (0: none)
} cal;

// SIGNAL-SAFE. Also the slow path of hw_fast_now_inline.
uint64_t hw_fast_now_ns(void) {
    bool tsc;
    return hw_stamp_ns(&tsc);
}

// SIGNAL-SAFE: loads and rdtsc; falls back to clock_gettime, never waits.
uint64_t hw_stamp_ns(bool *from_tsc) {
    *from_tsc = false;
    hw_tsc_published pub;
    if (!hw_tsc_snapshot(&pub)) return hw_now_ns();
    // Unordered rdtsc: it may run a few cycles early or late, which is nothing
    // at the scale of a busy period; an ordered one costs 6 ns more here.
    uint64_t tsc = __rdtsc();
    if (tsc >= pub.base_tsc) {
        if (tsc - pub.base_tsc > pub.max_age_ticks) return hw_now_ns();
        *from_tsc = true;
        return hw_tsc_ns_after(&pub, tsc);
    }
    // Read just before the pair (another CPU published it meanwhile).
    if (pub.base_tsc - tsc > pub.max_back_ticks) return hw_now_ns();
    *from_tsc = true;
    return pub.base_ns - (uint64_t)(((unsigned __int128)(pub.base_tsc - tsc) * pub.mult) >> 32);
}

/// One (TSC, CLOCK_MONOTONIC) pair: the tightest of three brackets, its time
/// taken at the bracket's middle. False when even that one was too wide.
static bool read_pair(tsc_pair *out) {
    tsc_pair pair = { 0, 0 };
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t before = hw_now_ns();
        _mm_lfence();
        uint64_t t = __rdtsc();
        _mm_lfence();
        uint64_t after = hw_now_ns();
        if (after - before < best) {
            best = after - before;
            pair.tsc = t;
            pair.ns = before + (after - before) / 2;
        }
    }
    *out = pair;
    return best <= HW_TSC_MAX_BRACKET_NS;
}

/// Whether the start of file `path` (8 KiB) holds every word of the
/// NULL-ended list `words`, each as a whole word.
static bool file_has_words(const char *path, const char *const *words) {
    char buf[8192];
    int fd = hw_proc_keep_away_fd(open(path, O_RDONLY | O_CLOEXEC));
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    for (; *words; words++) {
        size_t len = strlen(*words);
        bool found = false;
        for (const char *p = buf; (p = strstr(p, *words)) != NULL; p += len) {
            bool starts = p == buf || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t';
            bool ends = p[len] == 0 || p[len] == ' ' || p[len] == '\n';
            if (starts && ends) { found = true; break; }
        }
        if (!found) return false;
    }
    return true;
}

/// Publish a pair and rate (mult 0: stamps are clock_gettime until the next).
static void publish(tsc_pair pair, uint64_t mult) {
    uint64_t max_age = mult ? (uint64_t)((((unsigned __int128)HW_TSC_MAX_AGE_NS) << 32) / mult) : 0;
    uint64_t max_back = mult ? (uint64_t)((((unsigned __int128)HW_TSC_MAX_BACK_NS) << 32) / mult) : 0;
    __atomic_store_n(&hw_tsc_pub.seq, hw_tsc_pub.seq + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&hw_tsc_pub.base_tsc, pair.tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.base_ns, pair.ns, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.mult, mult, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.max_age_ticks, max_age, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.max_back_ticks, max_back, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.seq, hw_tsc_pub.seq + 1, __ATOMIC_RELEASE);
    cal.mult = mult;
}

/// Start learning the rate afresh from `pair` (stamps are clock_gettime meanwhile).
static void restart_from(tsc_pair pair) {
    cal.anchor = cal.next = cal.last = pair;
    publish(pair, 0);
}

void hw_tsc_clock_start(void) {
    memset(&cal, 0, sizeof cal);
    if (hw_g.config.flags & HW_CONFIG_VDSO_CLOCK) return;
    static const char *const source[] = { "tsc", NULL };
    static const char *const flags[] = { "constant_tsc", "nonstop_tsc", NULL };
    if (!file_has_words("/sys/devices/system/clocksource/clocksource0/current_clocksource", source)) return;
    if (!file_has_words("/proc/cpuinfo", flags)) return;
    cal.usable = true;
    tsc_pair pair;
    if (read_pair(&pair)) restart_from(pair); // else the first tick starts
}

void hw_tsc_clock_tick(uint64_t now) {
    if (!cal.usable || now - cal.last.ns < HW_TSC_REFRESH_NS) return;
    tsc_pair pair;
    if (!read_pair(&pair)) return; // preempted while reading: the next tick
    if (cal.last.ns == 0) { restart_from(pair); return; }
    if (pair.tsc <= cal.last.tsc || pair.ns <= cal.last.ns) { restart_from(pair); return; } // a TSC that went back
    if (cal.mult) {
        // Where the published pair and rate put this moment, against the clock.
        uint64_t predicted = cal.last.ns + (uint64_t)(((unsigned __int128)(pair.tsc - cal.last.tsc) * cal.mult) >> 32);
        uint64_t miss = predicted > pair.ns ? predicted - pair.ns : pair.ns - predicted;
        if (miss > HW_STAMP_MAX_ERROR_NS) { restart_from(pair); return; }
    }
    cal.last = pair;
    if (pair.ns - cal.anchor.ns < HW_TSC_MIN_BASELINE_NS) return;
    // The window slides: the anchor moves up to a pair 2 s younger once it is 4 s old.
    if (pair.ns - cal.next.ns >= HW_TSC_WINDOW_NS) {
        cal.anchor = cal.next;
        cal.next = pair;
    }
    if (pair.tsc <= cal.anchor.tsc) return;
    publish(pair, (uint64_t)((((unsigned __int128)(pair.ns - cal.anchor.ns)) << 32) / (pair.tsc - cal.anchor.tsc)));
}

void hw_tsc_clock_stop(void) {
    __atomic_store_n(&hw_tsc_pub.seq, hw_tsc_pub.seq + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&hw_tsc_pub.mult, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&hw_tsc_pub.seq, hw_tsc_pub.seq + 1, __ATOMIC_RELEASE);
    cal.usable = false;
    cal.mult = 0;
}

const hw_subsystem hw_tsc_clock_subsystem = { .name = "TSC clock", .after_fork = hw_tsc_clock_stop };
