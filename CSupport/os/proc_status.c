// /proc/PID/task/TID/status: "Name:\tvalue" lines (masks in hex).
#include "hangwatch_os.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t hw_os_read_status(int fd, char *buf, size_t len) {
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n >= 0) buf[n] = 0;
    return n;
}

bool hw_os_status_field(const char *status, const char *field, int base, unsigned long long *value) {
    const char *line = strstr(status, field);
    if (!line) return false;
    *value = strtoull(line + strlen(field), NULL, base);
    return true;
}
