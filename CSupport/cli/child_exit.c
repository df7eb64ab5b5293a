// A descriptor that becomes readable when a child process exits, so the CLI
// can sleep in poll() between drains and still see the exit at once.
#include "hangwatch_cli_support.h"

#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 // Linux 5.3, the same number on every architecture
#endif

int hw_cli_pidfd_open(int pid) {
    // glibc's syscall() is variadic, which Swift cannot call: hence this file.
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
