/*
 * dlopen_hang: an epoll loop that, 200 ms after it starts, dlopen()s a shared
 * library it was not linked with and hangs inside one of its functions. The
 * library's image appears only after start, so whoever unwinds the samples
 * must learn about it while the program runs.
 *
 *   cc -O2 -g -o dlopen_hang dlopen_hang.c -ldl
 *   dlopen_hang --library PATH [--hang-ms N] [--in-constructor] [--unlink | --memfd]
 *               [--measure FILE] [--verbose]
 *
 * Default: dlopen(PATH) (not measured), then on the next tick
 * hanglib_busy_work(N ms) (default 300), measured as `library_work`.
 * --in-constructor: sets HANGLIB_CONSTRUCTOR_MS=N so the library's constructor
 * does the work inside dlopen; measured as `dlopen_work`.
 * --unlink: deletes PATH right after dlopen, so /proc/PID/maps shows the
 * image as "(deleted)" and no file by that name exists any more.
 * --memfd: copies PATH into a memfd and dlopens /proc/self/fd/N instead; the
 * maps show "/memfd:hanglib (deleted)".
 * Exits 600 ms after the work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#define MS 1000000ULL
#define DEMO_NAME "dlopen_hang"
#include "../../Demos/c/demo_support.h"

int main(int argc, char **argv)
{
    t_start = now_ns();
    const char *library = NULL;
    uint64_t hang_ms = 300;
    int in_constructor = 0, unlink_after = 0, use_memfd = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--measure") && i + 1 < argc)
            measure_fd = open(argv[++i], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        else if (!strcmp(argv[i], "--library") && i + 1 < argc)
            library = argv[++i];
        else if (!strcmp(argv[i], "--hang-ms") && i + 1 < argc)
            hang_ms = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--in-constructor"))
            in_constructor = 1;
        else if (!strcmp(argv[i], "--unlink"))
            unlink_after = 1;
        else if (!strcmp(argv[i], "--memfd"))
            use_memfd = 1;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
    }
    if (!library) {
        fprintf(stderr, "dlopen_hang: --library PATH is required\n");
        return 2;
    }
    char ms_text[32];
    snprintf(ms_text, sizeof ms_text, "%llu", (unsigned long long)hang_ms);
    if (in_constructor)
        setenv("HANGLIB_CONSTRUCTOR_MS", ms_text, 1);
    char memfd_path[64];
    if (use_memfd) {
        int in = open(library, O_RDONLY | O_CLOEXEC);
        int mfd = memfd_create("hanglib", 0);
        char buf[65536];
        ssize_t n;
        if (in < 0 || mfd < 0) {
            fprintf(stderr, "dlopen_hang: memfd copy of %s: %s\n", library, strerror(errno));
            return 1;
        }
        while ((n = read(in, buf, sizeof buf)) > 0)
            write_all(mfd, buf, (size_t)n);
        close(in);
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", mfd);
        library = memfd_path;
    }
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {.it_value = {0, 20 * MS}, .it_interval = {0, 20 * MS}};
    timerfd_settime(tfd, 0, &its, NULL);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    void *handle = NULL;
    uint64_t (*work)(uint64_t) = NULL;
    uint64_t done_at = 0;
    for (;;) {
        struct epoll_event evs[2];
        int n = epoll_wait(ep, evs, 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        uint64_t woke = now_ns();
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0)
            expirations = 0;
        if (done_at) {
            if (woke - done_at >= 600 * MS)
                break;
        } else if (!handle && woke - t_start >= 200 * MS) {
            handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                fprintf(stderr, "dlopen_hang: %s\n", dlerror());
                return 1;
            }
            if (unlink_after && unlink(library) != 0) {
                fprintf(stderr, "dlopen_hang: unlink %s: %s\n", library, strerror(errno));
                return 1;
            }
            if (in_constructor) {
                uint64_t end = now_ns();
                record("dlopen_work", woke, end);
                done_at = end;
            } else {
                work = (uint64_t(*)(uint64_t))dlsym(handle, "hanglib_busy_work");
                if (!work) {
                    fprintf(stderr, "dlopen_hang: %s\n", dlerror());
                    return 1;
                }
            }
        } else if (work) {
            sink += work(hang_ms);
            uint64_t end = now_ns();
            record("library_work", woke, end);
            done_at = end;
            work = NULL;
        }
    }
    return 0;
}
