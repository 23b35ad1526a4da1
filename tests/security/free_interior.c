/* Free of an interior pointer: p + 16 of a live 64-byte block. */
#include "misuse.h"

int main(void) {
    char *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    free(launder(p + 16));
    char *a = malloc(BLOCK);
    memset(a, 2, BLOCK);
    free(a);
    return 0;
}
