/*
 * fd_limits: descriptors under `ulimit -n 512` (issue 8, item 10).
 *
 *   fd_limits numbers|fill [--measure FILE]
 *
 * Both modes lower RLIMIT_NOFILE to 512 first (what `ulimit -n 512` does),
 * wait once in the loop, then work inside a sampled hang.
 *
 *   numbers  Opens four files and prints the descriptor numbers it got;
 *            closefrom(3); opens four others and prints their numbers; reads
 *            one byte from each, during the hang and again after it (when
 *            hangwatch has finished sampling it). Numbers and results must be
 *            those of a plain run: no descriptor of hangwatch's may take a
 *            number the program would get, nor may hangwatch close one of the
 *            program's.
 *   fill     Counts /proc/self/fd before the hang, in it, and after it; opens
 *            /dev/null until EMFILE and prints how many it got and the last
 *            number; close_range(3, ~0) and opens one more. A program that
 *            uses every descriptor its limit allows sees the same counts only
 *            if hangwatch holds none.
 */
#include "safety.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static void limit_512(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = 512;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        out("setrlimit: %s", errname(errno));
        exit(1);
    }
}

static void open_four(const char *path, int fds[4], const char *label)
{
    for (int i = 0; i < 4; i++)
        fds[i] = open(path, O_RDONLY);
    out("%s: %s opened as %d %d %d %d", label, path, fds[0], fds[1], fds[2], fds[3]);
}

static void read_each(int fds[4], const char *label)
{
    char line[256];
    int n = 0;
    for (int i = 0; i < 4; i++) {
        char c;
        ssize_t r = read(fds[i], &c, 1);
        n += snprintf(line + n, sizeof line - (size_t)n, " fd %d: %zd %s;", fds[i], r, errname(r < 0 ? errno : 0));
    }
    out("%s reads:%s", label, line);
}

static int numbers_mode(void)
{
    limit_512();
    loop_wait(1);
    loop_wait(20);
    uint64_t h = now_ns();
    spin_ms(30);
    int a[4], b[4];
    open_four("/dev/null", a, "in the hang");
    spin_ms(20);
    closefrom(3);
    sf_loop_pipe[0] = sf_loop_pipe[1] = -1; /* closed too: loop_wait makes a new one */
    open_four("/dev/zero", b, "after closefrom(3)");
    read_each(b, "in the hang");
    spin_ms(30);
    read_each(b, "still in the hang");
    record("fd_hang", h, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(20);
    read_each(b, "after the hang");
    return 0;
}

static int fill_mode(void)
{
    limit_512();
    loop_wait(1);
    loop_wait(20);
    out("descriptors before the hang: %d", count_fds());
    uint64_t h = now_ns();
    spin_ms(30);
    out("descriptors in the hang: %d", count_fds());
    int last = -1, got = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            out("open until it fails: %d opened, last %d, then %s", got, last, errname(errno));
            break;
        }
        last = fd;
        got++;
    }
    spin_ms(20);
    int rc = (int)syscall(SYS_close_range, 3u, ~0u, 0u);
    sf_loop_pipe[0] = sf_loop_pipe[1] = -1;
    int fd = open("/dev/null", O_RDONLY);
    out("close_range(3, ~0): %d; next open: %d; descriptors: %d", rc, fd, count_fds());
    spin_ms(20);
    record("fd_hang", h, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(20);
    out("descriptors after the hang: %d", count_fds());
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "numbers"))
        return numbers_mode();
    if (!strcmp(mode, "fill"))
        return fill_mode();
    fprintf(stderr, "usage: fd_limits numbers|fill [--measure FILE]\n");
    return 2;
}
