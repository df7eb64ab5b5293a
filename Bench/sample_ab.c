/*
 * sample_ab: what one sample costs the sampled thread, measured inside one
 * process, for Bench/run.sh (issue 11, row (d)).
 *
 *   cc -O2 -pthread -o sample_ab sample_ab.c
 *   sample_ab --rounds R --iters N [--self-signal-hz HZ] [--out FILE]
 *
 * Comparing the thread CPU of a hung run under hangwatch with that of a plain
 * run takes the difference of two separate processes' CPU times: on a shared
 * 2-vCPU VM their spread (±1-2 %) is as large as the sampling cost itself, and
 * the floor came out negative. Here the same work runs R times in each of two
 * phases of one process, alternating (on, off, off, on, ...), and only the
 * thread CPU of each phase is compared:
 *   on:  N xorshift iterations inside one callback of an epoll loop, a busy
 *        period of a few hundred ms that hangwatch samples;
 *   off: the same N iterations in chunks of about 2 ms, each chunk ended by a
 *        loop wait that returns at once (an always-readable eventfd), so no
 *        busy period reaches the 10 ms at which sampling starts.
 * Both phases make the same epoll_wait calls: the on phase's pass timeout 0,
 * which hangwatch passes through (no heartbeat), the off phase's pass −1.
 * With --self-signal-hz HZ (no hangwatch) a helper thread sends SIGPROF to the
 * main thread HZ times a second during the on phases only, to an empty
 * handler: the same measure of bare signal delivery, the floor.
 * With --self-perf-hz HZ [--perf-stack BYTES] (no hangwatch) the main thread
 * has a perf_event task clock of its own, enabled during the on phases only,
 * sampling registers and BYTES of stack (default 8192) HZ times a second of
 * its CPU time, and a helper thread empties the ring every millisecond:
 * the floor of the kernel's sampler, as hangwatch uses it.
 *
 * One line to --out FILE (or stdout):
 *   rounds=R on_cpu_ns=<sum> off_cpu_ns=<sum> diff_med_ns=<median of the
 *   per-round on - off> signals=<handled, on phases; or kernel samples with
 *   --self-perf-hz> on_wall_ns=<sum>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

#define MAX_ROUNDS 64
#define CHUNKS 128 /* per phase: about 2 ms each for a 250-300 ms phase */

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t kernel(uint64_t x, uint64_t n) { return xorshift_chain(x, n); }

/* ---- the kernel sampler's floor: a perf_event ring on the main thread ---- */
#define PERF_PAGES 64
static int perf_fd = -1;
static struct perf_event_mmap_page *perf_meta;

static int perf_open(uint64_t hz, uint32_t stack_bytes)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = 1000000000ull / hz;
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP) | (1ull << PERF_REG_X86_BP);
    attr.sample_stack_user = stack_bytes;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    perf_fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (perf_fd < 0) return -1;
    long page = sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, (size_t)(PERF_PAGES + 1) * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, perf_fd, 0);
    if (map == MAP_FAILED) return -1;
    perf_meta = map;
    return 0;
}

/* Empties the ring every millisecond, as hangwatch's watchdog does, counting samples. */
static void *perf_drainer(void *arg)
{
    (void)arg;
    const uint8_t *data = (const uint8_t *)perf_meta + perf_meta->data_offset;
    uint64_t size = perf_meta->data_size;
    while (!sig_stop) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
        uint64_t head = __atomic_load_n(&perf_meta->data_head, __ATOMIC_ACQUIRE), tail = perf_meta->data_tail;
        while (tail < head) {
            struct perf_event_header h;
            uint64_t at = tail & (size - 1);
            if (at + sizeof h <= size) memcpy(&h, data + at, sizeof h);
            else break; /* a header split by the wrap: skip the rest of this batch */
            if (h.size < sizeof h) break;
            if (h.type == PERF_RECORD_SAMPLE) sig_hits++;
            tail += h.size;
        }
        __atomic_store_n(&perf_meta->data_tail, head, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int ep;

static void loop_wait(int timeout_ms)
{
    struct epoll_event got;
    while (epoll_wait(ep, &got, 1, timeout_ms) < 0 && errno == EINTR) {}
}

/* One phase; returns its thread CPU. The on phase is one busy period. */
static uint64_t phase(int on, uint64_t iters)
{
    uint64_t per = iters / CHUNKS, x = 88172645463325252ull;
    sig_gate = on;
    if (on && perf_fd >= 0) ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < CHUNKS; i++) {
        x = kernel(x, per);
        loop_wait(on ? 0 : -1);
    }
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (on && perf_fd >= 0) ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    sig_gate = 0;
    sink = x;
    return cpu;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint64_t iters = 0, signal_hz = 0, perf_hz = 0, perf_stack = 8192;
    int rounds = 8;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--self-signal-hz") && i + 1 < argc) signal_hz = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--self-perf-hz") && i + 1 < argc) perf_hz = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--perf-stack") && i + 1 < argc) perf_stack = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else { fprintf(stderr, "sample_ab: bad argument '%s'\n", argv[i]); return 2; }
    }
    if (!iters || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "sample_ab: --iters N and --rounds 1-%d needed\n", MAX_ROUNDS);
        return 2;
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    int ev = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK); /* never read: always readable */
    struct epoll_event e = { .events = EPOLLIN, .data.fd = ev };
    if (ep < 0 || ev < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) < 0) { perror("sample_ab: epoll"); return 1; }

    pthread_t sender;
    sig_gate = 0; /* signals during the on phases only */
    if (signal_hz && self_signal_start(&sender, signal_hz) != 0) { perror("sample_ab: pthread_create"); return 1; }
    pthread_t drainer;
    if (perf_hz) {
        if (perf_open(perf_hz, (uint32_t)perf_stack) != 0) { perror("sample_ab: perf_event_open"); return 1; }
        if (pthread_create(&drainer, NULL, perf_drainer, NULL) != 0) { perror("sample_ab: pthread_create"); return 1; }
    }
    loop_wait(-1); /* the launch period ends here */
    uint64_t on_sum = 0, off_sum = 0, on_wall = 0;
    int64_t diff[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        uint64_t on, off;
        if (r % 2 == 0) {
            uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
            on = phase(1, iters);
            on_wall += clock_ns(CLOCK_MONOTONIC) - t0;
            loop_wait(-1);
            off = phase(0, iters);
        } else {
            off = phase(0, iters);
            uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
            on = phase(1, iters);
            on_wall += clock_ns(CLOCK_MONOTONIC) - t0;
            loop_wait(-1);
        }
        on_sum += on;
        off_sum += off;
        diff[r] = (int64_t)on - (int64_t)off;
    }
    sig_stop = 1;
    if (signal_hz) pthread_join(sender, NULL);
    if (perf_hz) pthread_join(drainer, NULL);
    qsort(diff, (size_t)rounds, sizeof diff[0], cmp_i64);
    int64_t med = rounds % 2 ? diff[rounds / 2] : (diff[rounds / 2 - 1] + diff[rounds / 2]) / 2;
    char line[256];
    int len = snprintf(line, sizeof line, "rounds=%d on_cpu_ns=%llu off_cpu_ns=%llu diff_med_ns=%lld signals=%u on_wall_ns=%llu\n",
                       rounds, (unsigned long long)on_sum, (unsigned long long)off_sum, (long long)med,
                       (unsigned)sig_hits, (unsigned long long)on_wall);
    int fd = out ? open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : 1;
    if (fd < 0) { perror(out); return 1; }
    (void)!write(fd, line, (size_t)len);
    if (out) close(fd);
    return 0;
}
