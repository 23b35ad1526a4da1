/* Linear overflow into the next block: 80 bytes written into a 64-byte block that has a
 * neighbour allocated right after it, then both freed and the size allocated again. */
#include "misuse.h"

int main(void) {
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    memset(b, 3, BLOCK);
    memset(launder(a), 0x42, BLOCK + 16);
    free(a);
    free(b);
    char *c = malloc(BLOCK), *d = malloc(BLOCK);
    memset(c, 4, BLOCK);
    memset(d, 5, BLOCK);
    free(c);
    free(d);
    return 0;
}
