/* fronts.h — the front caches a heap row can have (key `cache`: none, thread = the TLAB,
 * cpu = the per-CPU cache), chosen from one table (fronts.c). A heap row (`ownership`,
 * `hoard` and its rows) names no front: its init calls hl_fronts_start with its own hooks
 * and paths, and its struct hl_strategy takes HL_FRONTS_HEAP_ROW's members, which serve
 * whichever front the key chose (or none). */
#ifndef HL_FRONTS_H
#define HL_FRONTS_H

#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* Puts the front that `cache` names in front of the row (hl_paths = its paths, built for
 * the row's counting and stats_batch); the row's own paths stay installed with cache =
 * none. own: the row's counted paths (its heap's, or its sharded ones); refill and after:
 * its hooks (heap.h). */
void hl_fronts_start(hl_refill_fn refill, hl_after_free_fn after, const struct hl_paths *own);

/* A heap row's members with a front (or none): a thread's exit gives its TLAB back first,
 * fork takes the heaps' locks and then the TLABs' registry's, and the statistics add the
 * bytes every front holds to tlab_bytes. */
void hl_fronts_thread_exit(struct hl_thread *t);
void hl_fronts_fork(int phase);
void hl_fronts_stats(struct hoardlab_stats *s);
#define HL_FRONTS_HEAP_ROW                                                                    \
    .memalign = hl_heaps_memalign, .usable_size = hl_heaps_usable_size,                       \
    .thread_exit = hl_fronts_thread_exit, .fork = hl_fronts_fork, .stats = hl_fronts_stats

#pragma GCC visibility pop

#endif
