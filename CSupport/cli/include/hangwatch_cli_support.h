// C support linked into the `hangwatch` executable only (never into the
// library, which runs inside the user's program).
#ifndef HANGWATCH_CLI_SUPPORT_H
#define HANGWATCH_CLI_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/// libunwind's signal-mask calls are answered without a system call
/// (unwind_mask.c). Its code is found when the executable loads; calling
/// this from main also keeps the file linked in.
void hw_cli_unwind_mask_shortcut_install(void);

/// pidfd_open(2) of a child: a descriptor that polls readable once the child
/// has exited (child_exit.c). -1 with errno set where the kernel lacks it.
int hw_cli_pidfd_open(int pid);

#ifdef __cplusplus
}
#endif
#endif
