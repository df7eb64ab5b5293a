/*
 * soak: a long run that churns everything hangwatch has to survive
 * (issue 8, "A soak command"). Driven by Scripts/soak.sh.
 *
 *   soak SECONDS [--plugin PATH.so] [--measure FILE]
 *   soak child                       (what the fork/exec churn runs)
 *
 * Threads:
 *   main      the watched loop: 5 ms loop waits; every ~0.7 s a hang of 150,
 *             260 or 380 ms (cycling) with CPU work and short waits inside
 *             (usleep, nanosleep, poll(NULL, 0, t), sigtimedwait); between
 *             hangs pieces of 20-60 ms of work. Every piece of work is
 *             measured (soak_hang or soak_small startNs endNs ms), and so
 *             is the stop at the end (soak_shutdown: it joins the threads). SIGUSR1 is blocked
 *             here and nothing else is sent to it, so any EINTR it sees is
 *             hangwatch's doing: it counts them.
 *   spawner   starts short-lived threads named soak-w-N (watch them with
 *             --thread 'soak-w-*'): each waits once in its loop, mallocs and
 *             frees, computes 2-8 ms, ends.
 *   forker    every 100 ms: fork + exec of "soak child" (busy 15 ms, exits 0),
 *             reaped; also a plain fork whose child exits at once.
 *   loader    every 50 ms: dlopen the plugin (or libm), call into it, dlclose.
 *   catcher   takes SIGUSR1 from the signaller at ~1 kHz (its handler counts;
 *             its own usleeps may see EINTR, which is the program's own).
 *   signaller sends those SIGUSR1s.
 *
 * stdout, at the end: one line of counts, e.g.
 *   soak: 60 s, 86 hangs, unexpected EINTR 0, children 600, dlopens 1200, threads 3000, signals 59000
 */
#include "safety.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

static int stop;
static long children, dlopens, threads_made;
static volatile sig_atomic_t signals_caught;
static long unexpected_eintr; /* main thread only */
static const char *plugin_path;
static pthread_t catcher_thread;

static int stopping(void) { return __atomic_load_n(&stop, __ATOMIC_ACQUIRE); }

/* ---- main loop ----------------------------------------------------------- */

static void count_eintr(int failed)
{
    if (failed && errno == EINTR)
        unexpected_eintr++;
}

/* A hang: CPU work with short waits inside, as a callback that blocks would have. */
__attribute__((noinline)) static void soak_hang(double ms)
{
    uint64_t end = now_ns() + (uint64_t)(ms * 1e6);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    int step = 0;
    while (now_ns() + 12 * MS_NS < end) {
        spin_ms(8);
        switch (step++ % 4) {
        case 0:
            count_eintr(usleep(2000) != 0);
            break;
        case 1: {
            struct timespec ts = {0, 2 * 1000000};
            count_eintr(nanosleep(&ts, NULL) != 0);
            break;
        }
        case 2:
            count_eintr(poll(NULL, 0, 2) < 0);
            break;
        case 3: {
            struct timespec ts = {0, 2 * 1000000};
            int rc = sigtimedwait(&usr2, NULL, &ts);
            count_eintr(rc < 0 && errno != EAGAIN);
            break;
        }
        }
    }
    spin_until(end);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void soak_small_work(double ms)
{
    spin_ms(ms);
    __asm__ volatile("" ::: "memory");
}

static int main_loop(double seconds)
{
    const double hangs[] = {150, 260, 380};
    const double small[] = {20, 35, 60, 45};
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t next_hang = start + 500 * MS_NS, next_small = start + 100 * MS_NS;
    int hang_count = 0, small_count = 0;
    while (now_ns() < end) {
        count_eintr(loop_wait(5) < 0);
        uint64_t now = now_ns();
        if (now >= next_hang) {
            MEASURED("soak_hang", soak_hang(hangs[hang_count % 3]));
            hang_count++;
            next_hang = now_ns() + 700 * MS_NS;
        } else if (now >= next_small) {
            MEASURED("soak_small", soak_small_work(small[small_count % 4]));
            small_count++;
            next_small = now_ns() + 90 * MS_NS;
        }
    }
    /* Back to the loop once more, so that the last piece of work and the
       shutdown below are two busy periods, as they are two measured ones
       (without it a last hang and the shutdown made one true 491 ms hang
       that matched neither measurement). */
    count_eintr(loop_wait(5) < 0);
    return hang_count;
}

/* ---- churn threads -------------------------------------------------------- */

static void *short_lived(void *arg)
{
    long id = (long)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "soak-w-%ld", id % 1000);
    pthread_setname_np(pthread_self(), name);
    loop_wait(1);
    void *blocks[16];
    for (int i = 0; i < 16; i++)
        blocks[i] = malloc((size_t)(64 << (i % 10)));
    spin_ms(2 + (double)(id % 7));
    for (int i = 0; i < 16; i++)
        free(blocks[i]);
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    long id = 0;
    while (!stopping()) {
        pthread_t t[4];
        int n = 0;
        for (; n < 4; n++)
            if (pthread_create(&t[n], NULL, short_lived, (void *)(intptr_t)id++) != 0)
                break;
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        __atomic_add_fetch(&threads_made, n, __ATOMIC_RELAXED);
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *forker(void *arg)
{
    char *self = arg;
    while (!stopping()) {
        pid_t pid = fork();
        if (pid == 0) {
            char *args[] = {self, "child", NULL};
            execv("/proc/self/exe", args);
            _exit(127);
        }
        if (pid > 0) {
            int status;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                __atomic_add_fetch(&children, 1, __ATOMIC_RELAXED);
        }
        pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        struct timespec ts = {0, 100 * 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *loader(void *arg)
{
    (void)arg;
    while (!stopping()) {
        void *h = dlopen(plugin_path ? plugin_path : "libm.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h) {
            if (plugin_path) {
                long (*work)(long) = (long (*)(long))dlsym(h, "plugin_work");
                if (work)
                    sf_sink += (uint64_t)work(1000);
            } else {
                double (*c)(double) = (double (*)(double))dlsym(h, "cos");
                if (c)
                    sf_sink += (uint64_t)(c(0.5) * 1000);
            }
            dlclose(h);
            __atomic_add_fetch(&dlopens, 1, __ATOMIC_RELAXED);
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void on_usr1(int sig) { (void)sig; signals_caught++; }

static void *catcher(void *arg)
{
    (void)arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    while (!stopping())
        usleep(3000); /* its EINTRs are the program's own signals */
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    while (!stopping()) {
        pthread_kill(catcher_thread, SIGUSR1);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "child")) {
        spin_ms(15);
        return 0;
    }
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
            plugin_path = argv[++i];
        else
            seconds = atof(argv[i]);
    }
    if (seconds <= 0) {
        fprintf(stderr, "usage: soak SECONDS [--plugin PATH.so] [--measure FILE]\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    /* Only the catcher takes SIGUSR1: every other thread inherits this mask. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigaddset(&usr1, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);

    pthread_t t[5];
    pthread_create(&catcher_thread, NULL, catcher, NULL);
    t[0] = catcher_thread;
    pthread_create(&t[1], NULL, signaller, NULL);
    pthread_create(&t[2], NULL, spawner, NULL);
    pthread_create(&t[3], NULL, forker, argv[0]);
    pthread_create(&t[4], NULL, loader, NULL);

    int hangs = main_loop(seconds);
    /* Stopping the churn keeps the main loop from its wait while the threads
       finish their naps (up to 100 ms): measured, as any other busy period. */
    uint64_t s = now_ns();
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 5; i++)
        pthread_join(t[i], NULL);
    record("soak_shutdown", s, now_ns());
    for (int i = 0; i < 5; i++)
        loop_wait(5);
    out("soak: %.0f s, %d hangs, unexpected EINTR %ld, children %ld, dlopens %ld, threads %ld, signals %d", seconds,
        hangs, unexpected_eintr, children, dlopens, threads_made, (int)signals_caught);
    return 0;
}
