/*
 * ignored_sigprof: a program that ignores SIGPROF (issue 31).
 *
 *   ignored_sigprof sleep|exec [--measure FILE]
 *
 *   sleep  SIGPROF ignored with signal(); a raw 300 ms nanosleep (the
 *          syscall, which no wrapper resumes) while another thread sends
 *          SIGPROF to the sleeping thread with tgkill every 20 ms. Plain,
 *          the kernel drops each one and the sleep runs to its end. Then
 *          150 ms of work in the same busy period.
 *   exec   SIGPROF ignored with signal(), then the program execs itself:
 *          the new image starts with SIGPROF ignored (an ignored signal
 *          stays ignored across exec).
 *
 * stdout: the sleep's result and duration class, and whether
 * /proc/self/status lists SIGPROF as ignored (SigIgn) and caught (SigCgt).
 */
#include "safety.h"

#include <pthread.h>
#include <sys/syscall.h>

static pid_t sleeper;
static volatile int stop_sending;

/* One bit of a /proc/self/status mask line ("SigIgn:\t0000000004000000"). */
static const char *status_has(const char *field, int sig)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return "unreadable";
    buf[n] = 0;
    const char *at = strstr(buf, field);
    if (!at)
        return "missing";
    unsigned long long mask = strtoull(at + strlen(field), NULL, 16);
    return (mask >> (sig - 1)) & 1 ? "yes" : "no";
}

static void show_status(const char *when)
{
    out("%s: SIGPROF ignored %s, caught %s", when, status_has("SigIgn:", SIGPROF), status_has("SigCgt:", SIGPROF));
}

static void *sender(void *arg)
{
    (void)arg;
    usleep(30000);
    for (int i = 0; i < 12 && !stop_sending; i++) {
        syscall(SYS_tgkill, getpid(), sleeper, SIGPROF);
        usleep(20000);
    }
    return NULL;
}

static int sleep_mode(void)
{
    signal(SIGPROF, SIG_IGN);
    show_status("after signal(SIGPROF, SIG_IGN)");
    loop_wait(1);
    loop_wait(20);
    sleeper = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    struct timespec req = {0, 300 * 1000000};
    uint64_t s = now_ns();
    long rc = syscall(SYS_nanosleep, &req, NULL);
    int e = errno;
    double ms = ms_since(s);
    stop_sending = 1;
    pthread_join(t, NULL);
    out("raw nanosleep 300 ms with SIGPROF sent to it: rc %ld %s, time %s", rc, rc < 0 ? errname(e) : "0",
        judge(ms, 300, 450));
    show_status("after the sleep");
    spin_ms(150); /* running: with the SIGPROF sampler, the signal it cannot send */
    loop_wait(20);
    return 0;
}

static int exec_mode(char **argv)
{
    signal(SIGPROF, SIG_IGN);
    loop_wait(1);
    loop_wait(20);
    char *args[] = {argv[0], "exec-child", NULL};
    if (sf_measure_path) {
        char *with[] = {argv[0], "exec-child", "--measure", (char *)sf_measure_path, NULL};
        execv(argv[0], with);
    } else {
        execv(argv[0], args);
    }
    out("execv failed: %s", errname(errno));
    return 1;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "exec-child")) {
        show_status("the new image at start");
        return 0;
    }
    if (!strcmp(mode, "sleep"))
        return sleep_mode();
    if (!strcmp(mode, "exec"))
        return exec_mode(argv);
    fprintf(stderr, "usage: ignored_sigprof sleep|exec [--measure FILE]\n");
    return 2;
}
