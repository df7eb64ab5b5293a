// Hazards for the library's redirected waits (InProcessHazardChecks): each
// prints one line `<check> key=value ...` that must read the same plain and
// watched. The waits are made from this statically linked C code, so they go
// through the executable's own offset table, as a C shim's do.
#ifndef IN_PROCESS_HAZARDS_H
#define IN_PROCESS_HAZARDS_H

/// Fresh threads named `hz-first-N`, each busy in malloc and free, each sent
/// one signal whose handler sleeps 1 µs: that sleep is the thread's first
/// wait. Prints how many threads never finished within 2 s.
void hazard_first_wait_in_handler(int threads);

/// Fresh threads named `hz-storm-N` whose first wait (a 1 µs nanosleep)
/// is made while signals keep coming, each handler sleeping 1 ns. Prints
/// how many threads never finished within 2 s.
void hazard_first_wait_under_signals(int threads);

/// An epoll loop thread (`hz-loop-poll`) whose handler blocks 300 ms in
/// poll() on a pipe nobody writes: a hang of the loop. Prints the handler's
/// own duration as `handlerms`.
void hazard_poll_in_handler(void);

/// An epoll loop thread (`hz-loop-nested`) idle in a 1 s epoll_wait; after
/// 400 ms a signal handler on it waits 5 ms in an epoll_wait of its own.
/// The loop computes nothing: no hang.
void hazard_nested_epoll_in_handler(void);

/// Whether the addresses of the redirected functions, taken through this
/// image, equal dlsym's.
void hazard_function_identity(void);
/// A watched loop thread (`hz-loop-fork`) that has waited once forks; the
/// child, on that thread, waits and sleeps as a plain program would and
/// exits 7. Prints the child's status and its wait results.
void hazard_fork_child(void);
#endif
