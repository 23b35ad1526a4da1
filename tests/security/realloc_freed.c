/* Realloc of a freed block: a 64-byte block freed, then grown to 128 bytes by realloc, the
 * result written and freed. */
#include "misuse.h"

int main(void) {
    char *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    free(p);
    char *q = realloc(launder(p), 2 * BLOCK);
    if (q) {
        memset(q, 2, 2 * BLOCK);
        free(q);
    }
    return 0;
}
