// Starts the program to watch. posix_spawn would do, but for one case: a
// parent that ran hangwatch with SIGCHLD ignored. The program must start with
// it ignored too (exec keeps an ignored SIGCHLD), while hangwatch itself must
// not ignore it: the kernel would reap the program at its exit, and wait4
// would find no status to report (hangwatch said 0 for a program that failed).
// posix_spawn can only give the child a signal's default action, so the child
// side of vfork sets SIGCHLD back to ignored just before execve.
#include "hangwatch_cli_support.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int hw_cli_spawn(int *pid_out, const char *path, char *const argv[], char *const envp[],
                 const sigset_t *mask, int sigchld_ignored) {
    // Every signal blocked while the child shares our memory: no handler of
    // hangwatch's may run in it before it has reset them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    volatile int exec_errno = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        // The child, until execve: async-signal-safe calls only, nothing written
        // to shared memory but exec_errno. Caught signals go back to their default
        // (exec would do that too, but a signal let through by the mask below must
        // not run a handler here); ignored ones stay ignored, as posix_spawn leaves them.
        struct sigaction dfl = { .sa_handler = SIG_DFL }, cur;
        for (int sig = 1; sig < NSIG; sig++) {
            if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &cur) != 0) continue;
            if (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL) continue;
            sigaction(sig, &dfl, NULL);
        }
        if (sigchld_ignored) {
            struct sigaction ign = { .sa_handler = SIG_IGN };
            sigaction(SIGCHLD, &ign, NULL);
        }
        sigprocmask(SIG_SETMASK, mask ? mask : &old, NULL);
        execve(path, argv, envp);
        exec_errno = errno;
        _exit(127);
    }
    int err = pid < 0 ? errno : exec_errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) return err;
    if (err) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {} // the child that could not exec
        return err;
    }
    *pid_out = pid;
    return 0;
}
