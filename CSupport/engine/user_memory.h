// The program's memory that a wrapper reads or writes itself: a timeout it
// must classify before the call, the time left or the siginfo it hands back
// after. The kernel refuses a pointer it cannot use with EFAULT; a wrapper
// must never fault on one instead. Everything else (fd arrays, fd sets,
// events, signal sets) goes to the kernel untouched.
//
// A pointer into the calling thread's own stack, between its stack pointer
// and the top of the stack its slot knows, is mapped and writable: copied
// directly, without a syscall (the usual case: a local timespec). Any other
// is copied with process_vm_readv / process_vm_writev on our own pid, which
// fail with EFAULT where the memory is not there (or not writable) instead of
// faulting. Where those calls are refused (ENOSYS, or EPERM from a seccomp
// filter that returns an errno) the copy is made directly.
//
// SIGNAL-SAFE: TLS loads, memcpy, one syscall.
#ifndef HANGWATCH_USER_MEMORY_H
#define HANGWATCH_USER_MEMORY_H
#include "agent_hooks.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/// `p` .. `p + n` lies on this thread's stack above its stack pointer.
static inline bool on_own_stack(const void *p, size_t n) {
    uint64_t hi = hw_tls_stack_top();
    if (hi == 0) return false;
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    uint64_t at = (uint64_t)(uintptr_t)p;
    return at >= sp && hi > at && hi - at >= n;
}

/// Copies between the program's `remote` and our `local`; false (errno
/// EFAULT) when the kernel would have refused `remote`.
static inline bool user_copy(void *local, const void *remote, size_t n, bool write) {
    if (on_own_stack(remote, n)) {
        if (write) memcpy((void *)remote, local, n);
        else memcpy(local, remote, n);
        return true;
    }
    int saved = errno;
    struct iovec l = { local, n }, r = { (void *)remote, n };
    // getpid, not the engine's pid: a forked child must copy from itself.
    long got = syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv, syscall(SYS_getpid), &l, 1ul, &r,
                       1ul, 0ul);
    if (got == (long)n) { errno = saved; return true; }
    if (got >= 0 || errno == EFAULT) { errno = EFAULT; return false; } // a short copy ran into a hole
    errno = saved;
    if (write) memcpy((void *)remote, local, n); // refused: as before
    else memcpy(local, remote, n);
    return true;
}

/// *out = *p, unless the kernel would refuse `p` (false).
static inline bool user_read(void *out, const void *p, size_t n) { return user_copy(out, p, n, false); }

/// *p = *in, unless the kernel would refuse `p` (false, errno EFAULT).
static inline bool user_write(void *p, const void *in, size_t n) { return user_copy((void *)in, p, n, true); }
#endif
