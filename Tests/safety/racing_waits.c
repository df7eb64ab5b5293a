/*
 * racing_waits: calls that any signal handler ends early, entered straight
 * out of busy work, inside hangs (the CI failure of sigtimedwaitAfterSetuid).
 *
 *   racing_waits [--measure FILE] [ROUNDS]
 *
 * A sampler that signals a thread it saw running can have the signal land
 * just after the thread entered one of these calls, and then the call
 * returns EINTR whatever SA_RESTART says (signal(7)): a socket read with
 * SO_RCVTIMEO and sigtimedwait. Each hang here is 40 rounds of 2 ms of work
 * followed by one such call with a 2 ms timeout, so thousands of sampling
 * ticks fall right at a call's entry. No one sends the program a signal: each
 * call must time out (EAGAIN), as it does plain.
 *
 * stdout: per call, the rounds run and how many ended other than EAGAIN.
 */
#include "safety.h"

#include <sys/socket.h>
#include <sys/time.h>

#define ROUNDS_PER_HANG 40

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    int socks[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socks) != 0)
        return 1;
    struct timeval tv = {0, 2000};
    setsockopt(socks[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    struct timespec tmo = {0, 2 * 1000000};

    int read_other = 0, wait_other = 0, read_eintr = 0, wait_eintr = 0;
    loop_wait(1);
    uint64_t h = now_ns();
    for (int i = 0; i < rounds; i++) {
        if (i > 0 && i % ROUNDS_PER_HANG == 0) {
            record("racing_hang", h, now_ns());
            loop_wait(5);
            h = now_ns();
        }
        spin_ms(2);
        char c;
        if (i % 2 == 0) {
            ssize_t n = read(socks[0], &c, 1);
            if (!(n < 0 && errno == EAGAIN)) { read_other++; read_eintr += n < 0 && errno == EINTR; }
        } else {
            int rc = sigtimedwait(&usr2, NULL, &tmo);
            if (!(rc < 0 && errno == EAGAIN)) { wait_other++; wait_eintr += rc < 0 && errno == EINTR; }
        }
    }
    record("racing_hang", h, now_ns());
    loop_wait(5);
    measure_line("eintr read %d sigtimedwait %d", read_eintr, wait_eintr);
    out("read with SO_RCVTIMEO 2 ms after busy work: %d rounds, %d not EAGAIN", (rounds + 1) / 2, read_other);
    out("sigtimedwait 2 ms after busy work: %d rounds, %d not EAGAIN", rounds / 2, wait_other);
    return 0;
}
