/*
 * hanglib: a small shared library that dlopen_hang loads after it starts.
 *
 *   cc -O2 -g -fPIC -shared -o libhangwork.so hanglib.c
 *
 * hanglib_busy_work(ms): real arithmetic for `ms` milliseconds, self time of
 * this function. With HANGLIB_CONSTRUCTOR_MS=N in the environment, the
 * library's constructor does the same for N ms, i.e. inside dlopen, while
 * the loader holds its lock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t hanglib_sink;

static uint64_t hanglib_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t hanglib_busy_work(uint64_t ms)
{
    uint64_t deadline = hanglib_now_ns() + ms * 1000000ULL, h = deadline;
    do {
        for (int i = 0; i < 4096; i++) {
            h ^= h >> 29;
            h *= 0x100000001b3ULL;
        }
    } while (hanglib_now_ns() < deadline);
    hanglib_sink += h;
    return h;
}

__attribute__((noinline)) void hanglib_constructor_work(uint64_t ms)
{
    hanglib_sink += hanglib_busy_work(ms);
    hanglib_sink += 1; /* work after the call: no tail call */
}

__attribute__((constructor)) static void hanglib_init(void)
{
    const char *ms = getenv("HANGLIB_CONSTRUCTOR_MS");
    if (ms)
        hanglib_constructor_work(strtoull(ms, NULL, 10));
}
