/*
 * quit_signal: the program's own signal must end its wait, whatever
 * hangwatch's sampling did meanwhile (issue 8, item 7).
 *
 *   quit_signal pending [--measure FILE]
 *
 * The main loop thread keeps SIGUSR1 (its quit signal) blocked and waits for
 * it with ppoll(NULL, 0, 3 s, mask) where the mask lets it through, the
 * race-free idiom of pselect/ppoll. A helper thread sends it.
 *
 *   pending  Inside a sampled hang the loop blocks every signal for a
 *            critical section (120 ms), during which the helper sends SIGUSR1
 *            (at 150 ms into the hang). Then ppoll with an empty mask: the
 *            pending quit signal ends it at once, -1/EINTR. (A sampling
 *            signal that arrived during the critical section is pending too.)
 *
 * stdout: the result. (A sample that lands in such a wait by a race at its
 * entry has the same effect; the critical section makes it certain.)
 */
#include "safety.h"

#include <pthread.h>
#include <signal.h>

static pthread_t main_thread;
static volatile sig_atomic_t quits;
static void on_quit(int sig) { (void)sig; quits++; }

/* Helper: sends SIGUSR1 to the main thread when asked, after a delay. */
static int send_at_round = -1; /* atomic: round number to answer */
static uint64_t send_delay_ns;
static int helper_stop;

static void *helper(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the quit signal is for the main thread only */
    int answered = -1;
    while (!__atomic_load_n(&helper_stop, __ATOMIC_ACQUIRE)) {
        int round = __atomic_load_n(&send_at_round, __ATOMIC_ACQUIRE);
        if (round == answered) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct timespec delay = {(time_t)(send_delay_ns / 1000000000ull), (long)(send_delay_ns % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, 0, &delay, NULL);
        pthread_kill(main_thread, SIGUSR1);
        answered = round;
    }
    return NULL;
}

static void setup(pthread_t *t)
{
    main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_quit; /* no SA_RESTART, as for any quit flag */
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    pthread_create(t, NULL, helper, NULL);
}

static void teardown(pthread_t t)
{
    __atomic_store_n(&helper_stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
}

static int pending_mode(void)
{
    pthread_t t;
    setup(&t);
    loop_wait(1);
    loop_wait(20);
    uint64_t t0 = now_ns();
    send_delay_ns = 150 * MS_NS;
    __atomic_store_n(&send_at_round, 0, __ATOMIC_RELEASE); /* SIGUSR1 at t0 + 150 ms */
    spin_ms(60);                                           /* sampled from 10 ms on */
    /* Every signal blocked for 120 ms; the quit signal arrives in the middle. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    spin_ms(120);
    sigset_t none;
    sigemptyset(&none);
    struct timespec tmo = {3, 0};
    uint64_t s = now_ns();
    int rc = ppoll(NULL, 0, &tmo, &none);
    int e = errno;
    double in_wait = ms_since(s), since_t0 = ms_since(t0);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    record("pending_quit_hang", t0, now_ns());
    measure_line("ppoll_wait_ms %.3f", in_wait);
    out("ppoll with the quit signal pending: rc %d errno %s, quits %d, waited %s, returned %s after the hang began",
        rc, errname(rc < 0 ? e : 0), (int)quits, judge(in_wait, 0, 50), judge(since_t0, 175, 400));
    teardown(t);
    loop_wait(20);
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "pending"))
        return pending_mode();
    fprintf(stderr, "usage: quit_signal pending [--measure FILE]\n");
    return 2;
}
