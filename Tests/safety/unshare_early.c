/*
 * unshare_early: a sandboxing program (issue 8, item 11).
 *
 *   unshare_early [--measure FILE]
 *
 * At the top of main, before any wait, it calls unshare(CLONE_NEWUSER),
 * which the kernel allows only in a single-threaded process, and reports how
 * many threads it had at that moment. Then it runs its loop with one 150 ms
 * hang, which hangwatch must still see.
 *
 * stdout: the thread count, then the unshare result; both must be those of
 * a plain run. The measure file has the hang (sandboxed_work).
 */
#include "safety.h"

#include <dirent.h>
#include <sched.h>

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

__attribute__((noinline)) static void sandboxed_work(void)
{
    spin_ms(150);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int threads = count_threads();
    int rc = unshare(CLONE_NEWUSER);
    int e = errno;
    out("threads at start: %d", threads);
    out("unshare(CLONE_NEWUSER): rc %d %s", rc, errname(rc < 0 ? e : 0));
    for (int i = 0; i < 3; i++)
        loop_wait(20);
    MEASURED("sandboxed_work", sandboxed_work());
    for (int i = 0; i < 3; i++)
        loop_wait(20);
    return 0;
}
