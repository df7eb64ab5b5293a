// Engine lifecycle: start, stop, and the fork-child switch-off. What each
// step does belongs to a subsystem and runs through its hooks, in the order
// of subsystems.c; this file only owns the engine's own flags around them.
#include "engine_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

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
    for (size_t i = 0; i < hw_subsystem_count; i++)
        if (hw_subsystems[i]->open && hw_subsystems[i]->open() != 0) return -1;
    hw_g.running = true;
    for (size_t i = 0; i < hw_subsystem_count; i++)
        if (hw_subsystems[i]->start && hw_subsystems[i]->start() != 0) { hw_g.running = false; return -1; }
    return 0;
}

void hw_engine_stop(void) {
    if (!hw_g.running || hw_g.disabled) return;
    if (!hw_owned()) return; // a child that inherited our memory: the log is not ours
    for (size_t i = 0; i < hw_subsystem_count; i++)
        if (hw_subsystems[i]->stop) hw_subsystems[i]->stop();
    hw_g.running = false;
    hw_rec_exit *rec = (hw_rec_exit *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (rec) {
        rec->time_ns = hw_now_ns();
        hw_log_commit(&rec->h, HW_REC_EXIT);
    }
}

// SIGNAL-SAFE: flag stores and the subsystems' after-fork hooks, which are.
void hw_engine_disable_after_fork(void) {
    // The child shares the parent's MAP_SHARED log; it must never write to it.
    hw_g.disabled = true;
    hw_g.running = false;
    hw_g.log = NULL;
    for (size_t i = 0; i < hw_subsystem_count; i++)
        if (hw_subsystems[i]->after_fork) hw_subsystems[i]->after_fork();
}
