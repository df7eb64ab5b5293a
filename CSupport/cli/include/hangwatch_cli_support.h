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

#ifdef __cplusplus
}
#endif
#endif
