// CPU samples: the watchdog sends SIGPROF to one watched thread with
// rt_tgsigqueueinfo and a cookie; the handler copies that thread's registers
// and the live part of its stack into the log. Unwinding happens later, off
// this thread. SIGPROF is the one signal libdispatch workers leave unblocked.
//
// A SIGPROF without our cookie (signal_request.c) is the program's: it goes
// to the program's disposition, kept in sigprof_disposition.c.
#include "engine_internal.h"

#include <errno.h>
#include <signal.h>
#include <ucontext.h>

hw_slot *hw_tls_slot_fast(void);

static void copy_registers(const ucontext_t *uc, uint64_t regs[HW_REG_COUNT]) {
    const greg_t *g = uc->uc_mcontext.gregs;
    regs[HW_REG_RAX] = (uint64_t)g[REG_RAX];
    regs[HW_REG_RDX] = (uint64_t)g[REG_RDX];
    regs[HW_REG_RCX] = (uint64_t)g[REG_RCX];
    regs[HW_REG_RBX] = (uint64_t)g[REG_RBX];
    regs[HW_REG_RSI] = (uint64_t)g[REG_RSI];
    regs[HW_REG_RDI] = (uint64_t)g[REG_RDI];
    regs[HW_REG_RBP] = (uint64_t)g[REG_RBP];
    regs[HW_REG_RSP] = (uint64_t)g[REG_RSP];
    regs[HW_REG_R8] = (uint64_t)g[REG_R8];
    regs[HW_REG_R9] = (uint64_t)g[REG_R9];
    regs[HW_REG_R10] = (uint64_t)g[REG_R10];
    regs[HW_REG_R11] = (uint64_t)g[REG_R11];
    regs[HW_REG_R12] = (uint64_t)g[REG_R12];
    regs[HW_REG_R13] = (uint64_t)g[REG_R13];
    regs[HW_REG_R14] = (uint64_t)g[REG_R14];
    regs[HW_REG_R15] = (uint64_t)g[REG_R15];
    regs[HW_REG_RIP] = (uint64_t)g[REG_RIP];
}

// SIGNAL-SAFE: TLS (initial-exec), atomics, clock_gettime, memcpy into a reserved record.
static void on_sigprof(int sig, siginfo_t *si, void *ucv) {
    if (!hw_signal_is_ours(si)) { hw_sigprof_chain(sig, si, ucv); return; }
    hw_signal_count_unseen();
    int saved_errno = errno;
    if (si->si_value.sival_int == HW_OWNER_COOKIE) {
        // This thread holds a lock a hung thread waits for (lock_owner.c); it may have no slot.
        uint64_t regs[HW_REG_COUNT];
        copy_registers(ucv, regs);
        hw_owner_signal_sample(si, regs);
        errno = saved_errno;
        return;
    }
    hw_slot *slot = hw_tls_slot_fast();
    if (!slot && hw_g.probe_main_queue) {
        // Probe mode: main-queue work runs on a worker that has no slot of its own.
        const ucontext_t *uc = ucv;
        slot = si->si_value.sival_int == HW_IDENTIFY_COOKIE
            ? hw_main_queue_identify_here((uint64_t)uc->uc_mcontext.gregs[REG_RSP])
            : hw_main_queue_slot_if_running_here();
    }
    if (slot && !hw_g.disabled) {
        __atomic_fetch_add(&slot->signal_hits, 1, __ATOMIC_ACQ_REL);
        // A thread that reached its loop wait in the meantime is idle: no sample.
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == HW_STATE_BUSY) {
            uint64_t regs[HW_REG_COUNT];
            copy_registers(ucv, regs);
            hw_write_sample(slot, HW_SRC_SIGNAL, 0, regs, hw_now_ns());
        }
    }
    errno = saved_errno;
}

static int signal_open(void) { return hw_sigprof_install(on_sigprof); }

const hw_subsystem hw_signal_subsystem = { .name = "signal sampler", .open = signal_open };
