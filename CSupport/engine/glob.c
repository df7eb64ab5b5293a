// Thread selection: exact names or shell-style globs (`*`, `?`), one per line.
#include "engine_internal.h"
#include <fnmatch.h>
#include <string.h>

bool hw_thread_name_matches(const char *patterns, const char *name) {
    if (!patterns || !*patterns) return strcmp(name, "main") == 0;
    const char *p = patterns;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char pattern[128];
        if (len > 0 && len < sizeof pattern) {
            memcpy(pattern, p, len);
            pattern[len] = 0;
            if (fnmatch(pattern, name, 0) == 0) return true;
        }
        if (!end) break;
        p = end + 1;
    }
    return false;
}
