// exec family. Each wrapper quiesces sampling before the real exec (see
// engine/exec_guard.c: no signal of ours may be pending when the new image
// starts, where SIGPROF kills) and resumes it if the exec fails. glibc's
// execvp, execl* and fexecve call execve internally, not through the PLT,
// so each entry point is wrapped on its own. posix_spawn and system() need
// nothing: their child is another process with another pid, and our signals
// only ever name threads of this one.
#include "agent_internal.h"
#include "../engine/exec_args.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/// Runs `call` between hw_exec_prepare and hw_exec_failed, keeping errno.
#define GUARDED_EXEC(call)               \
    do {                                 \
        bool prepared = hw_exec_prepare(); \
        int rc = (call);                 \
        int saved = errno;               \
        hw_exec_failed(prepared);        \
        errno = saved;                   \
        return rc;                       \
    } while (0)

HW_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
    static __typeof__(&execve) real;
    if (!real) real = REAL(execve);
    GUARDED_EXEC(real(path, argv, envp));
}

HW_EXPORT int execv(const char *path, char *const argv[]) {
    static __typeof__(&execv) real;
    if (!real) real = REAL(execv);
    GUARDED_EXEC(real(path, argv));
}

HW_EXPORT int execvp(const char *file, char *const argv[]) {
    static __typeof__(&execvp) real;
    if (!real) real = REAL(execvp);
    GUARDED_EXEC(real(file, argv));
}

HW_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    static __typeof__(&execvpe) real;
    if (!real) real = REAL(execvpe);
    GUARDED_EXEC(real(file, argv, envp));
}

HW_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
    static __typeof__(&fexecve) real;
    if (!real) real = REAL(fexecve);
    GUARDED_EXEC(real(fd, argv, envp));
}

typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
HW_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
    static execveat_fn real;
    if (!real) real = (execveat_fn)dlsym(RTLD_NEXT, "execveat");
    if (!real) { errno = ENOSYS; return -1; }
    GUARDED_EXEC(real(dirfd, path, argv, envp, flags));
}

// execl*: gathered into an argv on this stack (exec_args.h), then handed
// to the vector form above.

HW_EXPORT int execl(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    va_end(ap);
    return execv(path, argv);
}

HW_EXPORT int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    va_end(ap);
    return execvp(file, argv);
}

HW_EXPORT int execle(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
