/*
 * unshare_early: a sandboxing program (issue 8, item 11).
 *
 *   unshare_early [--measure FILE] [--nested N]
 *
 * At the top of main, before any wait, it calls unshare(CLONE_NEWUSER),
 * which the kernel allows only in a single-threaded process, and reports how
 * many threads it had at that moment. Then it runs its loop with one 150 ms
 * hang, which hangwatch must still see.
 *
 * stdout: the thread count, then the unshare result (and errno, which a
 * success leaves as it was); both must be those of
 * a plain run. The measure file has the hang (sandboxed_work).
 *
 * --nested N: then N more unshare(CLONE_NEWUSER) calls, each nested in the
 * namespace before (the kernel allows 32 levels), each after 2 ms of work,
 * so that a watchdog stopped for one call has started again before the
 * next; one more stdout line: how many succeeded, and the first error.
 */
#include "safety.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/// "0 ID 1": the namespace's root is ID outside it.
static const char *id_line(unsigned id)
{
    static char line[32];
    snprintf(line, sizeof line, "0 %u 1", id);
    return line;
}

static bool map_id(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok;
}

/// Maps our ids outside into the namespace just made (as its root): without
/// it the next level cannot be created (EPERM).
static bool map_ids(unsigned uid, unsigned gid)
{
    return map_id("/proc/self/setgroups", "deny") && map_id("/proc/self/uid_map", id_line(uid))
        && map_id("/proc/self/gid_map", id_line(gid));
}

__attribute__((noinline)) static void sandboxed_work(void)
{
    spin_ms(150);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int threads = count_threads();
    bool nested = argc > 2 && strcmp(argv[1], "--nested") == 0;
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    errno = 4321; /* a call that succeeds leaves errno alone */
    int rc = unshare(CLONE_NEWUSER);
    int e = errno;
    if (rc == 0 && nested) // the levels below are made from this one: map our ids in it
        map_ids(uid, gid);
    out("threads at start: %d", threads);
    if (rc == 0)
        out("unshare(CLONE_NEWUSER): rc 0, errno %s", e == 4321 ? "as it was" : errname(e));
    else
        out("unshare(CLONE_NEWUSER): rc %d %s", rc, errname(e));
    for (int i = 0; i < 3; i++)
        loop_wait(20);
    MEASURED("sandboxed_work", sandboxed_work());
    for (int i = 0; i < 3; i++)
        loop_wait(20);
    if (nested) {
        int asked = atoi(argv[2]), done = 0, first_error = 0;
        for (int i = 0; i < asked; i++) {
            spin_ms(2);
            unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
            if (unshare(CLONE_NEWUSER) != 0) {
                if (!first_error) first_error = errno;
                continue;
            }
            if (map_ids(uid, gid))
                done++;
            else if (!first_error)
                first_error = errno;
        }
        out("nested unshares: %d of %d, first error %s", done, asked, errname(first_error));
    }
    return 0;
}
