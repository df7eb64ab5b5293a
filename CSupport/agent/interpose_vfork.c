// vfork. The child runs on the parent's memory, stack and thread pointer, so
// every wait it makes would read the parent's TLS and move the parent's slot:
// its loop would be reported as the parent's, and the parent's own hang
// (suspended in vfork until the child execs or exits) lost. The wrapper marks
// the calling thread first (heartbeat.c: a wait on that TLS then asks the
// kernel for its tid, and only the parent's own next wait clears the mark),
// then jumps to glibc's vfork. It must be a jump, not a call: vfork returns
// twice on one stack, and a frame of ours would be clobbered by the child
// before the parent returned through it.
#include "agent_internal.h"

#include <dlfcn.h>
#include <unistd.h>

// Referenced only from the assembly below: `used` keeps LTO from dropping them.
__attribute__((used)) void *hw_real_vfork;

__attribute__((used, noinline)) void hw_vfork_prepare(void) {
    if (!hw_real_vfork) hw_real_vfork = dlsym(RTLD_NEXT, "vfork");
    hw_heartbeat_vfork_begin();
}

// Entered with the caller's return address on top of the stack (rsp = 8 mod
// 16): one more 8 bytes aligns the call. No argument registers to keep.
HW_EXPORT __attribute__((naked)) pid_t vfork(void) {
    __asm__("sub $8, %rsp\n\t"
            "call hw_vfork_prepare\n\t"
            "add $8, %rsp\n\t"
            "jmp *hw_real_vfork(%rip)\n\t");
}
