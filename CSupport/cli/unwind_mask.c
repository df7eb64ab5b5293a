// libunwind's remote unwinding keeps its per-address cache under a lock, and
// takes the lock with every signal blocked: sigprocmask(SIG_SETMASK, all)
// before, sigprocmask(SIG_SETMASK, saved) after, around each step. That is
// 72 system calls for a 35-frame sample, 316 ns a pair on the reference VM:
// about 11 µs of the hangwatch process's ~20 µs per sample (BENCHMARKS.md,
// issue 11). The masking exists so that a signal handler that unwinds on the
// same thread cannot deadlock on the lock. In the hangwatch process no signal
// handler unwinds (only the reader thread calls libunwind, outside any
// handler), so the masking protects nothing here: this file answers the mask
// calls that come from libunwind's own code without a system call, and
// forwards every other caller's to libc. The lock itself is kept.
//
// How: this executable defines sigprocmask, and a shared library's call to
// it (libunwind's, through its PLT) binds to the executable's definition
// first. glibc's internal calls do not go through the PLT and are untouched.
// Linked into the `hangwatch` executable only; the library (inside the
// user's program) keeps libunwind's calls as they are.
#include "hangwatch_cli_support.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAX_RANGES 8

/// libunwind's executable segments: [lo, hi) pairs, written once before any unwinding.
static struct { uintptr_t lo, hi; } ranges[MAX_RANGES];
static int range_count;
static int (*libc_sigprocmask)(int, const sigset_t *, sigset_t *);
static unsigned long long saved_calls;

static int note_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    if (!name || strncmp(name, "libunwind", 9) != 0) return 0;
    for (int i = 0; i < info->dlpi_phnum && range_count < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        ranges[range_count].lo = lo;
        ranges[range_count].hi = lo + (uintptr_t)ph->p_memsz;
        range_count++;
    }
    return 0;
}

void hw_cli_unwind_mask_shortcut_install(void) {
    if (!libc_sigprocmask) libc_sigprocmask = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "sigprocmask");
    if (range_count == 0) dl_iterate_phdr(note_object, NULL);
}

unsigned long long hw_cli_unwind_mask_calls_saved(void) { return __atomic_load_n(&saved_calls, __ATOMIC_RELAXED); }

static bool from_libunwind(uintptr_t from) {
    for (int i = 0; i < range_count; i++)
        if (from >= ranges[i].lo && from < ranges[i].hi) return true;
    return false;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    if (from_libunwind((uintptr_t)__builtin_return_address(0))) {
        // Both calls of a pair come from here: the "saved" mask handed back is
        // only ever given back to us, and dropped.
        if (old) sigemptyset(old);
        __atomic_fetch_add(&saved_calls, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (!libc_sigprocmask) libc_sigprocmask = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "sigprocmask");
    return libc_sigprocmask ? libc_sigprocmask(how, set, old) : pthread_sigmask(how, set, old);
}
