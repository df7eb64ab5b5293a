// Register capture for a thread that is about to block in an interposed wait.
// The watchdog later copies that thread's stack from the saved stack pointer
// and the reader unwinds from these registers with the callers' DWARF CFI,
// which needs exact callee-saved registers: hence assembly, not a guess.
#include "agent_hooks.h"
#include <stddef.h>

_Static_assert(HW_REG_RBX == 3 && HW_REG_RBP == 6 && HW_REG_RSP == 7 && HW_REG_R12 == 12
               && HW_REG_RIP == 16, "register slots used by the assembly below");

// void hw_capture_context(hw_blocked_context *out /* %rdi */)
// Stores rbx, rbp, r12-r15, the caller's rsp (after our return) and the
// return address as rip, i.e. the state at the instruction after the call.
__asm__(
    ".text\n"
    ".globl hw_capture_context\n"
    ".hidden hw_capture_context\n"
    ".type hw_capture_context,@function\n"
    "hw_capture_context:\n"
    ".cfi_startproc\n"
    "    movq %rbx, 24(%rdi)\n"
    "    movq %rbp, 48(%rdi)\n"
    "    leaq 8(%rsp), %rax\n"
    "    movq %rax, 56(%rdi)\n"
    "    movq %r12, 96(%rdi)\n"
    "    movq %r13, 104(%rdi)\n"
    "    movq %r14, 112(%rdi)\n"
    "    movq %r15, 120(%rdi)\n"
    "    movq (%rsp), %rax\n"
    "    movq %rax, 128(%rdi)\n"
    "    ret\n"
    ".cfi_endproc\n"
    ".size hw_capture_context, .-hw_capture_context\n");
