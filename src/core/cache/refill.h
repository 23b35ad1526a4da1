/* refill.h — the refill every front cache's malloc slow path runs when its cache of a class
 * is empty (the TLAB's bin: tlab.c; a CPU's stack: cpucache.c), written once so that the
 * fronts cannot diverge: the calling thread's remote-free buffers posted first (the sender's
 * slow path: remote.h promises it of every malloc slow path, under queue and batch), then a
 * batch of blocks taken from the thread's heap under one acquisition of its lock, the heap's
 * pending remote frees collected first. And the one decision about U that both make: whether
 * their fast paths leave U to the cache's room (counting = on, stats_batch > 0).
 *
 * Inline in each front, built with its own steps as constants (they fold away where a front
 * has none), as cache.h's take and give back are: the slow halves' instructions count in
 * tools/hoardlab cost's remote column. */
#ifndef HL_REFILL_H
#define HL_REFILL_H

#include "cache.h"
#include "heap.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* The fronts' fast paths leave U to their cache's room, which their slow halves publish
 * (tlab.h's and cpucache.h's Accounting): counting = on with stats_batch > 0. Then fronts.c
 * installs the front's unseen as stats.c's hl_stats_unseen_fn. */
static inline bool hl_cache_u_left(void)
{
#ifdef HL_STATS
    return hl_cfg.counting && hl_cfg.stats_batch > 0;
#else
    return false;
#endif
}

/* Refills the front's cache of class c (limit: its limit in blocks now) in front of *chain:
 *   1. the calling thread's buffered remote frees posted (queue, batch);
 *   2. the heap, heap() (the thread's, selection re-read);
 *   3. keep, if the front takes runs whole (NULL: it takes none): under batch with frees
 *      pending, the runs hl_remote_drain returns without the lock, given to keep, which keeps
 *      what it holds and returns the rest; called with NULL runs otherwise, so the front may
 *      move what it keeps aside into *chain (the TLAB's spare chain);
 *   4. if nothing is left to settle and *chain holds blocks now, done, no lock taken; else
 *      under h's lock: the rest settled, h's pending remote frees given to collect (which
 *      may fill *chain), and if *chain is still empty hl_cache_take's batch
 *      (hl_cache_refill_n(limit) blocks); h checked, unlocked, the purge thread polled.
 * Returns how many blocks hl_cache_take put on *chain. */
static inline __attribute__((always_inline)) uint32_t hl_cache_refill(
    unsigned c, void **chain, uint32_t limit, struct hl_heap *(*heap)(void),
    void *(*keep)(struct hl_heap *h, void *runs, unsigned c),
    void (*collect)(struct hl_heap *h, unsigned c))
{
    if (hl_remote_mode >= HL_REMOTE_QUEUE) hl_remote_flush();   /* the sender's slow path */
    struct hl_heap *h = heap();
    uint32_t want = hl_cache_refill_n(limit), n = 0;
    void *rest = NULL;
    if (keep)
        rest = keep(h, hl_remote_mode == HL_REMOTE_BATCH && hl_remote_pending(h)
                       ? hl_remote_drain(h) : NULL, c);
    if (!rest && *chain) return 0;
    hl_heap_lock(h);
    if (rest) hl_remote_settle(h, rest);
    if (hl_remote_pending(h)) collect(h, c);        /* the owner's slow path collects */
    if (!*chain)                         /* (else what collect took came into it) */
        n = hl_unlikely(hl_sb_sharded) ? hl_cache_take(h, c, chain, want, true)
                                       : hl_cache_take(h, c, chain, want, false);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_unlock(h);
    hl_ticker_poll();                     /* no lock held: the purge thread may start */
    return n;
}

#pragma GCC visibility pop

#endif
