/*
 * The list forms of exec (execl, execlp, execle), run plain and under
 * hangwatch by Tests/IntegrationTests/ExecListTests.swift: the new image
 * must get the same arguments and, for execle, the same environment.
 *
 *   execl_family l | lp | le
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "l")) execl("/bin/echo", "echo", "via", "execl", (char *)0);
    else if (!strcmp(argv[1], "lp")) execlp("echo", "echo", "via", "execlp", (char *)0);
    else if (!strcmp(argv[1], "le")) {
        char *env[] = { "HW_EXECLE=1", "SECOND=two", 0 };
        execle("/usr/bin/env", "env", (char *)0, env);
    } else return 2;
    perror("exec");
    return 9;
}
