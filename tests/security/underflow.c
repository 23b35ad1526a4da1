/* Underflow: 16 bytes written just before a 64-byte block (where an allocator that keeps an
 * in-band header keeps it), then the block freed and the size allocated again. */
#include "misuse.h"

int main(void) {
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    memset(a, 2, BLOCK);
    memset((char *)launder(b) - 16, 0x43, 16);
    free(b);
    free(a);
    char *c = malloc(BLOCK), *d = malloc(BLOCK);
    memset(c, 4, BLOCK);
    memset(d, 5, BLOCK);
    free(c);
    free(d);
    return 0;
}
