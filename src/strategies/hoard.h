/* hoard.h — the policy of `hoard` (hoard.c), callable by tests. */
#ifndef HL_HOARD_H
#define HL_HOARD_H

#include "heaps.h"
#include "heap.h"
#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* Hoard's emptiness threshold (§3.1): u < a - k_s and u < (1 - f) a, k_s = K * S. */
bool hl_hoard_crosses_threshold(size_t u, size_t a, double f, size_t k_s);
void *hl_hoard_malloc_in(struct hl_heap *h, size_t size);   /* Figure 2 malloc, heap h */

/* The member of `hoard`'s row that `hoard2026` (hoard2026.c) shares, beside
 * HL_FRONTS_HEAP_ROW (fronts.h). */
int hl_hoard_init(void);

#pragma GCC visibility pop

#endif
