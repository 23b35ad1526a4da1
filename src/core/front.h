/* front.h — the fast path of malloc and free, the whole of the core's own work on the common
 * call: one comparison and one indirect call each. Inlined into interpose.c (hl_malloc,
 * hl_free) and export.c (malloc, free).
 *
 * malloc(n) goes straight to the strategy when 0 < n <= large_threshold: `n - 1 < small_max`
 * tests both bounds at once. free(p) goes straight to the strategy when p lies in the arena
 * (arena.c): `p - base < span`, which is also false for NULL. Everything else takes the
 * slow path in interpose.c: the first call of a thread (its small_max and span are zero until
 * it registers, so no init check is needed here), size 0, large objects, bootstrap blocks,
 * pointers hoardlab never handed out, and every call while checks or observers are on (they
 * keep small_max and span zero).
 *
 * The strategy's two functions are copied out of its row at init, so the call is one load. */
#ifndef HL_FRONT_H
#define HL_FRONT_H

#include "hl.h"

static inline void *hl_front_malloc(size_t size)
{
    if (hl_likely(size - 1 < hl_me.small_max)) return hl_front_malloc_fn(size);
    return hl_malloc_slow(size);
}

static inline void hl_front_free(void *p)
{
    if (hl_likely((uintptr_t)p - hl_me.base < hl_me.span)) hl_front_free_fn(p);
    else hl_free_slow(p);
}

#endif
