/* A C target with a struct pointer: breakpoint conditions in the target's own language. */
#include <stdio.h>

struct buf {
    int len;
    const char *name;
};

static int weigh(const struct buf *p) {
    return p->len * 2; /* weigh body */
}

int main(void) {
    struct buf bufs[] = {{1, "a"}, {5, "b"}, {2, "c"}, {7, "d"}};
    int total = 0;
    for (int i = 0; i < 4; i++) {
        total += weigh(&bufs[i]);
    }
    printf("total=%d\n", total);
    return 0;
}
