// libunwind keeps its per-address cache under a lock, and takes the lock with
// every signal blocked: sigprocmask(SIG_SETMASK, all, &saved) before and
// sigprocmask(SIG_SETMASK, &saved, NULL) after, around each step: two system
// calls per frame, a large share of the hangwatch process's cost per sample
// (BENCHMARKS.md, "Unwinding without libunwind's signal-mask system calls"). The masking exists so that a signal handler that unwinds on the
// same thread cannot deadlock on the lock. In the hangwatch process no signal
// handler unwinds (its handlers forward a signal or set a flag; samples are
// unwound by the reader, outside any handler), so the masking protects
// nothing here: this file answers the SIG_SETMASK calls that come from the
// code of libunwind's libraries (libunwind-x86_64 for the remote unwinding,
// libunwind itself) without a system call, and forwards every other call
// (another caller, another `how`) to the kernel as glibc does. The lock
// itself is kept.
//
// How: this executable defines sigprocmask, and a shared library's call to
// it (libunwind's, through its PLT) binds to the executable's definition
// first. glibc's internal calls do not go through the PLT and are untouched;
// libdispatch and liblzma call pthread_sigmask. Linked into the `hangwatch`
// executable only; the library (inside the user's program) keeps
// libunwind's calls as they are.
#include "hangwatch_cli_support.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAX_RANGES 8

/// libunwind's executable segments: [lo, hi) pairs, written once at load,
/// before main and before any thread exists.
static struct { uintptr_t lo, hi; } ranges[MAX_RANGES];
static int range_count;

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

// At load: the ranges must never appear between the two calls of one pair
// (the thread would be left with what the first call was told).
__attribute__((constructor)) static void find_libunwind(void) { dl_iterate_phdr(note_object, NULL); }

void hw_cli_unwind_mask_shortcut_install(void) {
    if (range_count == 0) dl_iterate_phdr(note_object, NULL); // the constructor found nothing
}

static bool from_libunwind(uintptr_t from) {
    for (int i = 0; i < range_count; i++)
        if (from >= ranges[i].lo && from < ranges[i].hi) return true;
    return false;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    if (how == SIG_SETMASK && from_libunwind((uintptr_t)__builtin_return_address(0))) {
        // Both calls of a pair come from there: the "saved" mask handed back is
        // only ever given back to us, and dropped.
        if (old) sigemptyset(old);
        return 0;
    }
    // What glibc's sigprocmask does: no dlsym, no lock, fine in a vfork child.
    int err = pthread_sigmask(how, set, old);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}
