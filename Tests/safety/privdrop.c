/*
 * privdrop: a server that drops root after start-up (issue 8, item 8).
 *
 *   privdrop [--measure FILE]        (run as root)
 *
 * The main loop waits once, then setgid/setuid(65534). From then on the
 * process is no longer dumpable, so /proc/self/task/TID/syscall is not
 * readable by it any more. Inside a hang (40 ms of work, sampled) it then
 * calls sigtimedwait(SIGUSR2, 300 ms), which no one sends: it must return
 * EAGAIN after at least 300 ms, as it does plain; a stray signal would end it
 * early with EINTR. Then the same with read() on a socket with a 300 ms
 * SO_RCVTIMEO (EAGAIN, never EINTR).
 *
 * stdout: "not root" when started without root (nothing to test), else the
 * uid dropped to and each call's result.
 */
#include "safety.h"

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (getuid() != 0) {
        out("not root");
        return 0;
    }
    loop_wait(1);
    loop_wait(20);
    int socks[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socks) != 0)
        return 1;
    struct timeval tv = {0, 300000};
    setsockopt(socks[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
        out("cannot drop privileges: %s", errname(errno));
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)gettid());
    int fd = open(path, O_RDONLY);
    out("uid %d, own /proc syscall file %s", (int)getuid(), fd >= 0 ? "readable" : "unreadable");
    if (fd >= 0)
        close(fd);
    loop_wait(20);

    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    uint64_t h = now_ns();
    spin_ms(40);
    struct timespec tmo = {0, 300 * 1000000};
    uint64_t s = now_ns();
    int rc = sigtimedwait(&usr2, NULL, &tmo);
    int e = errno;
    double ms = ms_since(s);
    record("sigtimedwait_hang", h, now_ns());
    measure_line("sigtimedwait_ms %.3f", ms);
    out("sigtimedwait 300 ms: rc %d %s, time %s", rc, errname(rc < 0 ? e : 0), judge(ms, 300, 450));
    loop_wait(20);

    h = now_ns();
    spin_ms(40);
    char c;
    s = now_ns();
    ssize_t n = read(socks[0], &c, 1);
    e = errno;
    ms = ms_since(s);
    record("recv_timeout_hang", h, now_ns());
    out("read with SO_RCVTIMEO 300 ms: rc %zd %s, time %s", n, errname(n < 0 ? e : 0), judge(ms, 295, 450));
    loop_wait(20);
    return 0;
}
