// C support linked into the `hangwatch` executable only (never into the
// library, which runs inside the user's program).
#ifndef HANGWATCH_CLI_SUPPORT_H
#define HANGWATCH_CLI_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/// libunwind's signal-mask calls are answered without a system call
/// (unwind_mask.c). Its code is found when the executable loads; calling
/// this from main also keeps the file linked in.
void hw_cli_unwind_mask_shortcut_install(void);

/// pidfd_open(2) of a child: a descriptor that polls readable once the child
/// has exited (child_exit.c). -1 with errno set where the kernel lacks it.
int hw_cli_pidfd_open(int pid);

/// Opens a disabled, never-counting perf event on the calling thread, which
/// keeps the kernel's per-task perf hooks on so that the agent's sampling
/// events open in microseconds instead of milliseconds (perf_warm.c). Returns
/// the descriptor (close it when the program has ended), or -errno when perf
/// events are refused or a seccomp filter is on this process.
int hw_cli_keep_perf_warm(void);

#include "hangwatch_log.h"
#include <signal.h>

/// Starts `path` (spawn.c): like posix_spawn with POSIX_SPAWN_SETSIGMASK
/// `mask` (NULL: the caller's mask), and with SIGCHLD ignored in the program
/// when `sigchld_ignored` (hangwatch was started with it ignored and has
/// since set its own back to the default). Returns 0 and sets *pid_out, or
/// the errno of the failed fork or execve.
int hw_cli_spawn(int *pid_out, const char *path, char *const argv[], char *const envp[],
                 const sigset_t *mask, int sigchld_ignored);

/// A thread that waits for a child's exit and then wakes the log's parked
/// reader (exit_watch.c).
typedef struct hw_cli_exit_watch hw_cli_exit_watch;
/// Starts watching `pidfd` (a pidfd_open descriptor). NULL when it cannot.
hw_cli_exit_watch *hw_cli_exit_watch_start(int pidfd, hw_log_header *log);
/// Set once the child has exited: the `stop` word of hw_log_reader_park.
const uint32_t *hw_cli_exit_watch_flag(const hw_cli_exit_watch *w);
/// Joins the thread (call after the child has exited) and frees the watch.
void hw_cli_exit_watch_finish(hw_cli_exit_watch *w);

#ifdef __cplusplus
}
#endif
#endif
