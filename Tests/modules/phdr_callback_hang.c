/*
 * phdr_callback_hang: an epoll loop whose timer callback spends 400 ms inside
 * a dl_iterate_phdr callback, i.e. while this thread holds the dynamic
 * loader's lock. A sampler that takes that lock itself (dl_iterate_phdr,
 * dlopen, dladdr...) before announcing the hang waits for the hang to end.
 *
 *   cc -O2 -g -o phdr_callback_hang phdr_callback_hang.c
 *   phdr_callback_hang [--measure FILE] [--pid-file FILE] [--hang-ms N] [--verbose]
 *
 * t=200 ms: on_timer() -> dl_iterate_phdr(hold_loader_lock) -> busy_in_phdr_callback()
 *           for --hang-ms (default 400) ms. Writes FILE.hang (FILE = --pid-file)
 *           when the busy work starts, so a test can kill the process mid-hang.
 * t=900 ms after the hang: exit 0.
 *
 * --measure FILE: `phdr_callback <startNs> <endNs> <durationMs>`, measured from
 * the return of epoll_wait to the end of the timer callback (the busy period).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#define MS 1000000ULL
#define DEMO_NAME "phdr_callback_hang"
#include "../../Demos/c/demo_support.h"

static uint64_t hang_ms = 400;
static const char *pid_file;

/* Real arithmetic until the deadline; the time is self time of this function. */
__attribute__((noinline)) uint64_t busy_in_phdr_callback(uint64_t deadline)
{
    uint64_t h = deadline;
    do {
        for (int i = 0; i < 4096; i++) {
            h ^= h >> 29;
            h *= 0x100000001b3ULL;
        }
    } while (now_ns() < deadline);
    return h;
}

static void announce_hang_start(void)
{
    if (!pid_file)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.hang", pid_file);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
}

/* Called by dl_iterate_phdr with the loader lock held; works on the first image only. */
__attribute__((noinline)) int hold_loader_lock(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    int *calls = data;
    if ((*calls)++ > 0)
        return 1; /* stop after the first image */
    announce_hang_start();
    sink += busy_in_phdr_callback(now_ns() + hang_ms * MS);
    sink += (uint64_t)*calls; /* work after the call: no tail call */
    return 0;
}

__attribute__((noinline)) void on_timer(void)
{
    int calls = 0;
    dl_iterate_phdr(hold_loader_lock, &calls);
    sink += (uint64_t)calls;
}

int main(int argc, char **argv)
{
    t_start = now_ns();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--measure") && i + 1 < argc)
            measure_fd = open(argv[++i], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        else if (!strcmp(argv[i], "--pid-file") && i + 1 < argc)
            pid_file = argv[++i];
        else if (!strcmp(argv[i], "--hang-ms") && i + 1 < argc)
            hang_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
    }
    if (pid_file)
        write_pid_file(pid_file);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {.it_value = {0, 20 * MS}, .it_interval = {0, 20 * MS}};
    timerfd_settime(tfd, 0, &its, NULL);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    int done = 0;
    uint64_t hang_end = 0;
    for (;;) {
        struct epoll_event evs[2];
        int n = epoll_wait(ep, evs, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        uint64_t woke = now_ns();
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0)
            expirations = 0;
        if (!done && woke - t_start >= 200 * MS) {
            on_timer();
            uint64_t end = now_ns();
            record("phdr_callback", woke, end);
            done = 1;
            hang_end = end;
        }
        if (done && now_ns() - hang_end >= 900 * MS)
            break;
    }
    return 0;
}
