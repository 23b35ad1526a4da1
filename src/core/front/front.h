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

#include "base.h"

/* The active paths' entries (hl_paths): the slow paths until the first thread's first call
 * after init opens them (interpose.c's ready); written whole, so read as a plain word
 * (HL_WORD_LOAD). */
#pragma GCC visibility push(hidden)     /* internal, as base.h's: one jump, not a GOT load */
extern void *(*hl_entry_malloc_fn)(size_t size);
extern void (*hl_entry_free_fn)(void *p);

/* ---- registry.c: the rows, the top of the core ---------------------------------------------- */

/* The rows, NULL-terminated, and a row by name (below the registry, the configuration knows
 * the strategies by name only: hl_strategy_names, config.h). */
extern const struct hl_strategy *const hl_strategies[];
const struct hl_strategy *hl_strategy_find(const char *name);
/* config.h's hl_config_load_with, with the rows' defaults. */
void hl_config_load(void);

/* ---- init.c: start-up and exit; fork.c: the one fork path -------------------------------- */

/* 0 not started, 1 in progress, 2 done. Everything below init.c may assume 2 unless noted. */
extern _Atomic int hl_init_state;
void hl_init(void);                     /* idempotent; other threads wait for the first */
void hl_init_maybe(bool force);         /* from malloc: waits for `environ` unless force */
void hl_at_exit(void);                  /* trace and HOARD_STATS output */
void hl_fork_init(void);                /* init: atfork(fork.c's prepare, parent, child) */

/* ---- interpose.c: the malloc family, checked once for every strategy -------------------------
 * libhoardlab.so exports these under the libc names (export.c); tests call them directly. */
void  *hl_malloc(size_t size);
void   hl_free(void *p);
void  *hl_malloc_slow(size_t size);     /* front.h's way out: init, size 0, large, observers */
void   hl_free_slow(void *p);
void  *hl_calloc(size_t n, size_t size);
void  *hl_realloc(void *p, size_t size);
void  *hl_reallocarray(void *p, size_t n, size_t size);
int    hl_posix_memalign(void **out, size_t align, size_t size);
void  *hl_aligned_alloc(size_t align, size_t size);
void  *hl_memalign(size_t align, size_t size);
void  *hl_valloc(size_t size);
void  *hl_pvalloc(size_t size);
size_t hl_malloc_usable_size(const void *p);
#pragma GCC visibility pop

static inline void *hl_front_malloc(size_t size) { return HL_WORD_LOAD(hl_entry_malloc_fn)(size); }
static inline void hl_front_free(void *p) { HL_WORD_LOAD(hl_entry_free_fn)(p); }

#endif
