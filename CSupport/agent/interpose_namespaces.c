// Calls that need a single-threaded process. unshare(CLONE_NEWUSER) (and
// CLONE_VM/CLONE_SIGHAND/CLONE_THREAD), and setns into a user or mount
// namespace, fail with EINVAL while any other thread exists, and the
// watchdog is one. It is stopped and joined for the call (and waited for
// until the kernel has unlinked it: hw_watchdog_stop) and started again after, so
// the program gets the result it would have had without us, at any time,
// not only before its first wait.
#include "agent_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>

#define NEEDS_ONE_THREAD (CLONE_NEWUSER | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)

static int single_threaded_call(int (*real)(int, int), int a, int b, bool needs_one_thread) {
    // A call that succeeds leaves errno as the program had it: not as
    // stopping the watchdog left it (its wait for the thread's exit polls /proc).
    int at_entry = errno;
    bool stopped = needs_one_thread && hw_engine_running();
    if (stopped) hw_watchdog_stop();
    errno = at_entry;
    int rc = real(a, b);
    int saved = errno;
    if (stopped) hw_watchdog_start();
    errno = saved;
    return rc;
}

static int call_unshare(int flags, int unused) {
    (void)unused;
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "unshare");
    return real(flags);
}

HW_EXPORT int unshare(int flags) {
    return single_threaded_call(call_unshare, flags, 0, (flags & NEEDS_ONE_THREAD) != 0);
}

static int call_setns(int fd, int nstype) {
    static int (*real)(int, int);
    if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "setns");
    return real(fd, nstype);
}

HW_EXPORT int setns(int fd, int nstype) {
    // nstype 0 lets the kernel take the type from fd: it may be a user namespace.
    bool needs = nstype == 0 || (nstype & (CLONE_NEWUSER | CLONE_NEWNS));
    return single_threaded_call(call_setns, fd, nstype, needs);
}
