/*
 * sleep_results: sleeps inside hangs return what they return plain
 * (issue 8, items 4, 5 and 6).
 *
 *   sleep_results MODE [--measure FILE]
 *
 * Every mode first waits once in its loop, then starts a hang with 30 ms of
 * CPU work (hangwatch samples it from 10 ms on), so each sleep below happens
 * while the thread is being sampled.
 *
 *   clock-nanosleep  clock_nanosleep(relative 300 ms, rem = NULL), then a
 *                    1.2 s hang of rounds of 50 us of work + a 50 us
 *                    clock_nanosleep: every call must return 0. Each entry
 *                    into the sleep is a chance for a sample to land in it;
 *                    the thread is pinned to one CPU (as event-loop threads
 *                    often are), in turn to each CPU it may use, so the
 *                    watchdog runs beside it, and the tests sample at 10 kHz
 *                    to multiply the chances.
 *   sleep            sleep(1) returns 0 after at least 1 s
 *   sleep-alarm      sleep(2) cut by the program's own SIGALRM at 600 ms:
 *                    glibc rounds the 1.4 s left to 1, plainly
 *   huge             nanosleep, ppoll and pselect with timeouts of LONG_MAX and
 *                    INT64_MAX/2 seconds, each cut by the program's own SIGALRM
 *                    after 200 ms: -1/EINTR with the huge time left. Then
 *                    ppoll and pselect with a mask that unblocks everything,
 *                    entered after a critical section that blocked every
 *                    signal (a sampling signal may be pending then). Then a
 *                    0.8 s hang of rounds of the same calls cut by a 2 ms
 *                    periodic alarm (pinned thread, as above).
 *
 * stdout: each call's result, errno and duration class; for the rounds, the
 * count of calls whose result differed from the one expected.
 */
#include "safety.h"

#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

static void install_alarm_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: these calls report EINTR anyway */
    sigaction(SIGALRM, &sa, NULL);
}

static void alarm_after_us(long first_us, long every_us)
{
    struct itimerval it = {{every_us / 1000000, every_us % 1000000}, {first_us / 1000000, first_us % 1000000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * The rounds run pinned, a share of the time on each CPU the thread may use
 * (which CPU races best with the watchdog depends on where the kernel puts
 * it and on the machine's other load).
 */
static cpu_set_t allowed_cpus;
static int allowed_count;

static void pin_setup(void)
{
    sched_getaffinity(0, sizeof allowed_cpus, &allowed_cpus);
    allowed_count = CPU_COUNT(&allowed_cpus);
}

/* Pin to the n-th allowed CPU (cycling). */
static void pin_to(int n)
{
    if (allowed_count == 0)
        return;
    n %= allowed_count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed_cpus) || n-- > 0)
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        return;
    }
}

/* Which allowed CPU the rounds should be on now, for a phase of `total` ns begun at `start`. */
static int pin_share(uint64_t start, uint64_t total)
{
    int shares = allowed_count < 1 ? 1 : allowed_count > 4 ? 4 : allowed_count;
    uint64_t elapsed = now_ns() - start;
    int i = (int)(elapsed * (uint64_t)shares / total);
    return i < shares ? i : shares - 1;
}

/* Enter a hang whose sampling has started. */
static void start_hang(void)
{
    loop_wait(1);
    loop_wait(20);
    spin_ms(30);
}

static int clock_nanosleep_mode(void)
{
    start_hang();
    struct timespec req = {0, 300 * 1000000};
    uint64_t s = now_ns();
    int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
    double ms = ms_since(s);
    record("clock_nanosleep_300", s, now_ns());
    out("clock_nanosleep 300 ms rem=NULL: returned %s, time %s", errname(err), judge(ms, 300, 450));
    loop_wait(20);

    /* Rounds: many entries into a sleep while the hang is being sampled. */
    pin_setup();
    spin_ms(20);
    uint64_t begin = now_ns(), end = begin + 1200 * MS_NS;
    int rounds = 0, bad = 0, first_bad = 0, pinned = -1;
    while (now_ns() < end) {
        int share = pin_share(begin, 1200 * MS_NS);
        if (share != pinned)
            pin_to(pinned = share);
        spin_ms(0.05);
        struct timespec tiny = {0, 50000};
        int e = clock_nanosleep(CLOCK_MONOTONIC, 0, &tiny, NULL);
        rounds++;
        if (e != 0 && bad++ == 0)
            first_bad = e;
    }
    measure_line("rounds %d bad %d", rounds, bad);
    out("clock_nanosleep 50 us rounds: %d returned other than 0%s%s", bad, bad ? ", first " : "",
        bad ? errname(first_bad) : "");
    loop_wait(20);
    return 0;
}

static int sleep_mode(void)
{
    start_hang();
    uint64_t s = now_ns();
    unsigned left = sleep(1);
    double ms = ms_since(s);
    record("sleep_1", s, now_ns());
    out("sleep(1): returned %u, time %s", left, judge(ms, 1000, 1200));
    loop_wait(20);
    return 0;
}

static int sleep_alarm_mode(void)
{
    install_alarm_handler();
    start_hang();
    alarm_after_us(600000, 0);
    uint64_t s = now_ns();
    unsigned left = sleep(2);
    double ms = ms_since(s);
    record("sleep_2_alarm", s, now_ns());
    out("sleep(2) cut by SIGALRM at 600 ms: returned %u, alarms %d, time %s", left, (int)alarms,
        judge(ms, 590, 800));
    loop_wait(20);
    return 0;
}

enum call { NANOSLEEP, PPOLL, PSELECT };
static const char *call_names[] = {"nanosleep", "ppoll", "pselect"};

/* One huge sleep; returns -1/errno as the call does, and the time left in *left. */
static int huge_call(enum call c, time_t secs, struct timespec *left)
{
    struct timespec req = {secs, 0};
    switch (c) {
    case NANOSLEEP:
        return nanosleep(&req, left);
    case PPOLL:
        return ppoll(NULL, 0, &req, NULL);
    case PSELECT:
        return pselect(0, NULL, NULL, NULL, &req, NULL);
    }
    return 0;
}

static int huge_mode(void)
{
    install_alarm_handler();
    start_hang();
    const time_t sizes[] = {LONG_MAX, INT64_MAX / 2};
    const char *size_names[] = {"LONG_MAX", "INT64_MAX/2"};
    for (int c = NANOSLEEP; c <= PSELECT; c++) {
        for (int z = 0; z < 2; z++) {
            struct timespec left = {0, 0};
            alarm_after_us(200000, 0);
            uint64_t s = now_ns();
            errno = 0;
            int rc = huge_call((enum call)c, sizes[z], &left);
            int e = errno;
            double ms = ms_since(s);
            out("%s %s s: rc %d %s, time %s%s", call_names[c], size_names[z], rc, errname(rc < 0 ? e : 0),
                judge(ms, 195, 400),
                c == NANOSLEEP ? (left.tv_sec > 1000000000L ? ", time left huge" : ", time left small") : "");
            loop_wait(5);
            spin_ms(15);
        }
    }
    loop_wait(20);

    /* Masked waits entered with every signal blocked just before. */
    spin_ms(30);
    for (int c = PPOLL; c <= PSELECT; c++) {
        sigset_t all, saved, none;
        sigfillset(&all);
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        spin_ms(40);
        alarm_after_us(200000, 0);
        struct timespec req = {LONG_MAX, 0};
        uint64_t s = now_ns();
        errno = 0;
        int rc = c == PPOLL ? ppoll(NULL, 0, &req, &none) : pselect(0, NULL, NULL, NULL, &req, &none);
        int e = errno;
        double ms = ms_since(s);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        out("%s LONG_MAX s with an unblocking mask: rc %d %s, time %s", call_names[c], rc,
            errname(rc < 0 ? e : 0), judge(ms, 195, 400));
    }
    loop_wait(20);

    /* Rounds: the same calls, each cut by a 2 ms periodic alarm, in one long sampled hang. */
    pin_setup();
    spin_ms(20);
    alarm_after_us(2000, 2000);
    uint64_t begin = now_ns(), end = begin + 800 * MS_NS;
    int rounds = 0, bad[3] = {0, 0, 0}, pinned = -1;
    while (now_ns() < end) {
        int share = pin_share(begin, 800 * MS_NS);
        if (share != pinned)
            pin_to(pinned = share);
        spin_ms(0.05);
        enum call c = (enum call)(rounds % 3);
        struct timespec left = {0, 0};
        errno = 0;
        int rc = huge_call(c, LONG_MAX, &left);
        if (rc != -1 || errno != EINTR || (c == NANOSLEEP && left.tv_sec < 1000000000L))
            bad[c]++;
        rounds++;
    }
    alarm_after_us(0, 0);
    measure_line("rounds %d bad %d %d %d", rounds, bad[0], bad[1], bad[2]);
    out("huge-timeout rounds cut by the program's alarm: nanosleep %d, ppoll %d, pselect %d returned other than -1/EINTR",
        bad[0], bad[1], bad[2]);
    loop_wait(20);
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "clock-nanosleep"))
        return clock_nanosleep_mode();
    if (!strcmp(mode, "sleep"))
        return sleep_mode();
    if (!strcmp(mode, "sleep-alarm"))
        return sleep_alarm_mode();
    if (!strcmp(mode, "huge"))
        return huge_mode();
    fprintf(stderr, "usage: sleep_results clock-nanosleep|sleep|sleep-alarm|huge [--measure FILE]\n");
    return 2;
}
