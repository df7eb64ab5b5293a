/*
 * Shared by the wrapper-safety programs in Tests/wrappers, which run the
 * same way plain and under `hangwatch run` and print what they observed:
 *
 *   <check> key=value ...   compared between the two runs: values of keys
 *                           ending in "ms" within a timing tolerance, all
 *                           others exactly (return values, errno, flags...)
 *   info <what> <n>         facts about the run itself, not compared
 *
 * Samples that land inside a wait. The watchdog only signals a thread that
 * /proc shows running, so a sample lands in a wait only when it races with
 * the thread entering it: too rare to test by waiting for it. Two ways
 * make it certain:
 *  - the program blocks SIGPROF for the last milliseconds of a busy period
 *    (samples are then left pending) and waits with a call whose mask lets
 *    them in (ppoll, pselect, epoll_pwait, sigsuspend): the pending sample
 *    is delivered inside the wait, as a real race would deliver it;
 *  - a helper thread sends the sampler's own signal (SIGPROF, SI_QUEUE from
 *    this pid, the sampler's cookie: bit for bit what the watchdog sends) to
 *    the waiting thread at chosen times. Only under hangwatch: plain, a
 *    SIGPROF would kill the program, which is also what happens if the agent
 *    ever stops recognising it.
 */
#ifndef WRAP_SUPPORT_H
#define WRAP_SUPPORT_H
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLER_COOKIE 0x48574348 /* HW_SAMPLE_COOKIE in CSupport/engine/engine_internal.h */

static pid_t main_tid;
static pthread_t main_thread;
static volatile uint64_t sink;
static unsigned forged;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double ms_since(uint64_t t0) { return (double)(now_ns() - t0) / 1e6; }

/* CPU-bound work: the watched thread is busy and sampled with signals. */
__attribute__((noinline)) static void spin_ms(unsigned ms)
{
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull, x = sink;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static int under_hangwatch(void) { return getenv("HANGWATCH_LOG") != NULL; }

/* The sampler's signal, to thread `tid`. SIGNAL-SAFE. */
static void forge_sample(pid_t tid)
{
    if (!under_hangwatch()) return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = SAMPLER_COOKIE;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGPROF, &si);
    __atomic_fetch_add(&forged, 1, __ATOMIC_RELAXED);
}

/* ---- the helper thread: acts at fixed times after the main thread asks ---- */

enum { ACT_FORGE = 1, ACT_SIGNAL, ACT_WRITE };
struct action { unsigned at_ms; int what; int arg; };

static struct action plan[8];
static uint64_t acted_ns[8]; /* when each action was actually done (the helper may run late) */
static int plan_len;
static uint64_t plan_t0;
static sem_t plan_go, plan_done;

static void *helper_main(void *unused)
{
    (void)unused;
    for (;;) {
        while (sem_wait(&plan_go) != 0) {}
        for (int i = 0; i < plan_len; i++) {
            uint64_t at = plan_t0 + (uint64_t)plan[i].at_ms * 1000000ull;
            struct timespec ts = { (time_t)(at / 1000000000ull), (long)(at % 1000000000ull) };
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
            __atomic_store_n(&acted_ns[i], now_ns(), __ATOMIC_RELEASE);
            switch (plan[i].what) {
            case ACT_FORGE: forge_sample(main_tid); break;
            case ACT_SIGNAL: pthread_kill(main_thread, plan[i].arg); break;
            case ACT_WRITE: (void)!write(plan[i].arg, "x", 1); break;
            }
        }
        sem_post(&plan_done);
    }
    return NULL;
}

/* A program that hangs fails its test in bounded time, whatever the agent does
 * to its waits: a raw sleep, then exit 99. */
static void *deadline_main(void *unused)
{
    (void)unused;
    struct timespec ts = { 50, 0 };
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, &ts) != 0) {}
    static const char msg[] = "wrapper test program: still running after 50 s\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(99);
}

static void helper_start(void)
{
    main_tid = (pid_t)syscall(SYS_gettid);
    main_thread = pthread_self();
    /* Start from a known mask: a test runner may have spawned us with signals blocked. */
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    sem_init(&plan_go, 0, 0);
    sem_init(&plan_done, 0, 0);
    /* The helper must take none of the program's signals meant for the main thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, helper_main, NULL) != 0 || pthread_create(&t, NULL, deadline_main, NULL) != 0) {
        perror("pthread_create");
        exit(1);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Run `n` actions at their times from now; returns now. */
static uint64_t schedule(const struct action *a, int n)
{
    memcpy(plan, a, sizeof *a * (size_t)n);
    plan_len = n;
    plan_t0 = now_ns();
    sem_post(&plan_go);
    return plan_t0;
}

static void schedule_done(void)
{
    while (sem_wait(&plan_done) != 0) {}
}

/* Milliseconds from when action `i` was done to `end`: how long a wait went
 * on after the event that should end it, whatever the helper's lateness. */
static double ms_after_action(int i, uint64_t end)
{
    uint64_t at = __atomic_load_n(&acted_ns[i], __ATOMIC_ACQUIRE);
    return end > at ? (double)(end - at) / 1e6 : -(double)(at - end) / 1e6;
}

/* ---- the watched loop ------------------------------------------------------- */

static int loop_pipe[2] = { -1, -1 };

/* The loop's own wait (the first fd wait of the main thread, from one call
 * site): each check below runs in a busy period of its own after it. */
__attribute__((noinline)) static void loop_wait(void)
{
    if (loop_pipe[0] < 0 && pipe(loop_pipe) != 0) { perror("pipe"); exit(1); }
    struct pollfd p = { .fd = loop_pipe[0], .events = POLLIN };
    poll(&p, 1, 5);
}

static void report(const char *check, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(const char *check, const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%s ", check);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
}
#endif
