/* Free of a global (static) array of 64 bytes. */
#include "misuse.h"

static char global[BLOCK];

int main(void) {
    memset(global, 1, sizeof global);
    free(launder(global));
    char *a = malloc(BLOCK);
    memset(a, 2, BLOCK);
    free(a);
    use(global, sizeof global);
    return 0;
}
