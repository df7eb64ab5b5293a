/*
 * return_spin: a hang whose samples often land on a function's `ret`.
 *
 *   return_spin [--measure FILE]
 *
 * The main loop idles, then one tick runs returning_spin() for 300 ms: a loop
 * that calls epilogue_step(), a function that is all prologue and epilogue.
 * Its call-frame rows are the ones compilers write (GCC and LLVM alike): after
 * `pop %rbp` the row still says rbp is saved at CFA-16, a word now below the
 * stack pointer and outside any stack copy. Its caller's frame is found from
 * rbp. A sample at its `ret` must still unwind to main (unwinder.c, step_over_ret).
 * A pause before each step's `ret` makes it the next instruction of many
 * samples, and gives the two steps like shares of the hang whatever the CPU's
 * pause costs (without it, one CPU gave epilogue_step under 5 %).
 *
 * The loop also calls jump_step(), whose `push; ret` is a jump (as in a
 * retpoline) to jump_landing(), a `ret` of its own: the word at the stack
 * pointer there is no return address, and a sample at that `ret` must unwind
 * by its call-frame row, not take the jump's target for a caller.
 */
#include "safety.h"

void epilogue_step(void);
__asm__(".text\n"
        ".globl epilogue_step\n"
        ".type epilogue_step, @function\n"
        "epilogue_step:\n"
        "  .cfi_startproc\n"
        "  push %rbp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  .cfi_offset %rbp, -16\n"
        "  mov %rsp, %rbp\n"
        "  .cfi_def_cfa_register %rbp\n"
        "  pop %rbp\n"
        "  .cfi_def_cfa %rsp, 8\n"
        "  pause\n"
        "  ret\n"
        "  .cfi_endproc\n"
        "  .size epilogue_step, .-epilogue_step\n");

void jump_step(void);
__asm__(".text\n"
        ".globl jump_step\n"
        ".type jump_step, @function\n"
        "jump_step:\n"
        "  .cfi_startproc\n"
        "  lea jump_landing(%rip), %rax\n"
        "  push %rax\n"
        "  .cfi_adjust_cfa_offset 8\n"
        "  pause\n"
        "  ret\n"
        "  .cfi_endproc\n"
        "  .size jump_step, .-jump_step\n"
        "  .fill 8, 1, 0xcc\n" /* no call instruction before the landing */
        ".type jump_landing, @function\n"
        "jump_landing:\n"
        "  .cfi_startproc\n"
        "  ret\n"
        "  .cfi_endproc\n"
        "  .size jump_landing, .-jump_landing\n");

/* Its caller keeps a frame pointer, and its call-frame rows find the caller's
 * frame from rbp (as Swift's do): rbp's value is needed to go on from there. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void returning_spin(void)
{
    uint64_t end = now_ns() + 300 * 1000000ull;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++) {
            epilogue_step();
            jump_step();
        }
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    safety_init(&argc, argv);
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    MEASURED("returning_spin", returning_spin());
    for (int i = 0; i < 10; i++)
        loop_wait(10);
    out("done");
    return 0;
}
