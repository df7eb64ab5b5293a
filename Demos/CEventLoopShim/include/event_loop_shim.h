// The C shim of EventLoopServerDemo, shaped like SwiftNIO's CNIOLinux: the
// demo's event loops wait through this statically linked C code, so their
// epoll_wait is an import of the demo's own executable, as NIO's is.
#ifndef EVENT_LOOP_SHIM_H
#define EVENT_LOOP_SHIM_H
#include <stdint.h>

/// EPOLLIN, and EPOLLIN with EPOLLEXCLUSIVE (one waiter woken per event).
#define EVENT_LOOP_READABLE 1u
#define EVENT_LOOP_READABLE_EXCLUSIVE 0x10000001u

/// An eventfd (non-blocking, close-on-exec) to wake a loop.
int event_loop_wake_fd(void);
/// accept4 on a non-blocking listener: a non-blocking connection, or -1.
int event_loop_accept(int listener);
/// epoll_create1(EPOLL_CLOEXEC).
int event_loop_create(void);
/// Watch `fd` for `events` (EVENT_LOOP_READABLE…); 0 or -1.
int event_loop_add(int epfd, int fd, uint32_t events);
/// Stop watching `fd`.
int event_loop_remove(int epfd, int fd);
/// epoll_wait on `epfd`: up to `max` ready descriptors into `fds`, their
/// events into `events`. Returns epoll_wait's result (errno as it left it).
int event_loop_wait(int epfd, int *fds, uint32_t *events, int max, int timeout_ms);
/// The same through epoll_pwait, with no signal mask.
int event_loop_pwait(int epfd, int *fds, uint32_t *events, int max, int timeout_ms);
/// ppoll (a GNU extension Swift does not see) on `n` struct pollfd at `fds`
/// with the struct timespec at `timeout` (NULL: none), no signal mask.
int event_loop_ppoll(void *fds, unsigned long n, const void *timeout);
/// Names the calling thread (pthread_setname_np, at most 15 bytes).
void event_loop_name_thread(const char *name);
#endif
