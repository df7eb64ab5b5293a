/*
 * fdset_edge: select()/pselect() with right-sized fd sets (issue 8, item 3).
 *
 *   fdset_edge select|pselect [--measure FILE]
 *
 * A program may allocate an fd set only as large as nfds needs (OpenSSH
 * does: howmany(nfds, NFDBITS) words). Here each set is 8 bytes placed at the
 * very end of a page whose next page is PROT_NONE: reading a whole 128-byte
 * fd_set from it faults. The kernel reads only nfds bits, so plain runs work.
 *
 * The main loop waits in select/pselect on a pipe (its loop wait, 20 ms
 * timeouts), with one 150 ms busy period between waits; it also makes one
 * select from inside that busy period (a wait inside a callback). stdout has
 * each call's result, which the plain run and the watched run must share.
 */
#include "safety.h"

#include <sys/mman.h>
#include <sys/select.h>

static long page;

/* An 8-byte fd set at the end of a page followed by a PROT_NONE page. */
static fd_set *edge_set(void)
{
    uint8_t *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE) != 0) {
        perror("mmap");
        exit(2);
    }
    return (fd_set *)(void *)(p + page - sizeof(uint64_t));
}

static void set_one(fd_set *set, int fd)
{
    *(uint64_t *)(void *)set = 1ull << fd; /* FD_SET would assume 128 bytes exist */
}

static int use_pselect;

/* One wait with right-sized sets; returns select's result. */
static int wait_sets(int nfds, fd_set *r, fd_set *w, fd_set *e, int ms)
{
    if (use_pselect) {
        struct timespec ts = {0, (long)ms * 1000000};
        return pselect(nfds, r, w, e, &ts, NULL);
    }
    struct timeval tv = {0, ms * 1000};
    return select(nfds, r, w, e, &tv);
}

__attribute__((noinline)) static int loop_select(int nfds, fd_set *r, fd_set *w, fd_set *e, int fd, int ms)
{
    set_one(r, fd);
    set_one(e, fd);
    *(uint64_t *)(void *)w = 0;
    int rc = wait_sets(nfds, r, w, e, ms);
    __asm__ volatile("" ::: "memory");
    return rc;
}

__attribute__((noinline)) static int callback_select(int nfds, fd_set *r, fd_set *w, int rfd, int wfd)
{
    set_one(r, rfd);
    set_one(w, wfd);
    int rc = wait_sets(nfds, r, w, NULL, 30);
    __asm__ volatile("" ::: "memory");
    return rc;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (argc < 2 || (strcmp(argv[1], "select") && strcmp(argv[1], "pselect"))) {
        fprintf(stderr, "usage: fdset_edge select|pselect [--measure FILE]\n");
        return 2;
    }
    use_pselect = !strcmp(argv[1], "pselect");
    page = sysconf(_SC_PAGESIZE);
    int p[2];
    if (pipe(p) != 0 || p[1] >= 64)
        return 2;
    int nfds = p[1] + 1;
    fd_set *r = edge_set(), *w = edge_set(), *e = edge_set();

    int timeouts = 0, errors = 0;
    for (int i = 0; i < 12; i++) {
        int rc = loop_select(nfds, r, w, e, p[0], 20);
        if (rc == 0)
            timeouts++;
        else
            errors++;
        if (i == 5) {
            uint64_t s = now_ns();
            spin_ms(60);
            /* A wait inside the busy period: the pipe's write end is writable at once. */
            int rc2 = callback_select(nfds, r, w, p[0], p[1]);
            out("callback %s: rc %d, write end ready %d", argv[1], rc2,
                (int)((*(uint64_t *)(void *)w >> p[1]) & 1));
            spin_ms(90);
            record("busy_with_select", s, now_ns());
        }
    }
    out("loop %s: %d timeouts, %d other results", argv[1], timeouts, errors);
    return 0;
}
