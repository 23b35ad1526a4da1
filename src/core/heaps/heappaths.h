/* heappaths.h — malloc and free of the heap strategies (private, ownership, hoard), on
 * heap.h's hl_heap: the paths a row's malloc and free take, and the members the rows share.
 * Ownership and hoard give a freed block back to its owner heap. The fast paths below serve
 * the common call in straight-line code: the thread has a heap, its lock is free at once, a
 * superblock of the class has room (malloc) or the block's owner is locked at once (free),
 * and no superblock changes group or heap. Any other case goes to the general path
 * (heappaths.c), which does the same steps with blocking locks. What the strategies differ in
 * is a hook each (heap.h: hl_refill_fn, hl_after_free_fn). A free by a thread whose heap does
 * not own the block goes to remote.h when remote_free is list or queue.
 *
 * The split from heap.{c,h} keeps the files one way: heap selection (heapselect.c) and
 * remote frees (remote.h) use the heap's structure, and these paths use all three. */
#ifndef HL_HEAPPATHS_H
#define HL_HEAPPATHS_H

#include "heapselect.h"
#include "remote.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* The general paths, which call the row's hooks (heap.h: hl_heap_refill, hl_heap_after_free). */
void *hl_heap_malloc_general(unsigned c);
/* The general path for h, locked by a fast path that cannot go on. */
void *hl_heap_malloc_retry(struct hl_heap *h, unsigned c);
void hl_heap_free_retry(struct hl_heap *h, void *p);
void *hl_heap_malloc_finish(struct hl_heap *h, struct hl_sb *sb, void *p);
void hl_heap_free_general(void *p);
void hl_heap_free_finish(struct hl_heap *h, struct hl_sb *sb, size_t size);

/* Lock h if it is free at once, counting the acquisition when counted (stats.h). */
static inline __attribute__((always_inline)) bool hl_heap_trylock(struct hl_heap *h, bool counted)
{
    if (!hl_trylock(&h->lock)) return false;
    if (counted) HL_COUNT_AT(h->acquisitions, 1);
    return true;
}

/* The fast paths take `counted` last (stats.h: built twice by HL_MALLOC_PAIR, HL_FREE_PAIR). */
static inline __attribute__((always_inline)) void *hl_heap_malloc_fast(size_t size, bool counted)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_me.heap;
    if (hl_unlikely(HL_INVARIANT_CHECKS || !h || !hl_heap_trylock(h, counted)))
        return hl_heap_malloc_general(c);
    struct hl_heap_class *k = &h->cls[c];
    if (hl_unlikely(!k->groups || --h->collect_in == 0)) return hl_heap_malloc_retry(h, c);
    struct hl_sb *sb = k->list[63 - __builtin_clzll(k->groups)];   /* the fullest group */
    void *p = hl_heap_take_block(h, sb);
    if (hl_unlikely(sb->used >= sb->group_hi)) return hl_heap_malloc_finish(h, sb, p);
    return hl_release_count_if(counted, &h->lock, p, sb->size, false);
}

static inline __attribute__((always_inline)) void hl_heap_free_fast(void *p, bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    struct hl_heap *mine = hl_me.heap;
    if (hl_unlikely(h != mine) && hl_remote_mode && mine) {    /* remote_free = list, queue */
        hl_remote_free(sb, hl_sb_block(sb, p));
        return;
    }
    if (hl_unlikely(HL_INVARIANT_CHECKS || !mine ||
                    atomic_load_explicit(&sb->interior, memory_order_relaxed) ||
                    !hl_heap_trylock(h, counted))) {
        hl_heap_free_general(p);
        return;
    }
    if (hl_unlikely(atomic_load_explicit(&sb->owner, memory_order_relaxed) != h)) {
        hl_heap_free_retry(h, p);    /* it moved while we locked: the general path */
        return;
    }
    if (counted && h != mine) HL_COUNT(remote_frees, 1);
    size_t size = sb->size;
    struct hl_heap_class *k = &h->cls[sb->cls];
    hl_heap_put_block(h, sb, p);
    if (hl_unlikely(hl_heap_must_regroup(sb) || k->list[sb->list] != sb ||
                    k->acct->u < k->acct->u_floor ||
                    (sb->used == 0 && hl_cfg.release_empty))) {
        hl_heap_free_finish(h, sb, size);
        return;
    }
    hl_release_count_if(counted, &h->lock, NULL, size, true);
}

/* ---- the rows of the dispatch table the heap strategies share ---------------------------- */

/* Allocation without a global heap (private, ownership): the fullest superblock of the class
 * in the thread's heap (loose blocks first), else a fresh superblock from the OS. */
void  *hl_heaps_malloc(size_t size);
void  *hl_heaps_refill_from_os(struct hl_heap *h, unsigned c);   /* an hl_refill_fn */
void  *hl_heaps_memalign(size_t align, size_t size);   /* inside a block of the row's malloc */
size_t hl_heaps_usable_size(const void *p);
/* The heap rows' malloc and free (ownership, hoard and its rows), built once (stats.h's four
 * builds each); a row names them in its struct hl_strategy with HL_ROW_PATHS. */
HL_DECLARE_PAIR(hl_heap_row_malloc, hl_heap_row_free)
/* The members every heap strategy's row shares; a row adds name, summary, init, malloc and
 * free (and defaults). */
#define HL_HEAP_ROW                                                                           \
    .memalign = hl_heaps_memalign, .usable_size = hl_heaps_usable_size,                       \
    .thread_exit = hl_heaps_thread_exit, .fork = hl_heaps_fork, .stats = hl_heaps_stats
void hl_heaps_stats(struct hoardlab_stats *s);   /* the heaps' lock counts, for the rows */

#pragma GCC visibility pop

#endif
