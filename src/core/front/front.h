/* front.h — the fast path of malloc and free, the whole of the core's own work on the common
 * call: one comparison and one indirect jump each. Inlined into interpose.c (hl_malloc,
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
 * The comparison is made in the strategy's entry (entry.h's hl_entry_takes_malloc and _free,
 * inlined by stats.h's HL_MALLOC_PAIR before the fast path), so that one function loads the
 * thread's TLS address for both; here is only the jump to it, one load from the pointer
 * that the first call after init sets (interpose.c's open_entries). */
#ifndef HL_FRONT_H
#define HL_FRONT_H

#include "hl.h"

/* The active paths' entries (hl_paths): the slow paths until the first thread's first call
 * after init opens them (interpose.c's ready); written whole, so read as a plain word
 * (HL_WORD_LOAD). */
#pragma GCC visibility push(hidden)     /* internal, as hl.h's: one jump, not a GOT load */
extern void *(*hl_entry_malloc_fn)(size_t size);
extern void (*hl_entry_free_fn)(void *p);
#pragma GCC visibility pop

static inline void *hl_front_malloc(size_t size) { return HL_WORD_LOAD(hl_entry_malloc_fn)(size); }
static inline void hl_front_free(void *p) { HL_WORD_LOAD(hl_entry_free_fn)(p); }

#endif
