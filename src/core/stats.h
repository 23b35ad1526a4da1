/* stats.h — counting a block in and out, inline where a strategy hands a block out or takes
 * it back, with the block size it already knows (no usable_size call). Included by hl.h.
 *
 * Every count is a plain store to the calling thread's own counters (relaxed atomics, so a
 * reader summing them is race-free, yet no locked instruction and no shared cache line).
 * U, the bytes in use, changes on every call: each thread keeps its change since it last
 * published, and publishes it (stats.c, out of line) when it passes stats_batch bytes either
 * way; the peak is taken at publication, so it is exact to within threads x stats_batch
 * bytes, and exact with stats_batch = 0. The unpublished change is kept negated and offset by
 * the batch, so one unsigned comparison catches both directions:
 *     pending = batch - change, in [0, 2 batch] while unpublished. */
#ifndef HL_STATS_H
#define HL_STATS_H

#ifdef HL_STATS
#define HL_COUNT(field, n) do {                                                               \
        _Atomic uint64_t *c_ = &hl_me.ctr.field;                                              \
        atomic_store_explicit(c_, atomic_load_explicit(c_, memory_order_relaxed) + (n),       \
                              memory_order_relaxed);                                          \
    } while (0)
#else
#define HL_COUNT(field, n) ((void)0)
#endif

extern size_t hl_stats_twice_batch;     /* 2 x stats_batch */
/* Out of line: count the block and publish the thread's change into the shared U; returns p. */
void *hl_stats_count_publish(void *p, size_t bytes, bool freed);

/* Count a block of `bytes` handed out (freed = false) or taken back by the calling thread, if
 * no publication is due: true, done. Else false and nothing done: the caller then calls
 * hl_stats_count_publish, directly or through the two below. Fast paths that must make no
 * call use it alone (lock.h's hl_release_count). */
static inline __attribute__((always_inline)) bool hl_stats_quick(size_t bytes, bool freed)
{
#ifdef HL_STATS
    uint64_t pending = atomic_load_explicit(&hl_me.ctr.in_use_pending, memory_order_relaxed);
    pending = freed ? pending + bytes : pending - bytes;
    if (hl_unlikely(pending > hl_stats_twice_batch)) return false;
    atomic_store_explicit(&hl_me.ctr.in_use_pending, pending, memory_order_relaxed);
    if (freed) HL_COUNT(frees, 1);
    else HL_COUNT(mallocs, 1);
#else
    (void)bytes, (void)freed;
#endif
    return true;
}

/* Block p of `bytes` handed out; returns p, so that a malloc can end in
 * `return hl_stats_malloc(p, size)` and the rare publication is a tail call. */
static inline void *hl_stats_malloc(void *p, size_t bytes)
{
    if (hl_likely(hl_stats_quick(bytes, false))) return p;
    return hl_stats_count_publish(p, bytes, false);
}

/* A block of `bytes` taken back. */
static inline void hl_stats_free(size_t bytes)
{
    if (hl_unlikely(!hl_stats_quick(bytes, true))) hl_stats_count_publish(NULL, bytes, true);
}

#endif
