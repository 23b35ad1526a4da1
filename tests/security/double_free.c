/* Double free, same thread: a 64-byte block freed twice in a row, then the size used again. */
#include "misuse.h"

int main(void) {
    char *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    free(p);
    free(launder(p));
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    memset(a, 2, BLOCK);
    memset(b, 3, BLOCK);
    free(a);
    free(b);
    return 0;
}
