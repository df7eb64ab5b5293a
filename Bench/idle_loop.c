/*
 * idle_loop: an idle event loop, for Bench/run.sh measures (b) and (i).
 *
 *   cc -O2 -pthread -o idle_loop idle_loop.c
 *   idle_loop [--ms 4000] [--tick-ms 100] [--threads N [--spread-ms M]] [--out FILE]
 *
 * The main thread sits in epoll_wait(-1) on a timerfd that ticks every
 * tick-ms; each tick's callback only reads the timerfd. After `ms` it exits.
 * This is what an idle RunLoop/CFRunLoop with a repeating Timer does.
 * --threads N adds N more such loops on threads named loop-1 ... loop-N
 * (event-loop threads, as `hangwatch run --thread 'loop-*'` watches them).
 * Their timers tick together (one absolute start for all), so the result
 * does not depend on how fast the threads were created; with --spread-ms M
 * loop K's timer is offset by M * K/(N+1) ms: a few ms is loops started one
 * after another, a whole tick is loops that wake at unrelated times.
 * With --out FILE, one line is appended at exit:
 *   wall_ns=<loop wall time> proc_cpu_ns=<CLOCK_PROCESS_CPUTIME_ID: every
 *   thread, an injected watchdog included> main_cpu_ns=<main thread only>
 *   ticks=<callbacks run> other_switches=<context switches of every thread
 *   but the main one: an injected watchdog's wakeups, counted by the kernel>
 *   steady_ns=<wall time from main's first tick 1 s in to its last>
 *   steady_cpu_ns=<process CPU over that window: idle cost without start-up>
 *   steady_watchdog_ns=<CPU of the thread named "hangwatch" over about that window>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether thread `tid` (a /proc/self/task entry) is named `name`. */
static int task_named(const char *tid, const char *name)
{
    char path[300], comm[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
    FILE *c = fopen(path, "r");
    if (!c) return 0;
    if (!fgets(comm, sizeof comm, c)) comm[0] = 0;
    fclose(c);
    comm[strcspn(comm, "\n")] = 0;
    return !strcmp(comm, name);
}

/* voluntary + involuntary context switches of every thread but the caller:
 * each wakeup of a thread that sleeps between wakeups is one switch away. */
static unsigned long long other_threads_switches(const char *only_named)
{
    unsigned long long total = 0;
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return 0;
    char self[32];
    snprintf(self, sizeof self, "%d", gettid());
    struct dirent *d;
    while ((d = readdir(dir))) {
        if (d->d_name[0] == '.' || !strcmp(d->d_name, self)) continue;
        char path[300], line[128];
        if (only_named && !task_named(d->d_name, only_named)) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", d->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long long n;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
                total += n;
        }
        fclose(f);
    }
    closedir(dir);
    return total;
}

/* CPU ns of the threads named `name` (schedstat's first field), summed. */
static uint64_t named_threads_cpu_ns(const char *name)
{
    uint64_t total = 0;
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return 0;
    struct dirent *d;
    while ((d = readdir(dir))) {
        if (d->d_name[0] == '.' || !task_named(d->d_name, name)) continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", d->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1) total += ns;
        if (f) fclose(f);
    }
    closedir(dir);
    return total;
}

static uint64_t total_ms = 4000, tick_ms = 100, first_tick_ns;
/* The steady window: from main's first tick 1 s in (every thread started,
 * named and through its first waits) to main's last: start-up is not idle cost. */
static uint64_t steady_from_ns, steady_start_ns, steady_start_cpu_ns, steady_end_ns, steady_end_cpu_ns;
static uint64_t steady_start_watchdog_ns;
static int threads;
static double spread_ms;

/* One loop: epoll_wait(-1) on its own timerfd until the end time; loop 0 is main's. */
static unsigned run_loop(int index, uint64_t end)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (ep < 0 || tfd < 0) { perror("idle_loop"); exit(1); }
    struct itimerspec its = {
        .it_interval = { (time_t)(tick_ms / 1000), (long)(tick_ms % 1000) * 1000000L },
    };
    uint64_t first = first_tick_ns + (uint64_t)(spread_ms * 1e6 * index / (threads + 1));
    its.it_value.tv_sec = (time_t)(first / 1000000000ull);
    its.it_value.tv_nsec = (long)(first % 1000000000ull);
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
    struct epoll_event e = { .events = EPOLLIN, .data.fd = tfd };
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &e);
    unsigned ticks = 0;
    while (clock_ns(CLOCK_MONOTONIC) < end) {
        struct epoll_event got;
        int n = epoll_wait(ep, &got, 1, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { perror("idle_loop: epoll_wait"); exit(1); }
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) == (ssize_t)sizeof expirations) ticks++;
        if (index == 0) {
            uint64_t now = clock_ns(CLOCK_MONOTONIC);
            if (!steady_start_ns && now >= steady_from_ns) {
                steady_start_ns = now;
                steady_start_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
                steady_start_watchdog_ns = named_threads_cpu_ns("hangwatch");
            }
            steady_end_ns = now;
            steady_end_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        }
    }
    close(tfd);
    close(ep);
    return ticks;
}

struct loop_thread { pthread_t thread; int index; uint64_t end; unsigned ticks; };

static void *loop_thread_main(void *arg)
{
    struct loop_thread *t = arg;
    char name[16];
    snprintf(name, sizeof name, "loop-%d", t->index);
    prctl(PR_SET_NAME, name, 0, 0, 0); /* named before its first wait */
    t->ticks = run_loop(t->index, t->end);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ms") && i + 1 < argc) total_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--tick-ms") && i + 1 < argc) tick_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--spread-ms") && i + 1 < argc) spread_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else { fprintf(stderr, "idle_loop: bad argument '%s'\n", argv[i]); return 2; }
    }
    if (threads < 0 || threads > 1024 || tick_ms == 0 || spread_ms < 0 || spread_ms > (double)tick_ms) { fprintf(stderr, "idle_loop: bad --threads or --tick-ms\n"); return 2; }
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC), end = t0 + total_ms * 1000000ull;
    first_tick_ns = t0 + tick_ms * 1000000ull;
    steady_from_ns = t0 + (total_ms > 2000 ? 1000000000ull : total_ms * 1000000ull / 2);
    struct loop_thread *loops = calloc((size_t)threads + 1, sizeof *loops);
    for (int i = 0; i < threads; i++) {
        loops[i].index = i + 1;
        loops[i].end = end;
        if (pthread_create(&loops[i].thread, NULL, loop_thread_main, &loops[i]) != 0) { perror("idle_loop"); return 1; }
    }
    unsigned ticks = run_loop(0, end);
    uint64_t wall = clock_ns(CLOCK_MONOTONIC) - t0;
    /* The watchdog's switches are read while the loop threads still exist (they are not counted). */
    unsigned long long switches = other_threads_switches(NULL), watchdog = other_threads_switches("hangwatch");
    uint64_t steady_watchdog_ns = named_threads_cpu_ns("hangwatch") - steady_start_watchdog_ns;
    for (int i = 0; i < threads; i++) {
        pthread_join(loops[i].thread, NULL);
        ticks += loops[i].ticks;
    }
    if (out) {
        char line[400];
        int len = snprintf(line, sizeof line,
                           "wall_ns=%llu proc_cpu_ns=%llu main_cpu_ns=%llu ticks=%u other_switches=%llu "
                           "watchdog_switches=%llu threads=%d steady_ns=%llu steady_cpu_ns=%llu steady_watchdog_ns=%llu\n",
                           (unsigned long long)wall, (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID),
                           (unsigned long long)clock_ns(CLOCK_THREAD_CPUTIME_ID), ticks, switches, watchdog,
                           threads, (unsigned long long)(steady_end_ns - steady_start_ns),
                           (unsigned long long)(steady_end_cpu_ns - steady_start_cpu_ns),
                           (unsigned long long)steady_watchdog_ns);
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) { perror(out); return 1; }
        (void)!write(fd, line, (size_t)len);
        close(fd);
    }
    free(loops);
    return 0;
}
