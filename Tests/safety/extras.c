/*
 * extras: more adversarial programs from issue 8's test list.
 *
 *   extras MODE [--measure FILE]
 *
 *   storm       A forked child queues 5000 real-time signals (SIGRTMIN+1) at
 *               about 5 kHz to the parent, whose SA_RESTART handler counts
 *               them (real-time signals queue, so the count is exact; SIGUSR1
 *               would coalesce). Meanwhile the parent's loop hangs, reading a
 *               pipe (which SA_RESTART restarts: never EINTR) and sleeping in
 *               nanosleep with rem (EINTR is the program's own signal: it
 *               sleeps on with rem, so the total sleep must be at least what
 *               it asked for).
 *   exits       20 watched threads named quick-N (--thread 'quick-*') each wait
 *               once, compute 15-35 ms (sampled from 10 ms on) and end, all
 *               at once, while the main thread joins them (main_joins, a hang
 *               when that lasts 100 ms or more); then the main loop hangs
 *               200 ms in main_after_exits.
 *   altstack    The main loop's SIGUSR1 handler runs on an alternate signal
 *               stack (SA_ONSTACK) and computes 300 ms in altstack_work: a
 *               hang inside a handler, on a stack that is not the thread's.
 *   tinystack   A watched thread named tiny (--thread tiny) runs on a
 *               PTHREAD_STACK_MIN stack, recurses 40 frames deep and computes
 *               250 ms in tiny_stack_work (sampling signals land on that
 *               small stack).
 *   closeall    Inside a hang the program closes every descriptor but 0-2
 *               (close_range), then waits in sigtimedwait(100 ms) twice: it
 *               must time out (EAGAIN), never end early.
 *   masks       Inside a sampled hang the program sets its signal mask to
 *               full, computes 30 ms, then sigtimedwait()s on every signal for
 *               50 ms (nothing is sent to it: EAGAIN), then sets the mask to
 *               empty again.
 *
 * stdout: what the program saw; the measure file has its hangs.
 */
#include "safety.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---- storm ------------------------------------------------------------- */

#define STORM_SIGNALS 5000
static volatile sig_atomic_t storm_count;
static void on_storm(int sig) { (void)sig; storm_count++; }

static int storm_mode(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_storm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGRTMIN + 1, &sa, NULL);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return 1;
    loop_wait(1);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        struct timespec gap = {0, 200000};
        for (int i = 0; i < STORM_SIGNALS; i++) {
            union sigval v = {.sival_int = i};
            while (sigqueue(parent, SIGRTMIN + 1, v) != 0 && errno == EAGAIN)
                nanosleep(&gap, NULL);
            nanosleep(&gap, NULL);
        }
        (void)!write(p[1], "x", 1);
        _exit(0);
    }
    int read_eintr = 0, short_sleeps = 0, hangs = 0;
    char c = 0;
    ssize_t n = -1;
    uint64_t end = now_ns() + 3000 * MS_NS;
    while (now_ns() < end) {
        loop_wait(10);
        uint64_t h = now_ns();
        spin_ms(30);
        /* nanosleep 40 ms with the program's own signals cutting it: sleep on with rem. */
        struct timespec req = {0, 40 * 1000000}, rem;
        uint64_t s = now_ns();
        while (nanosleep(&req, &rem) != 0 && errno == EINTR)
            req = rem;
        if (ms_since(s) < 40)
            short_sleeps++;
        spin_ms(40);
        record("storm_hang", h, now_ns());
        hangs++;
        if (n != 1) {
            /* A short read wait: the pipe stays empty until the child is done. */
            struct pollfd pfd = {.fd = p[0], .events = POLLIN};
            if (poll(&pfd, 1, 0) == 1) {
                n = read(p[0], &c, 1);
                if (n < 0 && errno == EINTR)
                    read_eintr++;
            }
        }
        if (n == 1)
            break;
    }
    /* Block in read() until the child has queued its last signal. */
    while (n != 1) {
        n = read(p[0], &c, 1);
        if (n < 0 && errno == EINTR)
            read_eintr++;
        if (n <= 0 && errno != EINTR)
            break;
    }
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    uint64_t settle = now_ns() + 1000 * MS_NS;
    while (storm_count < STORM_SIGNALS && now_ns() < settle)
        loop_wait(5);
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    out("storm: received %d of %d queued signals; read EINTR %d; nanosleep short %d; child %d",
        (int)storm_count, STORM_SIGNALS, read_eintr, short_sleeps, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    measure_line("storm_hangs %d", hangs);
    return 0;
}

/* ---- exits ------------------------------------------------------------- */

static int quick_gate;

static void *quick(void *arg)
{
    int id = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "quick-%d", id);
    pthread_setname_np(pthread_self(), name);
    loop_wait(1);
    while (!__atomic_load_n(&quick_gate, __ATOMIC_ACQUIRE))
        loop_wait(1);
    spin_ms(15 + id);
    return NULL;
}

__attribute__((noinline)) static void main_after_exits(void)
{
    spin_ms(200);
    __asm__ volatile("" ::: "memory");
}

static int exits_mode(void)
{
    loop_wait(1);
    pthread_t t[20];
    for (int i = 0; i < 20; i++)
        pthread_create(&t[i], NULL, quick, (void *)(intptr_t)i);
    loop_wait(30);
    /* Joining them keeps the main loop away from its wait for as long as they
       compute (20 threads on a few cores): a hang of its own, measured. */
    uint64_t s = now_ns();
    __atomic_store_n(&quick_gate, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 20; i++)
        pthread_join(t[i], NULL);
    record("main_joins", s, now_ns());
    out("20 threads ended while being sampled");
    for (int i = 0; i < 5; i++)
        loop_wait(20);
    MEASURED("main_after_exits", main_after_exits());
    for (int i = 0; i < 10; i++)
        loop_wait(20);
    out("survived");
    return 0;
}

/* ---- altstack ---------------------------------------------------------- */

static char alt[64 * 1024];
static volatile sig_atomic_t on_alt;

__attribute__((noinline)) static void altstack_work(void)
{
    char here;
    on_alt = &here >= alt && &here < alt + sizeof alt;
    spin_ms(300);
    __asm__ volatile("" ::: "memory");
}

static void on_usr1(int sig)
{
    (void)sig;
    altstack_work();
}

static int altstack_mode(void)
{
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    uint64_t s = now_ns();
    raise(SIGUSR1);
    record("altstack_work", s, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    out("handler ran on the alternate stack: %s", on_alt ? "yes" : "no");
    return 0;
}

/* ---- tinystack --------------------------------------------------------- */

__attribute__((noinline)) static void tiny_stack_work(void)
{
    spin_ms(250);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static uint64_t tiny_recurse(int depth)
{
    volatile char frame[64];
    frame[0] = (char)depth;
    if (depth == 0) {
        MEASURED("tiny_stack_work", tiny_stack_work());
        return frame[0];
    }
    uint64_t r = tiny_recurse(depth - 1) + frame[0];
    __asm__ volatile("" ::: "memory");
    return r;
}

static int tiny_stop;

static void *tiny(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "tiny");
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    sf_sink += tiny_recurse(40);
    while (!__atomic_load_n(&tiny_stop, __ATOMIC_ACQUIRE))
        loop_wait(10);
    return NULL;
}

static int tinystack_mode(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
    pthread_t t;
    int err = pthread_create(&t, &attr, tiny, NULL);
    if (err != 0) {
        out("pthread_create: %s", errname(err));
        return 1;
    }
    for (int i = 0; i < 30; i++)
        loop_wait(20);
    __atomic_store_n(&tiny_stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    out("tiny-stack thread ran and ended");
    return 0;
}

/* ---- closeall ---------------------------------------------------------- */

static void timed_wait(const char *label)
{
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    struct timespec tmo = {0, 100 * 1000000};
    uint64_t s = now_ns();
    int rc = sigtimedwait(&usr2, NULL, &tmo);
    int e = errno;
    out("%s sigtimedwait 100 ms: rc %d %s, time %s", label, rc, errname(rc < 0 ? e : 0),
        judge(ms_since(s), 100, 250));
}

static int closeall_mode(void)
{
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    uint64_t h = now_ns();
    spin_ms(30);
    int rc = (int)syscall(SYS_close_range, 3u, ~0u, 0u);
    sf_measure_fd = -1;
    sf_loop_pipe[0] = sf_loop_pipe[1] = -1;
    out("close_range(3, ~0): %d", rc);
    spin_ms(20);
    timed_wait("in the same hang:");
    /* Reopen the measure file (a daemon reopens its logs). */
    if (sf_measure_path)
        sf_measure_fd = open(sf_measure_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    record("closeall_hang", h, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    h = now_ns();
    spin_ms(30);
    timed_wait("in the next hang:");
    record("closeall_next_hang", h, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    int fd = open("/dev/null", O_RDONLY);
    out("next open: %d", fd);
    return 0;
}

/* ---- masks ------------------------------------------------------------- */

static int masks_mode(void)
{
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    uint64_t h = now_ns();
    spin_ms(30);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &all, NULL);
    spin_ms(30);
    struct timespec tmo = {0, 50 * 1000000};
    siginfo_t si;
    uint64_t s = now_ns();
    int rc = sigtimedwait(&all, &si, &tmo);
    int e = errno;
    double ms = ms_since(s);
    sigprocmask(SIG_SETMASK, &none, NULL);
    spin_ms(30);
    record("masks_hang", h, now_ns());
    if (rc > 0)
        out("sigtimedwait on every signal with all blocked: got signal %d (si_code %d)", rc, si.si_code);
    else
        out("sigtimedwait on every signal with all blocked: rc %d %s, time %s", rc, errname(e), judge(ms, 50, 200));
    for (int i = 0; i < 5; i++)
        loop_wait(10);
    return 0;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "storm"))
        return storm_mode();
    if (!strcmp(mode, "exits"))
        return exits_mode();
    if (!strcmp(mode, "altstack"))
        return altstack_mode();
    if (!strcmp(mode, "tinystack"))
        return tinystack_mode();
    if (!strcmp(mode, "closeall"))
        return closeall_mode();
    if (!strcmp(mode, "masks"))
        return masks_mode();
    fprintf(stderr, "usage: extras storm|exits|altstack|tinystack|closeall|masks [--measure FILE]\n");
    return 2;
}
