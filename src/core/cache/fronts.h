/* fronts.h — the front caches a heap row can have (key `cache`: none, thread = the TLAB,
 * cpu = the per-CPU cache), chosen from one table (fronts.c). A heap row (`ownership`,
 * `hoard` and its rows) names no front and builds no path: its init calls hl_fronts_start
 * with its policy (heap.h), and its struct hl_strategy takes heappaths.h's
 * hl_heap_row_malloc and hl_heap_row_free and HL_FRONTS_HEAP_ROW's members, which serve
 * whichever front the key chose (or none). */
#ifndef HL_FRONTS_H
#define HL_FRONTS_H

#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* Starts a heap row with its policy (hooks, heaps, its plain or sharded paths) and puts the
 * front that `cache` names in front of it (hl_paths = the front's paths, built for the row's
 * counting and stats_batch); the row's own paths stay installed with cache = none. */
void hl_fronts_start(const struct hl_heap_policy *policy);

/* A heap row's members with a front (or none), each calling every front's (fronts.c's
 * table): a thread's exit gives the fronts' blocks back first, fork takes the fronts' outer
 * locks, the heaps', then the fronts' inner ones, and the statistics add the bytes every
 * front holds to tlab_bytes. */
void hl_fronts_thread_exit(struct hl_thread *t);
void hl_fronts_fork(int phase);
void hl_fronts_stats(struct hoardlab_stats *s);
/* hoardlab_collect (api.c), first: the calling thread's blocks in every front given back
 * (what they give back may empty superblocks). */
void hl_fronts_flush(void);
#define HL_FRONTS_HEAP_ROW                                                                    \
    .memalign = hl_heaps_memalign, .usable_size = hl_heaps_usable_size,                       \
    .thread_exit = hl_fronts_thread_exit, .fork = hl_fronts_fork, .stats = hl_fronts_stats

#pragma GCC visibility pop

#endif
