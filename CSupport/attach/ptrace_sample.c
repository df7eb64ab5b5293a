// One sample of a running thread, taken from outside with ptrace, and the
// stack copy every sample needs.
//
// Each sample attaches to the one thread and detaches again (SEIZE,
// INTERRUPT, wait, GETREGS, copy, DETACH): between samples the target is not
// traced at all, so its signals never pass through hangwatch and a
// hangwatch that dies leaves nothing behind.
//
// The one way a stop shows: a thread that entered a syscall just before the
// interrupt landed. Sleeps, poll, ppoll, select, futex waits and most others
// return -ERESTART* and the kernel restarts them itself (the remaining time
// for sleeps and poll). epoll_wait, epoll_pwait, sigtimedwait, semop and
// sockets with timeouts return -EINTR instead, which the program would see.
// So when our stop finds epoll_wait or epoll_pwait returning -EINTR and no
// real signal is pending, we restart it as the kernel restarts the others
// (rax = the syscall number, rip back over the 2-byte syscall instruction),
// its timeout shortened by the whole milliseconds it had already waited (it
// can run up to one millisecond longer than asked). Other -EINTR calls cannot
// be restarted exactly from registers: they are left alone and counted.
//
// While we hold a thread the kernel queues signals the process ignores
// instead of dropping them (a traced task never ignores): those are not
// "real" (hwa_signal_pending leaves them out) and are never given back.
//
// A thread that calls execve while held: the seize asks for the exec stop
// (PTRACE_O_TRACEEXEC), and a non-leader's tid becomes the pid (de_thread),
// which wait_stop follows. The poller never seizes a second thread while a
// stop is pending, so de_thread never waits on two stops of ours.
#include "attach_internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/// Longest wait for a thread to stop (it may be in uninterruptible sleep).
#define HWA_STOP_TIMEOUT_NS (20 * 1000000ull)

uint32_t hwa_copy_stack(pid_t pid, const hwa_maps *maps, uint64_t sp, uint8_t *out, uint32_t *flags) {
    hwa_range stack;
    uint64_t len = HW_MAX_STACK_COPY;
    if (hwa_mapping_of(maps, sp, &stack)) {
        len = stack.hi - sp;
        if (len > HW_MAX_STACK_COPY) { len = HW_MAX_STACK_COPY; *flags |= HW_SAMPLE_TRUNCATED; }
    } else {
        *flags |= HW_SAMPLE_TRUNCATED; // a stack we do not know the end of: take what reads
    }
    // Page by page: a partial copy stops at the first unreadable page.
    struct iovec local[HW_MAX_STACK_COPY / 4096 + 1], remote[HW_MAX_STACK_COPY / 4096 + 1];
    int n = 0;
    uint64_t at = sp, end = sp + len;
    while (at < end) {
        uint64_t next = (at & ~4095ull) + 4096;
        if (next > end) next = end;
        local[n] = (struct iovec){ out + (at - sp), next - at };
        remote[n] = (struct iovec){ (void *)(uintptr_t)at, next - at };
        n++;
        at = next;
    }
    ssize_t got = n ? process_vm_readv(pid, local, (unsigned long)n, remote, (unsigned long)n, 0) : 0;
    uint32_t copied = got > 0 ? (uint32_t)got : 0;
    if (copied < len) *flags |= HW_SAMPLE_TRUNCATED;
    return copied;
}

/// libunwind numbering (hangwatch_log.h) from the kernel's user_regs_struct.
static void to_hw_regs(const struct user_regs_struct *r, uint64_t regs[HW_REG_COUNT]) {
    regs[HW_REG_RAX] = r->rax; regs[HW_REG_RDX] = r->rdx; regs[HW_REG_RCX] = r->rcx; regs[HW_REG_RBX] = r->rbx;
    regs[HW_REG_RSI] = r->rsi; regs[HW_REG_RDI] = r->rdi; regs[HW_REG_RBP] = r->rbp; regs[HW_REG_RSP] = r->rsp;
    regs[HW_REG_R8] = r->r8; regs[HW_REG_R9] = r->r9; regs[HW_REG_R10] = r->r10; regs[HW_REG_R11] = r->r11;
    regs[HW_REG_R12] = r->r12; regs[HW_REG_R13] = r->r13; regs[HW_REG_R14] = r->r14; regs[HW_REG_R15] = r->r15;
    regs[HW_REG_RIP] = r->rip;
}

/// Whether this thread is the tracer of pid/tid (TracerPid is the tracer's tid, not its pid).
static bool traced_by_us(pid_t pid, pid_t tid) {
    return hwa_tracer_of(pid, tid) == (pid_t)syscall(SYS_gettid);
}

/// Waits until `deadline` for *tid to report a stop or its end. Never spins:
/// a ptrace stop sends the tracer SIGCHLD, which the caller keeps blocked
/// (hangwatch blocks it in every thread), so sigtimedwait sleeps exactly until
/// the stop; on a busy machine the tracee may need this very CPU to reach it.
/// If SIGCHLD went elsewhere, the 1 ms cap bounds the delay.
/// A non-leader thread that calls execve takes the leader's tid (de_thread):
/// waitpid(old tid) then fails with ECHILD while the tracee, now `pid`, is
/// still ours and about to report its exec stop; *tid becomes `pid`.
static int wait_stop(pid_t pid, pid_t *tid, int *status, uint64_t deadline) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    for (;;) {
        pid_t got = waitpid(*tid, status, __WALL | WNOHANG);
        if (got == *tid) return 0;
        if (got < 0 && errno == ECHILD && *tid != pid && traced_by_us(pid, pid)) {
            // Interrupt it again under its new tid: a seize that waited for the
            // exec to finish attached after the exec stop's point, and the
            // first interrupt went to the old tid; without this it would stay
            // ours, unstopped, for good. If the exec stop comes first, the
            // detach there clears this interrupt.
            *tid = pid;
            ptrace(PTRACE_INTERRUPT, pid, 0, 0);
            continue;
        }
        if (got < 0 && errno != EINTR) return -errno;
        uint64_t now = hwa_now_ns();
        if (now >= deadline) return -ETIMEDOUT;
        uint64_t left = deadline - now;
        struct timespec ts = { 0, (long)(left < 1000000ull ? left : 1000000ull) };
        sigtimedwait(&chld, NULL, &ts);
    }
}

/// Our stop caught a syscall that returned -EINTR only because of the stop:
/// make it run again, as the kernel does for -ERESTARTNOHAND. Only calls we
/// can restart exactly: epoll_wait and epoll_pwait, whose timeout is a
/// register (reduced by what already elapsed). Others (epoll_pwait2's
/// timeout is in memory; sigtimedwait, semop, sockets) are left alone and
/// reported through *left_eintr.
static bool restart_interrupted(pid_t pid, pid_t tid, struct user_regs_struct *r, uint64_t waited_since_ns,
                                bool *left_eintr) {
    long nr = (long)r->orig_rax;
    if (nr < 0 || (long)r->rax != -EINTR) return false;
    // A real signal is pending: it interrupted the call, and the program must see EINTR.
    if (hwa_signal_pending(pid, tid)) return false;
    if (nr != SYS_epoll_wait && nr != SYS_epoll_pwait) { *left_eintr = true; return false; }
    if ((int)r->r10 > 0 && waited_since_ns) {
        uint64_t waited_ms = (hwa_now_ns() - waited_since_ns) / 1000000ull;
        int timeout = (int)r->r10;
        r->r10 = (uint64_t)(unsigned)(timeout > (int)waited_ms ? timeout - (int)waited_ms : 0);
    }
    r->rax = r->orig_rax;
    r->rip -= 2;
    return ptrace(PTRACE_SETREGS, tid, 0, r) == 0;
}

/// Everything a stop needs before its detach, shared by a sample and a late
/// release (hwa_finish_stop), so a stop never leaves differently because it
/// was slow: the signal to give back (none for one the thread ignores: it
/// would have been dropped had the thread not been traced) and the restart of
/// a syscall our stop interrupted. Reads the registers into *r when asked.
/// Returns false for an exec stop (the registers are the new image's).
static bool settle(pid_t pid, pid_t tid, int status, uint64_t waited_since_ns, struct user_regs_struct *r,
                   int *inject, hwa_stop_result *res) {
    int sig = WSTOPSIG(status), event = status >> 16;
    *inject = 0;
    if (event == PTRACE_EVENT_EXEC) { res->exec_seen = true; return false; }
    // Signal-delivery-stop: a signal arrived first; given back at detach unless the thread ignores it.
    if (event == 0 && !hwa_signal_ignored(pid, tid, sig)) *inject = sig;
    if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0) { res->status = -errno; return false; }
    if (!*inject) res->restarted = restart_interrupted(pid, tid, r, waited_since_ns, &res->left_eintr);
    return true;
}

bool hwa_stop_safe_while_blocked(const hwa_probe *p) {
    switch (p->nr) {
    case SYS_epoll_wait:
    case SYS_epoll_pwait: return (int)p->args[3] <= 0; // a timeout we cannot shorten by an unknown wait
    case 441:             // epoll_pwait2: its timeout is in memory
    case SYS_rt_sigtimedwait:
    case SYS_semtimedop:
    case SYS_semop:       return false; // -EINTR we cannot restart exactly
    default:              return true;
    }
}

hwa_stop_result hwa_stop_sample(pid_t pid, pid_t tid, const hwa_maps *maps, uint8_t *stack, uint32_t *stack_len,
                                uint64_t *stack_addr, uint32_t *flags, uint64_t waited_since_ns) {
    hwa_stop_result res = { .syscall_nr = -1, .held_tid = tid };
    *stack_len = 0;
    // TRACEEXEC: a thread that execs while ours reports a stop we can detach
    // from, instead of a new image left stopped.
    if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(uintptr_t)PTRACE_O_TRACEEXEC) != 0) { res.status = -errno; return res; }
    uint64_t t0 = hwa_now_ns();
    // ESRCH here: it is exiting, or it is inside an execve that just gave
    // its tid away (de_thread); then the exec stop still comes, as `pid`.
    // Either way the wait below finds out; never return with it still ours.
    (void)ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    int status = 0;
    for (;;) {
        int rc = wait_stop(pid, &res.held_tid, &status, t0 + HWA_STOP_TIMEOUT_NS);
        if (rc == -ETIMEDOUT) {
            // Not stopped yet (uninterruptible sleep, or no CPU for it on a
            // loaded machine): leave the interrupt pending and let the caller
            // finish it later with hwa_finish_stop, rather than hold the poller.
            res.status = -EINPROGRESS;
            return res;
        }
        if (rc != 0) { res.status = rc; res.held_tid = 0; return res; }
        if (WIFEXITED(status) || WIFSIGNALED(status)) { res.status = -ESRCH; res.held_tid = 0; return res; }
        if (WIFSTOPPED(status)) break;
    }
    tid = res.held_tid;
    struct user_regs_struct r;
    int inject = 0;
    if (settle(pid, tid, status, waited_since_ns, &r, &inject, &res)) {
        long ret = (long)r.rax;
        // In a syscall when stopped: it returns -EINTR or -ERESTART* (512..516) to our stop.
        if ((long)r.orig_rax >= 0 && (ret == -EINTR || (ret <= -512 && ret >= -516) || res.restarted))
            res.syscall_nr = (long)r.orig_rax;
        to_hw_regs(&r, res.regs);
        // A restarted syscall's pc was moved back: the sample keeps the real one.
        if (res.restarted) res.regs[HW_REG_RIP] += 2;
        *stack_addr = r.rsp;
        *stack_len = hwa_copy_stack(pid, maps, r.rsp, stack, flags);
    } else if (res.status == 0) {
        res.status = -ECHILD; // it exec'd: no sample of the old image
    }
    ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)inject);
    res.held_tid = 0;
    res.stop_ns = hwa_now_ns() - t0;
    return res;
}

static uint64_t word_at(const uint8_t *stack, uint32_t len, uint64_t base, uint64_t addr, bool *ok) {
    if (addr < base || addr + 8 > base + len || (addr & 7)) { *ok = false; return 0; }
    uint64_t v;
    memcpy(&v, stack + (addr - base), 8);
    *ok = true;
    return v;
}

uint64_t hwa_guess_frame_pointer(const hwa_maps *maps, const uint8_t *stack, uint32_t len, uint64_t base) {
    // A frame-pointer chain: [fp] = the caller's fp (higher on the stack),
    // [fp+8] = a return address into code. Three links in a row (or two and
    // the chain's end) are taken as the innermost frame-pointer frame; libc's
    // own frames below it are unwound by their CFI, which never needs rbp.
    for (uint64_t at = (base + 7) & ~7ull; at + 16 <= base + len; at += 8) {
        uint64_t fp = at;
        int links = 0;
        bool ok = true;
        while (links < 3) {
            uint64_t next = word_at(stack, len, base, fp, &ok);
            if (!ok) break;
            uint64_t ret = word_at(stack, len, base, fp + 8, &ok);
            if (!ok || !hwa_in_code(maps, ret)) { ok = false; break; }
            links++;
            if (next == 0) break;
            if (next <= fp || next - fp > 1u << 20) { ok = false; break; }
            fp = next;
        }
        if (links >= 3 || (ok && links >= 2)) return at;
    }
    return 0;
}

int hwa_finish_stop(pid_t pid, pid_t *tid, uint64_t waited_since_ns, uint64_t wait_ns, hwa_stop_result *res) {
    int status = 0;
    int rc = wait_stop(pid, tid, &status, hwa_now_ns() + wait_ns);
    if (rc == -ETIMEDOUT) return 0;
    if (rc != 0) return 1; // gone (or not ours any more)
    if (WIFEXITED(status) || WIFSIGNALED(status)) return 1;
    if (!WIFSTOPPED(status)) return 0;
    // The same fix-up as a sample's: a syscall our late stop interrupted is restarted.
    struct user_regs_struct r;
    int inject = 0;
    settle(pid, *tid, status, waited_since_ns, &r, &inject, res);
    ptrace(PTRACE_DETACH, *tid, 0, (void *)(uintptr_t)inject);
    return 1;
}
