// /proc/PID/task/TID/stat: "tid (comm) state ppid ...", the name in
// parentheses may itself hold ") ", so fields are counted from the last ')'.
#include "hangwatch_os.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hw_os_read_stat(int fd, hw_os_stat *out) {
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ') return 0;
    out->state = paren[2];
    // Fields after the name: state(3) ... num_threads(20).
    int field = 2;
    const char *p;
    for (p = paren + 1; *p && field < 20; p++) if (*p == ' ') field++;
    out->num_threads = atoi(p);
    return 1;
}
