/* sharded.h — free_lists = sharded: mimalloc's free-list sharding (Leijen, Zorn and de Moura,
 * APLAS 2019) on Hoard's superblocks, for the heap rows (ownership, hoard and its rows).
 * Each superblock keeps three lists of free blocks:
 *   free_head    the one malloc pops,
 *   local_free   where the owner's own frees go (superblock.h: hl_sb_push_local),
 *   thread_free  where other threads' frees go, one CAS each: the superblock's `remote` list of
 *                remote_free = list (remote.h), which sharded therefore requires.
 * Per heap and class, malloc allocates from one current superblock (heap.h's hl_heap_sharded_sb):
 * its fast path pops free_head only; when that is empty the slow path (sharded.c) swaps
 * local_free in, else takes thread_free with one atomic operation (hl_remote_take), and
 * carves a 4 KiB batch of never-used blocks when what it has is short (mimalloc's extend);
 * only a superblock with no block left makes it pick the next, by Hoard's rule (the
 * fullest with room, a recycled empty one, then the strategy's refill: global heap, OS). A
 * free does not move its superblock to the front of its group (the current one is used up
 * first). Owner's frees and malloc still take the heap's lock, as the heap rows' fast paths
 * do: what sharding changes is which list each touches, not who may touch the heap.
 *
 * A block on local_free is out of `used` and u at once, as with one list; one on thread_free
 * stays in them until taken, as any pending block of remote_free = list. docs/free-lists.md
 * gives what sharding costs Hoard's bookkeeping and how it composes with tlab = on.
 */
#ifndef HL_SHARDED_H
#define HL_SHARDED_H

#include "heappaths.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* A block of class c from h (locked): the current superblock's free_head, its local_free
 * swapped in, its thread_free taken, a carved one; else the next current superblock by
 * Hoard's rule, or refill's. NULL when the OS refuses. The slow path's and the TLAB's refill. */
void *hl_sharded_alloc(struct hl_heap *h, unsigned c, hl_refill_fn refill);

/* The sharded paths of every heap row (sharded.c), uncounted and counted, which fronts.c's
 * hl_fronts_start installs with free_lists = sharded; hl_sharded_start: the one of them that
 * `counting` asks for. */
extern const struct hl_paths hl_sharded_paths[2];
const struct hl_paths *hl_sharded_start(void);

#pragma GCC visibility pop

#endif
