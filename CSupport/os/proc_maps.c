// /proc/PID/maps: "start-end perms offset dev inode [path]", numbers in hex.
// Read as a stream, so a line split between two reads needs nothing kept
// but what was parsed of it so far.
#include "hangwatch_os.h"

#include <string.h>
#include <unistd.h>

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

void hw_os_scan_maps(int fd, bool (*each)(const hw_os_mapping *m, void *ctx), void *ctx) {
    char buf[4096];
    hw_os_mapping m;
    memset(&m, 0, sizeof m);
    int field = 0;     // 0: start, 1: end, 2: the rest of the line
    int token = 0;     // in the rest: perms 1, offset 2, dev 3, inode 4, path 5
    size_t perms_len = 0;
    bool space = true;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (field == 2 && !each(&m, ctx)) return;
                memset(&m, 0, sizeof m);
                field = token = 0, perms_len = 0, space = true;
            } else if (field == 0 && c == '-') {
                field = 1;
            } else if (field < 2) {
                int d = hex_digit(c);
                if (d < 0) field = 2;
                else if (field == 0) m.start = m.start << 4 | (uint64_t)d;
                else m.end = m.end << 4 | (uint64_t)d;
            } else if (c == ' ' && token < 5) {
                space = true;
            } else {
                if (space) token++, space = false;
                if (token == 1 && perms_len < sizeof m.perms) m.perms[perms_len++] = c;
                if (token == 5) {
                    if (m.path_len < sizeof m.path) m.path[m.path_len] = c;
                    m.path_len++;
                }
            }
        }
    }
}
