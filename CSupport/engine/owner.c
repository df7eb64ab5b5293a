// Which process owns the engine. The log is a MAP_SHARED file mapping, so a
// child made by fork, _Fork or a raw clone(SIGCHLD) shares it with the
// parent, and its copy of the engine (slots, TLS) would write busy periods
// into the parent's log as if they were the parent's. The owner token lives
// in a page marked MADV_WIPEONFORK: every such child finds it zeroed, without
// any fork hook having run. A vfork child shares our memory and so the token:
// the few paths a vfork child can reach (exec) compare getpid() instead.
#include "engine_internal.h"

#include <sys/mman.h>

static uint32_t *owner_token;

// SIGNAL-SAFE: one load.
bool hw_owned(void) {
    const uint32_t *token = __atomic_load_n(&owner_token, __ATOMIC_ACQUIRE);
    return token && __atomic_load_n(token, __ATOMIC_RELAXED) != 0;
}

void hw_owner_claim(void) {
    if (!owner_token) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) return;
        // Without WIPEONFORK (kernels before 4.14) the atfork hook remains the only guard.
        (void)madvise(page, 4096, MADV_WIPEONFORK);
        __atomic_store_n(&owner_token, (uint32_t *)page, __ATOMIC_RELEASE);
    }
    __atomic_store_n(owner_token, 1u, __ATOMIC_RELEASE);
}
