/* Free of a stack array of 64 bytes. */
#include "misuse.h"

int main(void) {
    char buf[BLOCK];
    memset(buf, 1, sizeof buf);
    free(launder(buf));
    char *a = malloc(BLOCK);
    memset(a, 2, BLOCK);
    free(a);
    use(buf, sizeof buf);
    return 0;
}
