// C support linked into the `hangwatch` executable only (never into the
// library, which runs inside the user's program).
#ifndef HANGWATCH_CLI_SUPPORT_H
#define HANGWATCH_CLI_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/// Finds libunwind's code in this process so that its signal-mask calls can
/// be answered without a system call (unwind_mask.c). Call once at start,
/// before any unwinding; harmless when libunwind is not loaded.
void hw_cli_unwind_mask_shortcut_install(void);

/// How many signal-mask calls from libunwind were answered without a system call.
unsigned long long hw_cli_unwind_mask_calls_saved(void);

#ifdef __cplusplus
}
#endif
#endif
