/* cache.h — the face every front cache has toward the heaps behind it. A front cache keeps
 * free blocks in front of a heap row (`ownership`, `hoard` and its rows) so that the common
 * malloc and free take no lock: the TLAB (cache = thread: per thread, tlab.h) and the per-CPU
 * cache (cache = cpu: per CPU on restartable sequences, cpucache.h). Each is written once
 * against this face and knows no row:
 *
 *   take       up to n blocks of a class from a heap, as one chain (hl_cache_take)
 *   give back  a chain of blocks to their superblocks' owners (hl_cache_give_back)
 *   batch      how many blocks a refill or a flush moves (hl_cache_refill_n, _flush_n)
 *   slot       a class's place in a cache: superblock.h's tlab_slot (hl_cache_slot),
 *              HL_CACHE_BYPASS
 *   refill     the refill of an empty cache, one routine for every front (refill.h)
 *   the row    the row's own malloc and free (hl_cache_row; its hooks are heap.h's), for a heap
 *              without room, a class that bypasses the cache, a thread without one
 *
 * Which front goes over the row is one table, fronts.c's, of struct hl_front (below): a
 * row's init calls hl_fronts_start once, whatever the key says, and a new front is a line
 * there (and its own file); a new row lists no front. Each front builds its fast paths
 * once, for every row, in its own file (tlab.c, cpucache.c), and its start keeps the row
 * (struct hl_cache_row) for its slow halves: the fast paths never call the row. */
#ifndef HL_CACHE_H
#define HL_CACHE_H

#include "heaps.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* The row behind a front, which the front's start keeps (fronts.c passes it); its hooks are
 * heap.h's hl_heap_refill and hl_heap_after_free, which fronts.c installed. */
struct hl_cache_row {
    void *(*malloc)(size_t size);        /* the row's own paths, counted (stats.h): a class */
    void (*free)(void *p);               /* that bypasses, a thread without a cache, ... */
};

/* A front: every member fronts.c needs of it, one struct in the front's own file (tlab.c's
 * hl_tlab_front, cpucache.c's hl_cpu_cache_front) and one line of fronts.c's table. fronts.c
 * calls every front's members whichever the key chose (each does nothing where it never
 * started, or where no thread has its state); a member a front does not need is NULL. */
struct hl_front {
    int cache;                           /* the value of `cache` it serves (hl_cfg.cache) */
    /* Keeps the row and returns the front's paths, the build that counting and stats_batch
     * ask for (each front builds its fast paths once, in its own file). */
    const struct hl_paths *(*start)(const struct hl_cache_row *row);
    void *(*refill)(size_t size);        /* its malloc slow half: refill.h's hl_cache_refill */
    void (*thread_exit)(void);           /* the calling thread's blocks back, before its heap */
    void (*fork_outer)(int phase);       /* HL_FORK_*: first and last of all */
    void (*fork)(int phase);             /* HL_FORK_*: inside the heaps' locks */
    void (*flush)(void);                 /* hoardlab_collect: the calling thread's blocks back */
    size_t (*bytes)(void);               /* free bytes it holds (tlab_bytes, retain_counts) */
    int64_t (*unseen)(bool mine);        /* U not yet published: hl_stats_unseen_fn, when */
                                         /* its fast paths leave U to it (refill.h) */
    void (*stats)(struct hoardlab_stats *s);   /* statistics of its own, if any */
};

/* Blocks moved per refill or flush (one lock acquisition each): tlab_refill = half of a
 * limit or an eighth, tlab_flush = half or the whole; at least 1, at most 64. */
static inline uint32_t hl_cache_clamp(uint32_t n) { return n < 1 ? 1 : n > 64 ? 64 : n; }
static inline uint32_t hl_cache_refill_n(uint32_t limit)
{
    return hl_cache_clamp(hl_cfg.tlab_refill == HL_TLAB_BATCH ? limit / 8 : limit / 2);
}
static inline uint32_t hl_cache_flush_n(uint32_t limit)
{
    return hl_cache_clamp(hl_cfg.tlab_flush == HL_TLAB_BATCH ? limit : limit / 2);
}

/* A chain of free blocks (linked through their first words, NULL-terminated) back to their
 * superblocks, for the slow halves of every front: those h owns under one acquisition of
 * its lock, h's pending remote frees collected first; any whose superblock moved meanwhile
 * (to the global heap, or another heap through it) to its current owner, re-read under that
 * owner's lock, one acquisition for each run of blocks of one owner; after each free the
 * row's policy (hl_heap_after_free) when due, as heap.c's free paths do. The blocks were
 * uncounted from U when the program freed them.
 * Inline in each front: as one exported function it made the remote pair dearer (+15
 * instructions, tools/hoardlab cost). */
static inline __attribute__((always_inline)) void hl_cache_give_back(struct hl_heap *h,
                                                                     void *chain)
{
    void *away = NULL;
    hl_heap_lock(h);
    if (hl_remote_pending(h)) hl_remote_collect(h);
    while (chain) {
        void *p = chain;
        chain = *(void **)p;
        struct hl_sb *sb = hl_sb_of(p);
        if (atomic_load_explicit(&sb->owner, memory_order_relaxed) != h) {
            *(void **)p = away;
            away = p;
            continue;
        }
        if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
        hl_heap_free(h, sb, p);
        if (hl_heap_policy_due(h, sb)) hl_heap_after_free(h, sb);
    }
    hl_heap_unlock(h);
    /* The others, each under its owner's lock, kept while the next block's owner is the same
     * (a per-CPU cache's flush of a producer's blocks is all one heap's: one acquisition, not
     * one a block, issue 51). Read under o's lock, an owner equal to o cannot change (it
     * changes under the old owner's lock); one that differs is re-read by hl_heap_lock_owner
     * after o is released, so no lock is taken inside another. */
    struct hl_heap *o = NULL;
    while (away) {
        void *p = away;
        away = *(void **)p;
        struct hl_sb *sb = hl_sb_of(p);
        if (!o || atomic_load_explicit(&sb->owner, memory_order_relaxed) != o) {
            if (o) hl_heap_unlock(o);
            o = hl_heap_lock_owner(sb);
        }
        if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
        hl_heap_free(o, sb, p);
        if (hl_heap_policy_due(o, sb)) hl_heap_after_free(o, sb);
    }
    if (o) hl_heap_unlock(o);
}

/* Up to want blocks of class c from h (locked) in front of *chain, for every front's
 * refill; how many. The fullest superblock's, a chain at a time (Hoard:
 * hl_heap_alloc_chain), else one of an empty superblock or the row's refill, whose
 * superblock the next chain comes from; with free_lists = sharded one at a time from the
 * current superblock (sharded.h). Inline in each front, built once for each value of
 * sharded. */
static inline __attribute__((always_inline)) uint32_t hl_cache_take(struct hl_heap *h,
                                                                    unsigned c,
                                                                    void **chain,
                                                                    uint32_t want, bool sharded)
{
    uint32_t n = 0;
    while (n < want) {
        void *p, *last;
        uint32_t k = sharded ? 0 : hl_heap_alloc_chain(h, c, want - n, &p, &last);
        if (!k) {
            p = sharded ? hl_sharded_alloc(h, c, hl_heap_refill) : hl_heap_alloc_empty(h, c);
            if (!p && (sharded || !(p = hl_heap_refill(h, c)))) break;
            last = p;
            k = 1;
        }
        *(void **)last = *chain;
        *chain = p;
        n += k;
    }
    return n;
}

/* The bins of a thread without a TLAB (tlab.c): every thread's until it has its own. */
extern struct hl_tlab_bin *const hl_tlab_none;

#pragma GCC visibility pop

#include "fronts.h"                     /* cache/'s face: this header and the fronts' table */

#endif
