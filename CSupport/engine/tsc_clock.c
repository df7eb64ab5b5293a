// The heartbeat's clock: the CPU's time-stamp counter, scaled to
// CLOCK_MONOTONIC nanoseconds.
//
// A watched loop stamps every wait twice. Through the vDSO each stamp costs
// about 21 ns on the VMs we measure (a seqlock, an ordered rdtsc, a scale);
// a bare rdtsc costs about 9 ns. The scale is learned, not assumed: the
// watchdog reads (TSC, CLOCK_MONOTONIC) pairs as it ticks (at least every
// 50 ms, even parked) and publishes the latest pair and the rate measured
// from the first one, so a stamp differs from clock_gettime by the clock's
// slewing since the last pair: at most 500 ppm of 50 ms, 25 µs, in practice
// far less. Everything that compares stamps from both clocks (the watchdog's
// busy ages, the heartbeat's busy lengths) tolerates a stamp a little ahead
// of, or behind, the other clock.
//
// Used only where the kernel itself trusts the TSC: its clocksource is
// `tsc` (the TSC is synchronised across CPUs) and the CPU says constant_tsc
// and nonstop_tsc. Otherwise, before the second pair, for a stamp whose pair
// is older than HW_TSC_MAX_AGE_NS (a stopped watchdog), or when asked
// (HW_CONFIG_VDSO_CLOCK), a stamp is a clock_gettime.
#include "engine_internal.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

// A pair older than this is not trusted: the scale is extrapolated no further.
#define HW_TSC_MAX_AGE_NS (1000 * 1000000ull)
// The rate is measured over at least this long before it is used.
#define HW_TSC_MIN_BASELINE_NS (2 * 1000000ull)
// The watchdog refreshes the pair at most this often.
#define HW_TSC_REFRESH_NS (5 * 1000000ull)

/// What a stamp needs, published by the watchdog (the only writer, which
/// takes no signals) under a sequence count; readers never wait for it.
static struct {
    uint32_t seq;           // odd while the fields change
    uint64_t base_tsc;
    uint64_t base_ns;
    uint64_t mult;          // ns per tick, 32.32 fixed point; 0: not calibrated
    uint64_t max_age_ticks; // HW_TSC_MAX_AGE_NS in ticks
} pub;

/// The watchdog's own state.
static struct {
    bool usable;
    uint64_t first_tsc, first_ns; // the baseline's start
    uint64_t last_ns;             // the latest published pair's time
} cal;

// SIGNAL-SAFE: loads and rdtsc; falls back to clock_gettime, never waits.
uint64_t hw_fast_now_ns(void) {
    uint32_t seq = __atomic_load_n(&pub.seq, __ATOMIC_ACQUIRE);
    uint64_t mult = __atomic_load_n(&pub.mult, __ATOMIC_RELAXED);
    uint64_t base_tsc = __atomic_load_n(&pub.base_tsc, __ATOMIC_RELAXED);
    uint64_t base_ns = __atomic_load_n(&pub.base_ns, __ATOMIC_RELAXED);
    uint64_t max_age = __atomic_load_n(&pub.max_age_ticks, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if ((seq & 1) || mult == 0 || __atomic_load_n(&pub.seq, __ATOMIC_RELAXED) != seq) return hw_now_ns();
    // Unordered rdtsc: it may run a few cycles early or late, which is nothing
    // at the scale of a busy period; an ordered one costs 6 ns more here.
    int64_t ticks = (int64_t)(__rdtsc() - base_tsc);
    if (ticks >= 0) {
        if ((uint64_t)ticks > max_age) return hw_now_ns();
        return base_ns + (uint64_t)(((unsigned __int128)(uint64_t)ticks * mult) >> 32);
    }
    // Read before the pair (another CPU published it meanwhile): just before base.
    uint64_t back = (uint64_t)(((unsigned __int128)(uint64_t)-ticks * mult) >> 32);
    return back < base_ns ? base_ns - back : 0;
}

/// One (TSC, CLOCK_MONOTONIC) pair: the tightest of three brackets, its time
/// taken at the bracket's middle.
static void read_pair(uint64_t *tsc, uint64_t *ns) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t before = hw_now_ns();
        _mm_lfence();
        uint64_t t = __rdtsc();
        _mm_lfence();
        uint64_t after = hw_now_ns();
        if (after - before < best) {
            best = after - before;
            *tsc = t;
            *ns = before + (after - before) / 2;
        }
    }
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

void hw_tsc_clock_start(void) {
    memset(&cal, 0, sizeof cal);
    if (hw_g.config.flags & HW_CONFIG_VDSO_CLOCK) return;
    static const char *const source[] = { "tsc", NULL };
    static const char *const flags[] = { "constant_tsc", "nonstop_tsc", NULL };
    if (!file_has_words("/sys/devices/system/clocksource/clocksource0/current_clocksource", source)) return;
    if (!file_has_words("/proc/cpuinfo", flags)) return;
    cal.usable = true;
    read_pair(&cal.first_tsc, &cal.first_ns);
}

void hw_tsc_clock_tick(uint64_t now) {
    if (!cal.usable || now - cal.last_ns < HW_TSC_REFRESH_NS || now - cal.first_ns < HW_TSC_MIN_BASELINE_NS) return;
    uint64_t tsc = 0, ns = 0;
    read_pair(&tsc, &ns);
    if (tsc <= cal.first_tsc || ns <= cal.first_ns) { cal.usable = false; return; } // not a clock we understand
    uint64_t mult = (uint64_t)((((unsigned __int128)(ns - cal.first_ns)) << 32) / (tsc - cal.first_tsc));
    uint64_t max_age = (uint64_t)((((unsigned __int128)HW_TSC_MAX_AGE_NS) << 32) / (mult ? mult : 1));
    __atomic_store_n(&pub.seq, pub.seq + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&pub.base_tsc, tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.base_ns, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.mult, mult, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.max_age_ticks, max_age, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.seq, pub.seq + 1, __ATOMIC_RELEASE);
    cal.last_ns = ns;
}

void hw_tsc_clock_stop(void) {
    __atomic_store_n(&pub.seq, pub.seq + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&pub.mult, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.seq, pub.seq + 1, __ATOMIC_RELEASE);
    cal.usable = false;
}

bool hw_tsc_clock_in_use(void) { return __atomic_load_n(&pub.mult, __ATOMIC_ACQUIRE) != 0; }
