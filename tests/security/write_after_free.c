/* Write after free, then reuse: 16 bytes written into a freed 64-byte block (where an
 * allocator keeps its free-list link, if it keeps one in the block), then two mallocs of the
 * same size, both written and freed. */
#include "misuse.h"

int main(void) {
    char *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    free(p);
    memset(launder(p), 0x41, 16);
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    memset(a, 2, BLOCK);
    memset(b, 3, BLOCK);
    use(a, BLOCK);
    use(b, BLOCK);
    free(a);
    free(b);
    return 0;
}
