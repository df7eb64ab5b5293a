/*
 * argv_environ: prints the bytes it was started with, so that a run under
 * hangwatch can be compared with a plain one byte for byte.
 *
 *   argv_environ [ARGS...]
 *
 * stdout: "argv HEX" for each argument, argv[0] first, then "env HEX" for
 * each environ entry, in environ's order. Hex, because the entries may hold
 * any byte but NUL (bytes that are not UTF-8, newlines); an empty entry is
 * a line "argv " or "env ". Printed first thing in main: what the program
 * itself is given to see.
 */
#include <stdio.h>

extern char **environ;

static void print_hex(const char *label, const char *s)
{
    printf("%s ", label);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        printf("%02x", *p);
    printf("\n");
}

int main(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        print_hex("argv", argv[i]);
    for (char **e = environ; *e; e++)
        print_hex("env", *e);
    return fflush(stdout) == 0 ? 0 : 1;
}
