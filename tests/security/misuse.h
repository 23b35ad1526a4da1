/* What every program of the misuse corpus shares. Each program commits one misuse of the
 * heap and then keeps going as a careless program would; it prints nothing and returns 0 if
 * it ran to the end. Whether the allocator noticed is the runner's business (run.py reads the
 * exit status, the signal and stderr), never the program's.
 *
 * launder() hides where a pointer came from, so the compiler neither warns about the misuse
 * (-Wfree-nonheap-object, -Wuse-after-free are errors in this build) nor folds it away; use()
 * reads a block through a volatile sum so the writes before it are not dead stores. */
#ifndef HL_MISUSE_H
#define HL_MISUSE_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 64

static inline void *launder(void *p) {
    void *volatile q = p;
    return q;
}

static inline void use(void *p, size_t n) {
    volatile unsigned char *b = launder(p);
    volatile unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += b[i];
    (void)sum;
}

#endif
