// Shared between the preload agent's files.
#ifndef HANGWATCH_AGENT_INTERNAL_H
#define HANGWATCH_AGENT_INTERNAL_H
#include "../engine/agent_hooks.h"
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

/// The libc functions we wrap, found with dlsym(RTLD_NEXT) at load time.
/// The wrappers resume and the engine calls through these, never through
/// the agent's own exported symbols.
typedef struct hw_real_calls {
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*poll_chk)(struct pollfd *, nfds_t, int, size_t);
    int (*ppoll_chk)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *, size_t);
    int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
    int (*epoll_wait)(int, struct epoll_event *, int, int);
    int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
    int (*nanosleep)(const struct timespec *, struct timespec *);
    int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
    int (*usleep)(useconds_t);
    unsigned (*sleep)(unsigned);
    int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
    int (*sigwaitinfo)(const sigset_t *, siginfo_t *);
    int (*sigsuspend)(const sigset_t *);
    int (*pause)(void);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    __sighandler_t (*signal)(int, __sighandler_t); // also bsd_signal and ssignal: one function in glibc
    __sighandler_t (*sysv_signal)(int, __sighandler_t);
    __sighandler_t (*sigset)(int, __sighandler_t);
    int (*siginterrupt)(int, int);
    int (*sigignore)(int);
} hw_real_calls;

extern hw_real_calls hw_real;

/// The agent is built with hidden visibility so its own calls are direct;
/// only the functions it interposes are exported.
#define HW_EXPORT __attribute__((visibility("default")))
void hw_resolve_real_calls(void);

/// Another library's constructor may wait before ours has run.
#define HW_ENSURE_REAL_CALLS() \
    do { if (__builtin_expect(!hw_real.sigsuspend, 0)) hw_resolve_real_calls(); } while (0)
#endif
