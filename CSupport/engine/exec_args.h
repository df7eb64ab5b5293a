// execl, execlp and execle take their arguments as a list: both the preload
// agent's and the library's wrappers gather them into an argv on the stack
// (exec is async-signal-safe, so no malloc) and hand it to the vector form.
#ifndef HANGWATCH_EXEC_ARGS_H
#define HANGWATCH_EXEC_ARGS_H

#include <stdarg.h>
#include <stddef.h>

/// How many list arguments start at `first` (`first` included, the NULL not).
/// Async-signal-safe.
static inline size_t hw_exec_count_args(const char *first, va_list ap) {
    size_t n = 1;
    va_list copy;
    va_copy(copy, ap);
    if (first) while (va_arg(copy, const char *)) n++;
    va_end(copy);
    return n;
}

/// Fills `argv` (n + 1 entries) with `first`, the next n - 1 list
/// arguments of `ap`, and the closing NULL, and consumes the list's own
/// closing NULL, so that execle's envp is the next argument of `ap`.
#define HW_GATHER_EXEC_ARGS(first, ap, argv, n)                         \
    for (size_t i_ = 1; i_ < (n); i_++) (argv)[i_] = va_arg(ap, char *); \
    if (first) (void)va_arg(ap, char *);                                \
    (argv)[0] = (char *)(first);                                        \
    (argv)[n] = NULL

#endif
