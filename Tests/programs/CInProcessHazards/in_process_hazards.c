#define _GNU_SOURCE
#include "in_process_hazards.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ms_since(uint64_t start) { return (int)((now_ns() - start) / 1000000); }

static void spin_ns(uint64_t ns) {
    uint64_t start = now_ns();
    while (now_ns() - start < ns) {}
}

/// Installs `handler` and unblocks `sig`: a program started from a thread
/// that blocks it (a test runner's dispatch worker) inherits the mask.
static void on_signal(int sig, void (*handler)(int)) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

// MARK: a first wait inside a signal handler

static __thread volatile sig_atomic_t handled_here;
static volatile int first_ready;

static void first_wait_handler(int sig) {
    (void)sig;
    int saved = errno;
    struct timespec t = { 0, 1000 };
    nanosleep(&t, NULL); // async-signal-safe, and this thread's first wait
    handled_here = 1;
    errno = saved;
}

static void *first_wait_thread(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "hz-first-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    __atomic_store_n(&first_ready, 1, __ATOMIC_RELEASE);
    // Large enough to pass the per-thread cache: the arena's lock is taken.
    while (!handled_here) {
        void *p = malloc(40000);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        free(p);
    }
    return NULL;
}

void hazard_first_wait_in_handler(int threads) {
    on_signal(SIGUSR2, first_wait_handler);
    int stuck = 0;
    for (int i = 0; i < threads; i++) {
        __atomic_store_n(&first_ready, 0, __ATOMIC_RELEASE);
        pthread_t t;
        if (pthread_create(&t, NULL, first_wait_thread, (void *)(intptr_t)i) != 0) break;
        while (!__atomic_load_n(&first_ready, __ATOMIC_ACQUIRE)) {}
        spin_ns(200000 + (uint64_t)(i % 7) * 37000);
        pthread_kill(t, SIGUSR2);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 2;
        if (pthread_timedjoin_np(t, NULL, &deadline) != 0) {
            stuck++;
            pthread_detach(t);
        }
    }
    printf("first-wait-in-handler threads=%d stuck=%d\n", threads, stuck);
    fflush(stdout);
}

static volatile int storm_done;

static volatile int storm_handled;

static void storm_handler(int sig) {
    (void)sig;
    int saved = errno;
    storm_handled = 1;
    struct timespec t = { 0, 1 };
    nanosleep(&t, NULL);
    errno = saved;
}

static void *storm_thread(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "hz-storm-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    __atomic_store_n(&first_ready, 1, __ATOMIC_RELEASE);
    struct timespec t = { 0, 1000 };
    nanosleep(&t, NULL); // the first wait: the thread is registered here, signals landing meanwhile
    __atomic_store_n(&storm_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

void hazard_first_wait_under_signals(int threads) {
    on_signal(SIGUSR2, storm_handler);
    int stuck = 0;
    storm_handled = 0;
    for (int i = 0; i < threads; i++) {
        __atomic_store_n(&first_ready, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&storm_done, 0, __ATOMIC_RELEASE);
        pthread_t t;
        if (pthread_create(&t, NULL, storm_thread, (void *)(intptr_t)i) != 0) break;
        while (!__atomic_load_n(&first_ready, __ATOMIC_ACQUIRE)) {}
        uint64_t start = now_ns();
        // A storm of at most 200 ms (a thread may make no progress under it,
        // plain too); after it, a thread that is not stuck finishes at once.
        while (!__atomic_load_n(&storm_done, __ATOMIC_ACQUIRE) && now_ns() - start < 200000000ull) pthread_kill(t, SIGUSR2);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 2;
        if (pthread_timedjoin_np(t, NULL, &deadline) != 0) {
            stuck++;
            pthread_detach(t);
        }
    }
    printf("first-wait-under-signals threads=%d stuck=%d handled=%d\n", threads, stuck, storm_handled);
    fflush(stdout);
}

// MARK: a blocking poll inside an epoll loop's handler

static void *poll_loop_thread(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "hz-loop-poll");
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev[4];
    for (int i = 0; i < 5; i++) epoll_wait(epfd, ev, 4, 20);
    int fds[2];
    if (pipe(fds) != 0) return NULL;
    // The handler: waits on a peer that never answers.
    struct pollfd p = { fds[0], POLLIN, 0 };
    uint64_t start = now_ns();
    int rc = poll(&p, 1, 300);
    int took = ms_since(start);
    for (int i = 0; i < 5; i++) epoll_wait(epfd, ev, 4, 20);
    printf("poll-in-handler rc=%d handlerms=%d\n", rc, took);
    fflush(stdout);
    close(fds[0]);
    close(fds[1]);
    close(epfd);
    return NULL;
}

void hazard_poll_in_handler(void) {
    pthread_t t;
    pthread_create(&t, NULL, poll_loop_thread, NULL);
    pthread_join(t, NULL);
}

// MARK: an epoll wait inside a handler that interrupts the loop's wait

static int nested_epfd = -1;
static volatile int nested_rc = 99;

static void nested_handler(int sig) {
    (void)sig;
    int saved = errno;
    struct epoll_event ev[1];
    nested_rc = epoll_wait(nested_epfd, ev, 1, 5);
    errno = saved;
}

static volatile int nested_waiting;

static void *nested_loop_thread(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "hz-loop-nested");
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev[4];
    for (int i = 0; i < 3; i++) epoll_wait(epfd, ev, 4, 20);
    __atomic_store_n(&nested_waiting, 1, __ATOMIC_RELEASE);
    uint64_t start = now_ns();
    int rc = epoll_wait(epfd, ev, 4, 1000);
    int err = errno;
    int took = ms_since(start);
    for (int i = 0; i < 3; i++) epoll_wait(epfd, ev, 4, 20);
    printf("nested-epoll rc=%d errno=%d inner=%d elapsedms=%d\n", rc, err, nested_rc, took);
    fflush(stdout);
    close(epfd);
    return NULL;
}

void hazard_nested_epoll_in_handler(void) {
    nested_epfd = epoll_create1(EPOLL_CLOEXEC);
    on_signal(SIGUSR2, nested_handler);
    pthread_t t;
    pthread_create(&t, NULL, nested_loop_thread, NULL);
    while (!__atomic_load_n(&nested_waiting, __ATOMIC_ACQUIRE)) {}
    spin_ns(400000000ull);
    pthread_kill(t, SIGUSR2);
    pthread_join(t, NULL);
    close(nested_epfd);
}

// MARK: function identity

void hazard_function_identity(void) {
    struct {
        const char *name;
        void *taken;
    } fns[] = {
        { "epoll_wait", (void *)&epoll_wait }, { "epoll_pwait", (void *)&epoll_pwait },
        { "poll", (void *)&poll },             { "ppoll", (void *)&ppoll },
        { "usleep", (void *)&usleep },         { "nanosleep", (void *)&nanosleep },
        { "clock_nanosleep", (void *)&clock_nanosleep },
    };
    int same = 0, n = (int)(sizeof fns / sizeof fns[0]);
    for (int i = 0; i < n; i++) same += fns[i].taken == dlsym(RTLD_DEFAULT, fns[i].name);
    printf("function-identity same=%d of=%d\n", same, n);
    fflush(stdout);
}

// MARK: fork

static void *fork_thread(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "hz-loop-fork");
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev[4];
    for (int i = 0; i < 3; i++) epoll_wait(epfd, ev, 4, 10);
    spin_ns(150000000ull); // busy, maybe sampled, when it forks
    pid_t child = fork();
    if (child == 0) {
        uint64_t start = now_ns();
        errno = 55;
        int rc = epoll_wait(epfd, ev, 4, 50);
        int e1 = errno;
        int t1 = ms_since(start);
        spin_ns(150000000ull);
        struct timespec t = { 0, 30000000 };
        start = now_ns();
        int rc2 = nanosleep(&t, NULL);
        int t2 = ms_since(start);
        printf("fork-child epoll rc=%d errno=%d elapsedms=%d nanosleep rc=%d elapsedms=%d\n", rc, e1, t1, rc2, t2);
        fflush(stdout);
        _exit(7);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("fork-parent child-status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    fflush(stdout);
    close(epfd);
    return NULL;
}

void hazard_fork_child(void) {
    pthread_t t;
    pthread_create(&t, NULL, fork_thread, NULL);
    pthread_join(t, NULL);
}
