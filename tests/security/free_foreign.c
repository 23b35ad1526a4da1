/* Free of a foreign pointer: an address inside a mapping of the program's own (mmap), which
 * malloc never returned. Two pages: the freed address is 256 bytes into the second, so an
 * allocator that reads a header before it reads the program's (zeroed) memory. */
#include <sys/mman.h>

#include "misuse.h"

int main(void) {
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 2;
    free(launder(m + 4096 + 256));
    char *a = malloc(BLOCK);
    memset(a, 2, BLOCK);
    free(a);
    munmap(m, 8192);
    return 0;
}
