// Engine lifecycle: start (signal handler, module map, main thread, watchdog),
// stop, and the fork-child switch-off.
#include "engine_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

hw_engine hw_g;

static void log_session(void) {
    hw_g.start_ns = hw_now_ns();
    hw_rec_session *rec = (hw_rec_session *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->generation = hw_g.generation;
    rec->pid = hw_g.pid;
    rec->start_ns = hw_g.start_ns;
    hw_log_commit(&rec->h, HW_REC_SESSION);
}

int hw_engine_start(hw_log_header *log, const hw_config *config) {
    if (hw_g.running) { errno = EALREADY; return -1; }
    if (!log || !config || config->sample_period_ns == 0) { errno = EINVAL; return -1; }
    hw_g.log = log;
    hw_g.config = *config;
    if (hw_g.config.arm_ns == 0) hw_g.config.arm_ns = 10 * 1000000ull;
    if (hw_g.config.hang_ns == 0) hw_g.config.hang_ns = 100 * 1000000ull;
    memset(hw_g.patterns, 0, sizeof hw_g.patterns);
    if (config->thread_patterns)
        strncpy(hw_g.patterns, config->thread_patterns, sizeof hw_g.patterns - 1);
    hw_g.pid = getpid();
    hw_owner_claim();
    if (hw_slots_init() != 0) return -1;
    hw_g.generation = __atomic_add_fetch(&log->generation, 1, __ATOMIC_ACQ_REL);
    // An image exec replaced may have left sessions counted: its threads are gone.
    if (hw_owned()) hw_log_sampling_reset(log);
    log_session();
    hw_modules_record(log, hw_g.generation);
    if (hw_signal_install() != 0) return -1;
    hw_g.running = true;
    // The main thread is registered now, from the constructor, so that no
    // registration (which allocates) ever happens inside a signal handler.
    if (getpid() == (pid_t)syscall(SYS_gettid)) (void)hw_current_slot();
    // In-process the main-queue probe parks on dispatch work (main_queue.c).
    if (hw_g.interposed) hw_pool_init();
    if (!hw_g.interposed) {
        hw_dispatch_brackets_install();
        hw_main_queue_owner_guess(dlsym(RTLD_DEFAULT, "_dispatch_main_q"), hw_g.pid);
    }
    if (hw_watchdog_start() != 0) { hw_g.running = false; return -1; }
    return 0;
}

void hw_engine_stop(void) {
    if (!hw_g.running || hw_g.disabled) return;
    // Frames still buffered: at exit the loop threads no longer write.
    if (!hw_owned()) return; // a child that inherited our memory: the log is not ours
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++)
        if (hw_slot_alive(__atomic_load_n(&hw_g.slots[i].life, __ATOMIC_ACQUIRE))) hw_flush_frames(&hw_g.slots[i]);
    hw_g.running = false;
    hw_rec_exit *rec = (hw_rec_exit *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (rec) {
        rec->time_ns = hw_now_ns();
        hw_log_commit(&rec->h, HW_REC_EXIT);
    }
}

void hw_engine_disable_after_fork(void) {
    // The child shares the parent's MAP_SHARED log; it must never write to it.
    hw_g.disabled = true;
    hw_g.running = false;
    hw_g.log = NULL;
    for (uint32_t i = 0; i < HW_MAX_SLOTS; i++) hw_perf_after_fork(&hw_g.slots[i].session.perf);
    hw_lock_after_fork();
    hw_tsc_clock_stop(); // no watchdog here re-reads the TSC's scale
}

bool hw_engine_running(void) { return hw_g.running && !hw_g.disabled && hw_owned(); }

void hw_engine_set_interposed(void) { hw_g.interposed = true; }
