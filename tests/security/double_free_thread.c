/* Double free, other thread: the main thread frees a 64-byte block, a second thread frees it
 * again (the second free takes a remote path in allocators that have one). */
#include <pthread.h>

#include "misuse.h"

static void *second_free(void *p) {
    free(launder(p));
    return NULL;
}

int main(void) {
    char *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    free(p);
    pthread_t t;
    if (pthread_create(&t, NULL, second_free, p) != 0) return 2;
    pthread_join(t, NULL);
    char *a = malloc(BLOCK), *b = malloc(BLOCK);
    memset(a, 2, BLOCK);
    memset(b, 3, BLOCK);
    free(a);
    free(b);
    return 0;
}
