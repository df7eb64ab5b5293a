/*
 * raw_handler_readback: a program that reads a signal's handler with the raw
 * rt_sigaction system call (as runtimes that bypass libc do) and hands the
 * value back through libc's sigaction to restore it.
 *
 *   raw_handler_readback [raw-write-back] [--measure FILE]
 *
 * raw-write-back: the raw read is written back with the raw call after
 * another handler was installed through libc; plain the first handler runs
 * again (and sigaction reads it back).
 *
 * Under hangwatch the kernel's disposition is the agent's trampoline, which
 * calls the program's handler; the raw read returns the trampoline. Handed
 * back, it must mean the handler the program installed, not the trampoline
 * calling itself (which recursed until the stack ran out).
 *
 * stdout: how many times the program's handler ran for one raise(): the
 * same plain and watched.
 */
#include "safety.h"

#include <sys/syscall.h>

static volatile sig_atomic_t hits, later_hits;

static void on_usr1(int sig)
{
    (void)sig;
    hits++;
}

static void later_usr1(int sig)
{
    (void)sig;
    later_hits++;
}

/* The kernel's struct sigaction for rt_sigaction(2) on x86_64. */
struct kernel_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    loop_wait(10);
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    struct kernel_sigaction raw;
    memset(&raw, 0, sizeof raw);
    if (syscall(SYS_rt_sigaction, SIGUSR1, NULL, &raw, sizeof raw.mask) != 0) {
        out("raw rt_sigaction: %s", strerror(errno));
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "raw-write-back")) {
        /* Another handler through libc, then the raw read written back raw: the first one again. */
        act.sa_handler = later_usr1;
        sigaction(SIGUSR1, &act, NULL);
        if (syscall(SYS_rt_sigaction, SIGUSR1, &raw, NULL, sizeof raw.mask) != 0) {
            out("raw rt_sigaction write: %s", strerror(errno));
            return 1;
        }
        raise(SIGUSR1);
        out("after a raw write-back: the first handler ran %d time(s), the later one %d", (int)hits,
            (int)later_hits);
        struct sigaction now;
        sigaction(SIGUSR1, NULL, &now);
        out("sigaction reads back the first handler: %s", now.sa_handler == on_usr1 ? "yes" : "no");
        loop_wait(10);
        return 0;
    }
    struct sigaction back;
    memset(&back, 0, sizeof back);
    back.sa_handler = (void (*)(int))raw.handler;
    sigaction(SIGUSR1, &back, NULL);
    raise(SIGUSR1);
    out("handler ran %d time(s) for one raise", (int)hits);
    loop_wait(10);
    return 0;
}
