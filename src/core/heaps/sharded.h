/* sharded.h — free_lists = sharded: mimalloc's free-list sharding (Leijen, Zorn and de Moura,
 * APLAS 2019) on Hoard's superblocks, for the heap rows (ownership, hoard and its rows).
 * Each superblock keeps three lists of free blocks:
 *   free_head    the one malloc pops,
 *   local_free   where the owner's own frees go (superblock.h: hl_sb_push_local),
 *   thread_free  where other threads' frees go, one CAS each: the superblock's `remote` list of
 *                remote_free = list (remote.h), which sharded therefore requires.
 * Per heap and class, malloc allocates from one current superblock (heap.h's hl_heap_cur):
 * its fast path pops free_head only; when that is empty the slow path (sharded.c) swaps
 * local_free in, else takes thread_free with one atomic operation (hl_remote_take), and
 * carves a 4 KiB batch of never-used blocks when what it has is short (mimalloc's extend);
 * only a superblock with no block left makes it pick the next, by Hoard's rule (the
 * fullest with room, a recycled empty one, then the strategy's refill: global heap, OS). A
 * free does not move its superblock to the front of its group (the current one is used up
 * first). Owner's frees and malloc still take the heap's lock, as the heap rows' fast paths
 * do: what sharding changes is which list each touches, not who may touch the heap.
 *
 * Hoard's bookkeeping, and what sharding costs it. A block on local_free is out of `used` and
 * u at once, as with one list, so fullness groups, u_i, a_i and the f/K threshold see the
 * owner's frees exactly; only the allocation order differs (local_free is reached after
 * free_head runs dry). A block on thread_free is counted in `used` and u until it is taken
 * (as any pending block of remote_free = list): by hl_remote_take when its superblock is the
 * current one and runs dry, or through the heap's inbox (the first push announces the
 * superblock, as mimalloc's delayed free flags a full page) on the owner's slow paths, every
 * HL_COLLECT_EVERY mallocs, or by the freeing thread's help (remote.h). So the threshold sees
 * a remote free up to 64 of the owner's mallocs late, and a current superblock that keeps
 * serving from free_head holds its local_free blocks unused (free, and counted so) until
 * free_head runs dry.
 *
 * With tlab = on the TLAB's bin is the thread's own free list in front of every superblock
 * (it takes the owner's frees first, and malloc pops it without a lock): sharding then
 * decides what feeds the bin and where its overflow goes. A refill takes blocks from the
 * current superblock (free_head, local_free swapped in, thread_free taken, carved) before it
 * moves to another, and a bin's give-back lands on local_free. Collected thread_free lists
 * go back into their superblock (walked), not whole into a bin.
 */
#ifndef HL_SHARDED_H
#define HL_SHARDED_H

#include "heappaths.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* The slow halves (sharded.c). */
void *hl_sharded_malloc_general(unsigned c, hl_refill_fn refill);
void *hl_sharded_malloc_retry(struct hl_heap *h, unsigned c, hl_refill_fn refill);
void *hl_sharded_malloc_finish(struct hl_heap *h, struct hl_sb *sb, void *p);
void hl_sharded_free_finish(struct hl_heap *h, struct hl_sb *sb, size_t size,
                            hl_after_free_fn after);
/* A block of class c from h (locked): the current superblock's free_head, its local_free
 * swapped in, its thread_free taken, a carved one; else the next current superblock by
 * Hoard's rule, or refill's. NULL when the OS refuses. The slow path's and the TLAB's refill. */
void *hl_sharded_alloc(struct hl_heap *h, unsigned c, hl_refill_fn refill);

/* malloc: a block off the current superblock's free_head, under the heap's lock taken at once;
 * anything else (no current superblock, free_head empty, the collection countdown, the lock
 * busy) goes to the slow half. Takes `counted` last (stats.h's HL_MALLOC_PAIR). */
static inline __attribute__((always_inline)) void *hl_sharded_malloc(size_t size,
                                                                     hl_refill_fn refill,
                                                                     bool counted)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_me.heap;
    if (hl_unlikely(HL_INVARIANT_CHECKS || !h || !hl_heap_trylock(h, counted)))
        return hl_sharded_malloc_general(c, refill);
    struct hl_heap_class *k = &h->cls[c];
    struct hl_sb *sb = *hl_heap_cur(k);
    if (hl_unlikely(!sb)) return hl_sharded_malloc_retry(h, c, refill);
    void *p = sb->free_head;
    if (hl_unlikely(!p || --h->collect_in == 0)) return hl_sharded_malloc_retry(h, c, refill);
    sb->free_head = *(void **)p;
    k->acct->u += sb->size;
    if (hl_unlikely(++sb->used == 1)) h->nempty--;      /* as heap.h's hl_heap_take_block */
    if (hl_unlikely(sb->used >= sb->group_hi)) return hl_sharded_malloc_finish(h, sb, p);
    return hl_release_count_if(counted, &h->lock, p, sb->size, false);
}

/* free: another heap's block onto its superblock's thread_free (remote.h); the owner's onto
 * local_free under its heap's lock taken at once, else the general path (heappaths.c, whose
 * hl_heap_free pushes onto local_free too). */
static inline __attribute__((always_inline)) void hl_sharded_free(void *p,
                                                                  hl_after_free_fn after,
                                                                  bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    struct hl_heap *mine = hl_me.heap;
    if (hl_unlikely(h != mine) && mine) {                /* thread_free */
        hl_remote_free(sb, hl_sb_block(sb, p));
        return;
    }
    if (hl_unlikely(HL_INVARIANT_CHECKS || !mine ||
                    atomic_load_explicit(&sb->interior, memory_order_relaxed) ||
                    !hl_heap_trylock(h, counted))) {
        hl_heap_free_general(p, after);
        return;
    }
    if (hl_unlikely(atomic_load_explicit(&sb->owner, memory_order_relaxed) != h)) {
        hl_heap_free_retry(h, p, after);    /* it moved while we locked: the general path */
        return;
    }
    size_t size = sb->size;
    struct hl_account *ac = h->cls[sb->cls].acct;
    hl_sb_push_local(sb, p);
    ac->u -= size;
    if (hl_unlikely(sb->used == 0)) h->nempty++;
    /* as heappaths.h's free: the policy is due below the floor, or on an empty superblock
     * with release_empty */
    if (hl_unlikely(hl_heap_must_regroup(sb) || ac->u < ac->u_floor ||
                    (sb->used == 0 && hl_cfg.release_empty))) {
        hl_sharded_free_finish(h, sb, size, after);
        return;
    }
    hl_release_count_if(counted, &h->lock, NULL, size, true);
}

/* A heap row's sharded paths: HL_SHARDED_PATHS(name, refill, after) builds name_malloc and
 * name_free (counted and uncounted, stats.h) and name_paths[2] (uncounted, counted); the
 * row's init, after hl_heaps_init and with free_lists = sharded, installs them with
 * hl_paths = hl_sharded_start(name_paths), and puts the TLAB's in front with tlab = on (whose
 * plain paths are name_malloc and name_free). */
#define HL_SHARDED_PATHS(name, refill, after)                                                 \
    HL_MALLOC_PAIR(static, name##_malloc, hl_sharded_malloc, refill)                          \
    HL_FREE_PAIR(static, name##_free, hl_sharded_free, after)                                 \
    static const struct hl_paths name##_paths[2] = {                                          \
        HL_PATHS(name##_malloc_uncounted, name##_free_uncounted),                             \
        HL_PATHS(name##_malloc, name##_free),                                                 \
    };
const struct hl_paths *hl_sharded_start(const struct hl_paths paths[2]);

#pragma GCC visibility pop

#endif
