// /proc/PID/task/TID/syscall: "running"; "nr a0 a1 a2 a3 a4 a5 sp pc" (hex
// after nr) for a thread blocked in system call nr; "-1 sp pc" for one
// stopped or faulting outside any. Reading it needs PTRACE_MODE_ATTACH.
#include "hangwatch_os.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

hw_os_syscall hw_os_read_syscall(int fd) {
    hw_os_syscall p = { .activity = HW_OS_UNKNOWN, .nr = -1 };
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        if (n < 0 && (errno == ESRCH || errno == ENOENT)) p.activity = HW_OS_GONE;
        return p;
    }
    buf[n] = 0;
    if (strncmp(buf, "running", 7) == 0) { p.activity = HW_OS_RUNNING; return p; }
    unsigned long long a[6] = {0}, sp = 0, pc = 0;
    long nr = -1;
    int got = sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3],
                     &a[4], &a[5], &sp, &pc);
    if (got == 9 && nr >= 0) {
        p.activity = HW_OS_IN_SYSCALL;
        p.nr = nr;
        for (int i = 0; i < 6; i++) p.args[i] = a[i];
        p.sp = sp;
        p.pc = pc;
    } else if (got == 3 && nr == -1) {
        p.activity = HW_OS_OUTSIDE_SYSCALL;
        p.sp = a[0];
        p.pc = a[1];
    }
    return p;
}
