/* cpucache.h — a cache of free blocks per CPU in front of the heaps (cache = cpu: TCMalloc's
 * front end on Linux), beside the TLAB (cache = thread, tlab.h): per CPU and size class a
 * stack of free blocks, popped by malloc and pushed by free each in one restartable sequence
 * (rseq.h), so the common call takes no lock and no atomic read-modify-write, and the memory
 * the caches hold grows with the CPUs, not with the threads (docs/cpu-cache.md).
 *
 * A stack's limit, in blocks, is cpu_cache_bytes / class size (at most 65535), fixed at init;
 * 0: the class bypasses the cache. An empty stack refills from the calling thread's heap and
 * a full one gives blocks back to their owners, each a batch under one lock, as the TLAB's
 * bins do (tlab_refill, tlab_flush: half the limit, at most 64); the statistics cpu_refills,
 * cpu_flushes count the batches and rseq_restarts the sections the kernel restarted.
 *
 * Ownership. Any block may enter a CPU's cache on free: the threads a CPU runs use different
 * heaps. A block in a cache stays counted in use in its superblock and owner heap (u), as in
 * a TLAB; giving blocks back re-reads each one's owner under its lock. So u >= U by at most
 * what the caches hold, CPUs x classes x cpu_cache_bytes: Hoard's bound keeps its form with
 * a constant per CPU (a TLAB's grows with the threads).
 *
 * Accounting, as the TLAB's (tlab.h): the counted fast paths count only the call, and U is
 * what the stacks' room moved by since a slow path last saw it (an entry's `seen`, updated
 * by exchange, so two threads seeing one entry never count a move twice); slow paths count
 * the blocks they hand out and take back themselves and move `seen` with the room of their
 * refills and flushes. With stats_batch = 0 the fast paths count U themselves.
 *
 * Threads and fork. Nothing is per thread: a thread's exit leaves nothing to flush, and the
 * child of a fork keeps every CPU's cache (a section another thread was in had not
 * committed; the blocks that thread held in a slow path's batch are lost to the child, at
 * most 64 per thread). Where rseq is missing, init stops with a message (cpucache.c). */
#ifndef HL_CPUCACHE_H
#define HL_CPUCACHE_H

#include "cache.h"
#include "rseq.h"

#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>
/* ThreadSanitizer sees no synchronisation in the assembly: a pushed block's writes by the
 * freeing thread happen before the popping thread's, through the entry's commit; said on
 * the block's address (release before the push, acquire after the pop). */
#define HL_CPU_RELEASE(p) __tsan_release(p)
#define HL_CPU_ACQUIRE(p) __tsan_acquire(p)
#else
#define HL_CPU_RELEASE(p) ((void)0)
#define HL_CPU_ACQUIRE(p) ((void)0)
#endif

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* CPU 0's slab (rseq.h), and for a request of (n + 15) / 16 granules its class's entry in
 * it (an address: the fast path adds no base). */
extern char *hl_cpu_slabs;
extern char *const *hl_cpu_entry16;

/* The slow halves, out of line, with the row that the front's start kept (cache.h). */
void *hl_cpu_malloc_slow(size_t size);
void hl_cpu_free_slow(void *p);

/* malloc: the running CPU's top block of the class, else the slow half (refill from the
 * thread's heap, or the row's own malloc for a class that bypasses the cache). `exact` and
 * `counted` as the TLAB's (tlab.h). */
static inline __attribute__((always_inline)) void *hl_cpu_malloc(size_t size, bool exact,
                                                                 bool counted)
{
    exact = exact && counted;
    size_t g = ((size - 1) >> 4) + 1;
    size_t at;
    void *p = hl_rseq_pop(hl_cpu_entry16[g], 0, &at);
    if (hl_unlikely(!p)) return hl_cpu_malloc_slow(size);
    HL_CPU_ACQUIRE(p);
    if (exact) return hl_stats_malloc(p, hl_class_size(hl_classes->of16[g]));
    HL_COUNT_IF(counted, mallocs, 1);
    return p;
}

/* free: onto the running CPU's stack of the block's class (superblock.h's tlab_slot: its
 * entry in CPU 0's slab, or the bypass entry, no room, for an interior superblock), else
 * the slow half. */
static inline __attribute__((always_inline)) void hl_cpu_free(void *p, bool exact, bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    size_t at;
    HL_CPU_RELEASE(p);
    if (hl_likely(hl_rseq_push((char *)HL_WORD_LOAD(sb->tlab_slot), 0, p, &at))) {
        if (exact && counted) hl_stats_free(sb->size);
        else HL_COUNT_IF(counted, frees, 1);
        return;
    }
    hl_cpu_free_slow(p);
}

size_t hl_cpu_cache_bytes(void);        /* free bytes in every CPU's cache */

/* The per-CPU cache as a front (cache.h's struct hl_front, fronts.c's table, cache = cpu):
 * its start builds nothing (its paths were built once in cpucache.c for every row) but
 * returns the one that counting and stats_batch ask for, and keeps the row. */
extern const struct hl_front hl_cpu_cache_front;

#pragma GCC visibility pop

#endif
