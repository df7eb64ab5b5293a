/*
 * seccomp_tsync: a program that puts a seccomp filter on all its threads
 * (SECCOMP_FILTER_FLAG_TSYNC), as a sandboxing runtime does, then hangs.
 *
 *   seccomp_tsync [hang-first | mid-hang] [--measure FILE]
 *
 * The filter kills the process (SECCOMP_RET_KILL_PROCESS) for
 * perf_event_open, process_vm_readv, process_vm_writev and every open
 * (open, openat, openat2: a filter cannot read the path, so "no /proc
 * files" means no opens). The program needs none of them after it: it hangs
 * 400 ms on the CPU and 300 ms in nanosleep inside its loop, then exits.
 *
 * hang-first: one hang (550 ms) before the filter, so the watchdog has sampled
 * (opened /proc files, perf_event_open, copied stacks) and holds its
 * descriptors when the filter arrives.
 *
 * mid-hang: another thread installs the filter 150 ms into the CPU hang,
 * while the watchdog samples it (as a runtime's sandbox thread would).
 *
 * Under hangwatch the filter binds the watchdog thread too: its next /proc
 * open, stack copy or perf_event_open would kill the program. stdout and
 * the exit status must be those of a plain run.
 */
#include "safety.h"

#include <stdbool.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <sys/syscall.h>

#define KILL_IF(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static int install_filter(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        KILL_IF(SYS_perf_event_open),
        KILL_IF(SYS_process_vm_readv),
        KILL_IF(SYS_process_vm_writev),
        KILL_IF(SYS_open),
        KILL_IF(SYS_openat),
        KILL_IF(437 /* openat2 */),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

__attribute__((noinline)) static void work_under_filter(void) { spin_ms(400); }

__attribute__((noinline)) static void sleep_under_filter(void)
{
    struct timespec ts = {0, 300 * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    __asm__ volatile("" ::: "memory");
}

static int filter_rc, filter_errno;

static void *install_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    filter_rc = install_filter();
    filter_errno = filter_rc ? errno : 0;
    return NULL;
}

__attribute__((noinline)) static void work_before_filter(void) { spin_ms(550); }

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    bool hang_first = argc > 1 && !strcmp(argv[1], "hang-first");
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    if (hang_first) {
        MEASURED("before_filter", work_before_filter());
        for (int i = 0; i < 3; i++)
            loop_wait(10);
    }
    if (argc > 1 && !strcmp(argv[1], "mid-hang")) {
        pthread_t installer;
        pthread_create(&installer, NULL, install_later, NULL);
        MEASURED("cpu_under_filter", work_under_filter());
        pthread_join(installer, NULL);
    } else {
        filter_rc = install_filter();
        filter_errno = filter_rc ? errno : 0;
        for (int i = 0; i < 3; i++)
            loop_wait(10);
        MEASURED("cpu_under_filter", work_under_filter());
    }
    out("TSYNC filter: rc %d %s, seccomp mode %d", filter_rc, errname(filter_errno), prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
    for (int i = 0; i < 3; i++)
        loop_wait(10);
    MEASURED("sleep_under_filter", sleep_under_filter());
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    out("hung twice under the filter");
    return 0;
}
