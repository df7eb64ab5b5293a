// The in-process library's exec family: the program's imports of execve,
// execv, execvp, execvpe, fexecve, execveat and execl* are redirected here
// (got_redirect.c), so that sampling is quiesced before the new image starts
// (exec_guard.c): a SIGPROF of the fallback sampler that is pending when a
// thread enters execve stays pending in the new image, where it kills. Each
// wrapper calls what the loader would have bound (dlsym(RTLD_DEFAULT)) and
// resumes sampling when the exec fails, errno as the exec left it. glibc's
// execvp, execl* and fexecve call execve inside libc, never through an
// import, so each entry point is redirected on its own. posix_spawn and
// system() need nothing: their child is another process, which our signals
// never name.
#include "engine_internal.h"
#include "exec_args.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static struct {
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    execveat_fn execveat;
} real;

/// Runs `call` between hw_exec_prepare and hw_exec_failed, keeping errno.
#define GUARDED_EXEC(call)                 \
    do {                                   \
        bool prepared = hw_exec_prepare(); \
        int rc = (call);                   \
        int saved = errno;                 \
        hw_exec_failed(prepared);          \
        errno = saved;                     \
        return rc;                         \
    } while (0)

static int inprocess_execve(const char *path, char *const argv[], char *const envp[]) {
    GUARDED_EXEC(real.execve(path, argv, envp));
}

static int inprocess_execv(const char *path, char *const argv[]) { GUARDED_EXEC(real.execv(path, argv)); }

static int inprocess_execvp(const char *file, char *const argv[]) { GUARDED_EXEC(real.execvp(file, argv)); }

static int inprocess_execvpe(const char *file, char *const argv[], char *const envp[]) {
    GUARDED_EXEC(real.execvpe(file, argv, envp));
}

static int inprocess_fexecve(int fd, char *const argv[], char *const envp[]) {
    GUARDED_EXEC(real.fexecve(fd, argv, envp));
}

static int inprocess_execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
    GUARDED_EXEC(real.execveat(dirfd, path, argv, envp, flags));
}

// execl*: gathered into an argv on this stack (exec_args.h), then handed
// to the vector form above.

static int inprocess_execl(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    va_end(ap);
    return inprocess_execv(path, argv);
}

static int inprocess_execlp(const char *file, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    va_end(ap);
    return inprocess_execvp(file, argv);
}

static int inprocess_execle(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    size_t n = hw_exec_count_args(arg, ap);
    char *argv[n + 1];
    HW_GATHER_EXEC_ARGS(arg, ap, argv, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return inprocess_execve(path, argv, envp);
}

static bool wants_image(const char *path) { return !hw_inprocess_skips_image(path); }

uint32_t hw_inprocess_exec_install(void) {
    real.execve = (__typeof__(real.execve))dlsym(RTLD_DEFAULT, "execve");
    real.execv = (__typeof__(real.execv))dlsym(RTLD_DEFAULT, "execv");
    real.execvp = (__typeof__(real.execvp))dlsym(RTLD_DEFAULT, "execvp");
    real.execvpe = (__typeof__(real.execvpe))dlsym(RTLD_DEFAULT, "execvpe");
    real.fexecve = (__typeof__(real.fexecve))dlsym(RTLD_DEFAULT, "fexecve");
    real.execveat = (execveat_fn)dlsym(RTLD_DEFAULT, "execveat");
    // execl* go through the vector forms' reals: those must all be there.
    bool vectors = real.execv && real.execvp && real.execve;
    hw_got_target targets[] = {
        { "execve", real.execve ? (void *)inprocess_execve : NULL },
        { "execv", real.execv ? (void *)inprocess_execv : NULL },
        { "execvp", real.execvp ? (void *)inprocess_execvp : NULL },
        { "execvpe", real.execvpe ? (void *)inprocess_execvpe : NULL },
        { "fexecve", real.fexecve ? (void *)inprocess_fexecve : NULL },
        { "execveat", real.execveat ? (void *)inprocess_execveat : NULL },
        { "execl", vectors ? (void *)inprocess_execl : NULL },
        { "execlp", vectors ? (void *)inprocess_execlp : NULL },
        { "execle", vectors ? (void *)inprocess_execle : NULL },
    };
    return hw_got_redirect(targets, sizeof targets / sizeof targets[0], wants_image);
}
