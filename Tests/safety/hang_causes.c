/*
 * Hangs whose cause is not the loop's own code (issue 33), run plain and
 * under hangwatch by Tests/IntegrationTests/HangCauseTests.swift.
 *
 *   hang_causes deadlock MARKER [IDLE_MS]
 *     After IDLE_MS (100) idle in the loop's poll, the loop's request takes orders_lock, then audit_lock (settle_order);
 *     thread "auditor" takes audit_lock, then orders_lock (record_audit). A
 *     barrier makes both hold their first lock before asking for the second:
 *     a deadlock, every time. MARKER is created once both are about to wait.
 *     The program then waits to be killed.
 *
 *   hang_causes spin CPU_MS COUNT GAP_MS [MARKER]
 *     COUNT requests, each after GAP_MS idle in the loop's poll: burn CPU_MS
 *     of the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), however long
 *     that takes in wall time (a CPU limit, a stop). MARKER.N is created when
 *     request N starts. Prints one stable line per request.
 *
 *   hang_causes crowded CPU_MS COUNT GAP_MS RIVALS
 *     spin, with the loop's thread and RIVALS busy child processes all pinned
 *     to one CPU, so each request waits for that CPU most of its time. The
 *     rivals cannot outlive the program: each dies with it (PR_SET_PDEATHSIG),
 *     after 20 s in any case (alarm), and is killed and reaped at the end.
 */
#include "safety.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static pthread_mutex_t orders_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}

/* The loop's wait: poll on a pipe that never becomes readable. */
static void loop_wait_ms(int ms)
{
    struct pollfd p = { .fd = sf_loop_pipe[0], .events = POLLIN };
    uint64_t until = now_ns() + (uint64_t)ms * MS_NS;
    while (now_ns() < until) {
        int left = (int)((until - now_ns()) / MS_NS) + 1;
        poll(&p, 1, left);
    }
}

__attribute__((noinline)) static void record_audit(void)
{
    pthread_mutex_lock(&audit_lock);
    pthread_barrier_wait(&both_hold);
    pthread_mutex_lock(&orders_lock); /* held by the loop, which waits for audit_lock */
    pthread_mutex_unlock(&orders_lock);
    pthread_mutex_unlock(&audit_lock);
}

static void *auditor(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "auditor");
    record_audit();
    return NULL;
}

__attribute__((noinline)) static void settle_order(const char *marker)
{
    pthread_mutex_lock(&orders_lock);
    pthread_barrier_wait(&both_hold);
    touch(marker);
    pthread_mutex_lock(&audit_lock); /* held by auditor, which waits for orders_lock */
    pthread_mutex_unlock(&audit_lock);
    pthread_mutex_unlock(&orders_lock);
}

static int deadlock(const char *marker, int idle_ms)
{
    pthread_barrier_init(&both_hold, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, auditor, NULL);
    loop_wait_ms(idle_ms);
    out("settling");
    settle_order(marker);
    out("settled"); /* never */
    return 0;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void handle_request(uint64_t cpu_ns)
{
    uint64_t until = thread_cpu_ns() + cpu_ns;
    while (thread_cpu_ns() < until) spin_until(now_ns() + 200000ull);
}

static int spin(int cpu_ms, int count, int gap_ms, const char *marker)
{
    for (int i = 1; i <= count; i++) {
        loop_wait_ms(gap_ms);
        if (marker) {
            char path[512];
            snprintf(path, sizeof path, "%s.%d", marker, i);
            touch(path);
        }
        uint64_t start = now_ns(), cpu = thread_cpu_ns();
        handle_request((uint64_t)cpu_ms * MS_NS);
        uint64_t end = now_ns();
        record("request", start, end);
        measure_line("cpu %d %.3f", i, (double)(thread_cpu_ns() - cpu) / 1e6);
        out("request %d done", i);
    }
    loop_wait_ms(gap_ms);
    return 0;
}

/* Pins the calling thread to the first CPU it may run on; returns that CPU. */
static int pin_to_first_cpu(void)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
    }
    return -1;
}

static int crowded(int cpu_ms, int count, int gap_ms, int rivals)
{
    if (pin_to_first_cpu() < 0 || rivals < 1 || rivals > 8) return 3;
    pid_t pids[8];
    pid_t parent = getpid();
    for (int i = 0; i < rivals; i++) {
        pids[i] = fork();
        if (pids[i] < 0) return 3;
        if (pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);  /* the parent is already gone */
            alarm(20);
            for (;;) spin_until(now_ns() + 1000000ull);
        }
    }
    int rc = spin(cpu_ms, count, gap_ms, NULL);
    for (int i = 0; i < rivals; i++) kill(pids[i], SIGKILL);
    for (int i = 0; i < rivals; i++) waitpid(pids[i], NULL, 0);
    return rc;
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    if (argc >= 3 && !strcmp(argv[1], "deadlock")) return deadlock(argv[2], argc >= 4 ? atoi(argv[3]) : 100);
    if (argc >= 5 && !strcmp(argv[1], "spin"))
        return spin(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc >= 6 ? argv[5] : NULL);
    if (argc >= 6 && !strcmp(argv[1], "crowded"))
        return crowded(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    fprintf(stderr, "usage: hang_causes deadlock MARKER [IDLE_MS] | spin CPU_MS COUNT GAP_MS [MARKER]"
                    " | crowded CPU_MS COUNT GAP_MS RIVALS\n");
    return 2;
}
