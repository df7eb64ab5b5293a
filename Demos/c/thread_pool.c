/*
 * thread_pool: a process with many threads, each in a known state, for
 * `hangwatch dump` and `hangwatch attach` tests.
 *
 *   cc -O2 -g -o thread_pool thread_pool.c -lpthread
 *   thread_pool [--threads N] [--pid-file FILE] [--seconds S] [--sleeps FILE]
 *
 * The main thread spins in spin_in_checksum() (CPU, never returns until the
 * end). Thread "sleeper" sleeps in nap_in_storage() (nanosleep, 50 ms at a
 * time). Thread "locker" waits in wait_for_index_lock() on a mutex the main
 * thread holds. The others ("pool-N") wait on a condition variable in
 * idle_worker(). N counts every thread, the main one included (default 50).
 * The program exits 0 after S seconds (default 10).
 *
 * --sleeps FILE: thread "sleeper" instead measures its own blocking calls
 * and appends one line per call to FILE:
 *     usleep <ret> <errno> <ms>      usleep(300 ms)
 *     poll <ret> <errno> <ms>        poll(230 ms) on an idle pipe
 *     epoll <ret> <errno> <ms>       epoll_wait(-1) on a 300 ms one-shot timerfd
 * in that order, repeated until the end; a call cut short, or an EINTR,
 * shows there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define DEMO_NAME "thread_pool"
#define MS_NS 1000000ULL
#include "demo_support.h"

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static volatile int done;
static uint64_t end_ns;
static const char *sleeps_path;

__attribute__((noinline)) void spin_in_checksum(void)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    /* The clock is read every ~1/4 M rounds (a few hundred µs): a dump must
     * catch this function on top, not clock_gettime, which on a VM without
     * a usable TSC is a real system call of microseconds. */
    while (now_ns() < end_ns) {
        for (int i = 0; i < (1 << 18); i++) h = (h ^ (uint64_t)i) * 0x100000001b3ULL;
    }
    sink += h;
}

__attribute__((noinline)) void nap_in_storage(void)
{
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    sink++;
}

__attribute__((noinline)) void wait_for_index_lock(void)
{
    pthread_mutex_lock(&index_lock);
    pthread_mutex_unlock(&index_lock);
    sink++;
}

__attribute__((noinline)) void idle_worker(void)
{
    pthread_mutex_lock(&pool_lock);
    while (!done) pthread_cond_wait(&pool_cond, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    sink++;
}

static void measure_line(int fd, const char *what, int ret, int err, uint64_t start)
{
    char line[128];
    int n = snprintf(line, sizeof line, "%s %d %d %.3f\n", what, ret, err, (now_ns() - start) / 1e6);
    write_all(fd, line, (size_t)n);
}

/* The blocking calls whose results must not change while hangwatch looks. */
static void measured_sleeps(void)
{
    int fd = open(sleeps_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int p[2];
    if (fd < 0 || pipe(p) != 0) return;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    while (now_ns() + 900 * MS_NS < end_ns) {
        uint64_t s = now_ns();
        errno = 0;
        int r = usleep(300000);
        measure_line(fd, "usleep", r, r ? errno : 0, s);
        struct pollfd pf = {p[0], POLLIN, 0};
        s = now_ns();
        r = poll(&pf, 1, 230);
        measure_line(fd, "poll", r, r < 0 ? errno : 0, s);
        struct itimerspec its = {{0, 0}, {0, 300 * 1000000L}};
        timerfd_settime(tfd, 0, &its, NULL);
        s = now_ns();
        r = epoll_wait(ep, &ev, 1, -1);
        measure_line(fd, "epoll", r, r < 0 ? errno : 0, s);
        uint64_t expirations;
        (void)!read(tfd, &expirations, sizeof expirations);
    }
    close(fd);
}

static void *thread_main(void *arg)
{
    long role = (long)arg;
    if (role == 1) {
        if (sleeps_path) measured_sleeps();
        while (!done) nap_in_storage();
    } else if (role == 2) {
        while (!done) wait_for_index_lock();
    } else {
        idle_worker();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    t_start = now_ns();
    int threads = 50;
    double seconds = 10;
    const char *pid_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--pid-file") && i + 1 < argc) pid_file = argv[++i];
        else if (!strcmp(argv[i], "--sleeps") && i + 1 < argc) sleeps_path = argv[++i];
        else {
            fprintf(stderr, "usage: thread_pool [--threads N] [--seconds S] [--pid-file FILE] [--sleeps FILE]\n");
            return 2;
        }
    }
    if (threads < 3) threads = 3;
    end_ns = t_start + (uint64_t)(seconds * 1e9);
    pthread_mutex_lock(&index_lock);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    for (long i = 1; i < threads; i++) {
        pthread_create(&ids[i], NULL, thread_main, (void *)i);
        char name[16];
        if (i == 1) snprintf(name, sizeof name, "sleeper");
        else if (i == 2) snprintf(name, sizeof name, "locker");
        else snprintf(name, sizeof name, "pool-%ld", i);
        pthread_setname_np(ids[i], name);
    }
    if (pid_file) write_pid_file(pid_file);
    spin_in_checksum();
    pthread_mutex_unlock(&index_lock);
    pthread_mutex_lock(&pool_lock);
    done = 1;
    pthread_cond_broadcast(&pool_cond);
    pthread_mutex_unlock(&pool_lock);
    for (int i = 1; i < threads; i++) pthread_join(ids[i], NULL);
    free(ids);
    return 0;
}
