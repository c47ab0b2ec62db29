/* A small C target for the lldb tests: calls, a loop, both output streams, stdin, an exit code. */
#include <stdio.h>
#include <string.h>

static int square(int n) {
    int result = n * n; /* square body */
    return result;
}

int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i <= 3; i++) {
        total += square(i); /* loop body */
    }
    printf("total=%d\n", total); /* print total */
    fprintf(stderr, "squares done\n");
    if (argc > 1 && strcmp(argv[1], "--ask") == 0) {
        char name[64] = "";
        if (fgets(name, sizeof name, stdin) != NULL) {
            name[strcspn(name, "\n")] = '\0';
            printf("hello %s\n", name);
        }
    }
    fflush(stdout);
    return total == 14 ? 3 : 1;
}
