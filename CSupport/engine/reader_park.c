// Reader parking. A reader that drains the log every 50 ms whatever happens
// wakes 20 times a second in a program that never hangs, each wake-up a cost
// to the machine (BENCHMARKS.md, "The reader sleeps"). Records that need reading soon come only while the
// watchdog samples a thread (a busy period past arm_ns: samples, then the
// hang's start), so the reader sleeps on a futex in the log header while no
// thread is being sampled, and the watchdog wakes it when it starts one.
// Everything else in the log (frame batches, thread and module records)
// waits for the reader's idle timeout.
//
// Lost wake-ups are ruled out Dekker-style, both sides sequentially
// consistent: the reader publishes reader_parked = 1, then reads
// sampling_sessions; the watchdog publishes the session, then swaps
// reader_parked to 0. Either the reader sees the session and does not sleep,
// or the watchdog sees the park and wakes it (a wake that lands before the
// reader's FUTEX_WAIT makes the wait return at once: the word is no longer 1).
// A session that begins and ends between the reader's last drain and its
// park leaves no count behind, but it moves sampling_epoch, which the reader
// read before that drain: the park is refused and the next drain reads the
// session's records (a hang that came and went meanwhile).
//
// The futex is a shared one (no FUTEX_PRIVATE_FLAG): the watchdog runs in the
// target and the reader in the hangwatch process, both mapping the log file.
// The in-process library's anonymous log works the same way.
#include "engine_internal.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void hw_log_sampling_begins(hw_log_header *log) {
    __atomic_add_fetch(&log->sampling_sessions, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&log->sampling_epoch, 1, __ATOMIC_SEQ_CST);
    hw_log_reader_wake(log);
}

void hw_log_sampling_ends(hw_log_header *log) {
    // Never below zero: a reset (exec) may have come between begin and end.
    uint32_t n = __atomic_load_n(&log->sampling_sessions, __ATOMIC_RELAXED);
    while (n > 0 && !__atomic_compare_exchange_n(&log->sampling_sessions, &n, n - 1, false,
                                                 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}
    __atomic_add_fetch(&log->sampling_epoch, 1, __ATOMIC_SEQ_CST);
}

uint32_t hw_log_sampling_sessions(const hw_log_header *log) {
    return __atomic_load_n(&log->sampling_sessions, __ATOMIC_RELAXED);
}

uint32_t hw_log_sampling_epoch(const hw_log_header *log) {
    return __atomic_load_n(&log->sampling_epoch, __ATOMIC_SEQ_CST);
}

void hw_log_sampling_reset(hw_log_header *log) {
    __atomic_store_n(&log->sampling_sessions, 0, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&log->sampling_epoch, 1, __ATOMIC_SEQ_CST); // the old image's last records
}

// SIGNAL-SAFE: called from attach's Ctrl-C handler.
void hw_log_reader_wake(hw_log_header *log) {
    if (__atomic_exchange_n(&log->reader_parked, 0, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &log->reader_parked, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/// The reader's sleep on the log, for both of its callers below: refused at
/// once when a session began or ended since `epoch`, when `*stop` is set, or
/// (parking) while any thread is sampled.
static int sleep_on_log(hw_log_header *log, uint32_t epoch, const uint32_t *stop, uint64_t timeout_ns,
                        bool refuse_while_sampling) {
    __atomic_store_n(&log->reader_parked, 1, __ATOMIC_SEQ_CST);
    if ((refuse_while_sampling && __atomic_load_n(&log->sampling_sessions, __ATOMIC_SEQ_CST) != 0)
        || __atomic_load_n(&log->sampling_epoch, __ATOMIC_SEQ_CST) != epoch
        || (stop && __atomic_load_n(stop, __ATOMIC_SEQ_CST))) {
        __atomic_store_n(&log->reader_parked, 0, __ATOMIC_SEQ_CST);
        return -1;
    }
    struct timespec timeout = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };
    syscall(SYS_futex, &log->reader_parked, FUTEX_WAIT, 1, &timeout, NULL, 0);
    // A wake took the word to 0; a timeout (or a signal) left it at 1.
    return __atomic_exchange_n(&log->reader_parked, 0, __ATOMIC_SEQ_CST) ? 0 : 1;
}

int hw_log_reader_wait(hw_log_header *log, uint32_t epoch, const uint32_t *stop, uint64_t timeout_ns) {
    return sleep_on_log(log, epoch, stop, timeout_ns, false);
}

int hw_log_reader_park(hw_log_header *log, uint32_t epoch, const uint32_t *stop, uint64_t timeout_ns) {
    return sleep_on_log(log, epoch, stop, timeout_ns, true);
}
