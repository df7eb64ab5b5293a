/*
 * hex_exec: execve with an argv and an environment no test runner can pass
 * (Foundation's Process and env(1) take names and values, so they cannot
 * give bytes that are not UTF-8, an entry without '=', or a name twice).
 *
 *   hex_exec PATH ARG... -- ENTRY...
 *
 * Every word but "--" is hex (an empty word is an empty string); "--" is
 * never a hex word, so it cannot be mistaken for one. Runs
 * execve(PATH, {ARG...}, {ENTRY...}): ARG... is the whole argv, argv[0]
 * first, and ENTRY... the whole environment, in the order given.
 * Status 2 for a malformed command line, 127 when execve fails.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int nibble(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes `word` in place (the bytes take half its room); 0 when it is not hex or decodes a NUL. */
static int decode(char *word)
{
    size_t n = strlen(word);
    if (n % 2) return 0;
    for (size_t i = 0; i < n; i += 2) {
        int hi = nibble(word[i]), lo = nibble(word[i + 1]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0) return 0;
        word[i / 2] = (char)(hi << 4 | lo);
    }
    word[n / 2] = '\0';
    return 1;
}

int main(int argc, char **argv)
{
    int split = 0;
    for (int i = 1; i < argc; i++) {
        if (!split && !strcmp(argv[i], "--")) {
            split = i;
            continue;
        }
        if (!decode(argv[i])) {
            fprintf(stderr, "hex_exec: word %d is not hex of a C string\n", i);
            return 2;
        }
    }
    if (split < 3) {
        fprintf(stderr, "usage: hex_exec PATH ARG... -- ENTRY...\n");
        return 2;
    }
    /* argv[split] becomes the end of the program's argv; the environment ends at argv[argc], NULL. */
    argv[split] = NULL;
    execve(argv[1], argv + 2, argv + split + 1);
    perror("hex_exec: execve");
    return 127;
}
