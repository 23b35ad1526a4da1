/* entry.h — the test of a call (front.h's comparison), made in the strategy's entry
 * (stats.h's HL_MALLOC_PAIR and HL_FREE_PAIR) so that the fast path behind it shares its load
 * of the thread's TLS address: the calling thread's fast path serves this call. Its own file
 * so that `hoardlab cost` (cost.py) counts these lines as the front's. Included by base.h. */
#ifndef HL_ENTRY_H
#define HL_ENTRY_H

static inline bool hl_entry_takes_malloc(size_t size) { return size - 1 < hl_me.small_max; }

static inline bool hl_entry_takes_free(const void *p)
{
    return (uintptr_t)p - hl_me.base < hl_me.span;
}

#endif
