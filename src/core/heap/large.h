/* large.h — objects above large_threshold (large.c): OS mappings of their own, kept in a
 * bounded cache when freed, grown and shrunk in place by realloc. */
#ifndef HL_LARGE_H
#define HL_LARGE_H

#include <stddef.h>

extern size_t hl_large_threshold;       /* effective: large_threshold, or S/2 when 0 */

/* A block of size bytes aligned to align (any power of two), NULL + ENOMEM on failure. Its
 * first size bytes are zero (calloc relies on it): a mapping reused from the cache is cleared. */
void *hl_large_alloc(size_t size, size_t align);
/* The same without clearing a reused mapping: for malloc, memalign and realloc. */
void *hl_large_alloc_dirty(size_t size, size_t align);
void hl_large_free(void *p);
size_t hl_large_usable(const void *p);
/* Resize large block p to size bytes, in place or moved without a copy (mremap) where it can;
 * the contents up to the smaller size survive. NULL + ENOMEM on failure, p left intact. The
 * caller does the statistics, observers and checks for p and the result (they may differ). */
void *hl_large_realloc(void *p, size_t size);
size_t hl_large_cached(void);           /* bytes in the cache now (counted in A) */
void hl_large_flush(void);              /* unmap every cached mapping (tests) */
size_t hl_large_live(void);             /* bytes in live large mappings now */
size_t hl_large_peak(void);             /* their recent peak (decays on each free) */
/* The cache's bound for `live` bytes in live large mappings with a recent peak `peak`, by
 * large_reuse: 0 (unmap), large_cache (fixed), max(large_cache, (1 + large_follow) x peak -
 * live) (follow: A = live + cached <= (1 + large_follow) x peak). */
size_t hl_large_bound(size_t live, size_t peak);
size_t hl_large_bound_now(void);        /* hl_large_bound(hl_large_live(), hl_large_peak()) */
/* The recent peak after a free leaves `live` bytes: 1/256 of the way down to it. */
size_t hl_large_decay(size_t peak, size_t live);
/* The cache lock, for the fork handlers: 0 prepare (take it before purge.c's, which is taken
 * while holding it: fork.c's order), 1 parent, 2 child. */
void hl_large_fork(int phase);

#endif
