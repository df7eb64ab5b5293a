/*
 * blocking_calls: a C epoll loop whose one event blocks the main thread in a
 * known way, for hangwatch's hang-kind tests (blocked vs running, lock owner).
 *
 *   cc -O2 -g -o blocking_calls blocking_calls.c -lpthread
 *   blocking_calls MODE [--measure FILE] [--pid-file FILE] [--event-at MS] [--verbose]
 *
 * The main thread waits in epoll_wait on a 50 ms timerfd; at t=100 ms it runs
 * on_event(MODE), then idles until t=700 ms and exits 0 (--event-at MS: the
 * event at t=MS, the exit 600 ms later, so `hangwatch attach` can come first;
 * --pid-file FILE: the process id, written at start). Modes:
 *   join   pthread_join of a worker ("joined-worker") that computes 300 ms in
 *          joined_worker_compute();
 *   pipe   a blocking read() of a pipe a child process fills after 280 ms;
 *   mutex  pthread_mutex_lock of a mutex a thread named "lock-holder" holds
 *          for 350 ms while it computes in holder_compute();
 *   cpu    main_compute() for 400 ms on the main thread;
 *   mixed  main_compute() for 200 ms, then a read() of a pipe a child fills
 *          after 200 ms more.
 * Adversarial modes for the owner sampler (its signals must stay invisible):
 *   mutex-sigblock  as mutex, but the holder blocks SIGPROF while it holds the
 *                   lock and prints whether a SIGPROF was left pending;
 *   mutex-handler   as mutex, with the program's own SIGPROF handler counting
 *                   what it receives (none: nobody sends it one);
 *   mutex-exec      the holder execs `/bin/echo owner-exec` while the main
 *                   thread waits for its lock (the exec ends every thread).
 *
 * stdout: one line per event, `event mode=M result=R waited_ms=W`, so that
 * a run under hangwatch can be compared with a plain one.
 * --measure FILE: `on_event <startNs> <endNs> <durationMs>` per event, and
 * `cpu on_event <ms>`: the main thread's own CPU time (CLOCK_THREAD_CPUTIME_ID)
 * during the event, to check hangwatch's figure against.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ULL
#define DEMO_NAME "blocking_calls"
#include "demo_support.h"

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Real arithmetic until a deadline; not inlined so callers keep their frames. */
__attribute__((noinline)) static uint64_t mix_until(uint64_t deadline, uint64_t h)
{
    do {
        for (int i = 0; i < 2000; i++) h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    } while (now_ns() < deadline);
    return h;
}

__attribute__((noinline)) void joined_worker_compute(void)
{
    sink += mix_until(now_ns() + 300 * MS, 1);
    __asm__ volatile("" ::: "memory"); /* work after the call: no tail call */
}

static void *joined_worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "joined-worker");
    joined_worker_compute();
    return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *holder_mode = "";
static volatile sig_atomic_t program_sigprofs;
static void on_program_sigprof(int sig) { (void)sig; program_sigprofs++; }
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static int started;

__attribute__((noinline)) void holder_compute(void)
{
    sink += mix_until(now_ns() + 350 * MS, 2);
    __asm__ volatile("" ::: "memory");
}

static void *lock_holder(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "lock-holder");
    sigset_t prof, old;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    if (strcmp(holder_mode, "mutex-sigblock") == 0) pthread_sigmask(SIG_BLOCK, &prof, &old);
    pthread_mutex_lock(&lock);
    pthread_mutex_lock(&started_lock);
    started = 1;
    pthread_cond_signal(&started_cond);
    pthread_mutex_unlock(&started_lock);
    holder_compute();
    if (strcmp(holder_mode, "mutex-exec") == 0) {
        char *args[] = { "/bin/echo", "owner-exec", NULL };
        execv(args[0], args);
        _exit(3);
    }
    if (strcmp(holder_mode, "mutex-sigblock") == 0) {
        sigset_t pending;
        sigpending(&pending);
        printf("holder sigprof_pending=%d\n", sigismember(&pending, SIGPROF));
        fflush(stdout);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

__attribute__((noinline)) void main_compute(uint64_t ms)
{
    sink += mix_until(now_ns() + ms * MS, 3);
    __asm__ volatile("" ::: "memory");
}

/* A child writes one byte after `delay_ms`; the parent reads it (blocking). */
__attribute__((noinline)) static long read_from_child(unsigned delay_ms)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0) {}
        (void)!write(fds[1], "x", 1);
        _exit(0);
    }
    close(fds[1]);
    char c = 0;
    ssize_t n = read(fds[0], &c, 1);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return n == 1 && c == 'x' ? 1 : -1;
}

__attribute__((noinline)) long wait_for_pipe(unsigned delay_ms)
{
    long r = read_from_child(delay_ms);
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) long join_worker(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, joined_worker, NULL) != 0) return -1;
    long r = pthread_join(t, NULL) == 0 ? 1 : -1;
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) long wait_for_lock(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, lock_holder, NULL) != 0) return -1;
    pthread_mutex_lock(&started_lock);
    while (!started) pthread_cond_wait(&started_cond, &started_lock);
    pthread_mutex_unlock(&started_lock);
    pthread_mutex_lock(&lock); /* held by lock-holder for 350 ms */
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    __asm__ volatile("" ::: "memory");
    return 1;
}

static long on_event(const char *mode)
{
    if (strcmp(mode, "join") == 0) return join_worker();
    if (strcmp(mode, "pipe") == 0) return wait_for_pipe(280);
    if (strcmp(mode, "mutex") == 0) return wait_for_lock();
    if (strncmp(mode, "mutex-", 6) == 0) {
        holder_mode = mode;
        if (strcmp(mode, "mutex-handler") == 0) signal(SIGPROF, on_program_sigprof);
        long r = wait_for_lock();
        if (strcmp(mode, "mutex-handler") == 0) printf("program sigprofs=%d\n", (int)program_sigprofs);
        return r;
    }
    if (strcmp(mode, "cpu") == 0) { main_compute(400); return 1; }
    if (strcmp(mode, "mixed") == 0) { main_compute(200); return wait_for_pipe(200); }
    return -2;
}

int main(int argc, char **argv)
{
    t_start = now_ns();
    const char *mode = argc > 1 ? argv[1] : "";
    uint64_t event_at = 100 * MS;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--measure") == 0 && i + 1 < argc)
            measure_fd = open(argv[++i], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        else if (strcmp(argv[i], "--event-at") == 0 && i + 1 < argc)
            event_at = (uint64_t)atol(argv[++i]) * MS;
        else if (strcmp(argv[i], "--pid-file") == 0 && i + 1 < argc)
            write_pid_file(argv[++i]);
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec its = { { 0, 50 * 1000000L }, { 0, 50 * 1000000L } };
    timerfd_settime(tfd, 0, &its, NULL);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = tfd };
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    int done = 0;
    while (now_ns() - t_start < event_at + 600 * MS) {
        struct epoll_event got;
        int n = epoll_wait(ep, &got, 1, 100);
        if (n == 1) {
            uint64_t ticks;
            (void)!read(tfd, &ticks, sizeof ticks);
        }
        if (!done && now_ns() - t_start >= event_at) {
            done = 1;
            uint64_t start = now_ns(), cpu0 = thread_cpu_ns();
            long result = on_event(mode);
            uint64_t end = now_ns(), cpu1 = thread_cpu_ns();
            record("on_event", start, end);
            char line[128];
            int len = snprintf(line, sizeof line, "cpu on_event %.3f\n", (cpu1 - cpu0) / 1e6);
            if (measure_fd >= 0) write_all(measure_fd, line, (size_t)len);
            printf("event mode=%s result=%ld waited_ms=%.0f\n", mode, result, (end - start) / 1e6);
            fflush(stdout);
        }
    }
    return done ? 0 : 1;
}
