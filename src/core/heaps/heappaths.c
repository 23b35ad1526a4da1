/* heappaths.c — the general paths of the heap strategies' malloc and free (heappaths.h has
 * the fast ones and says when each is taken), and the members of the rows they share. */
#include "heappaths.h"
#include "heap.h"

/* ---- the rows of the dispatch table the heap strategies share ------------------------------ */

void *hl_heaps_malloc(size_t size)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_heap_mine();
    hl_heap_enter(h);
    void *p = hl_heap_alloc(h, c);
    if (hl_unlikely(!p)) p = hl_heaps_refill_from_os(h, c);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_leave(h);
    return hl_likely(p != NULL) ? hl_stats_malloc(p, hl_class_size(c)) : NULL;
}

void *hl_heaps_refill_from_os(struct hl_heap *h, unsigned c)
{
    struct hl_sb *sb = hl_sb_new(c);
    if (!sb) return NULL;
    hl_heap_attach(h, sb);
    return hl_heap_alloc_from(h, sb);
}

/* ---- malloc and free to the owner: the general paths (heap.h has the fast ones) ----------- */

HL_COLD void *hl_heap_malloc_retry(struct hl_heap *h, unsigned c)
{
    h->collect_in = HL_COLLECT_EVERY;
    if (hl_remote_mode) {
        if (hl_remote_pending(h)) hl_remote_collect(h);
        if (hl_remote_mode >= HL_REMOTE_QUEUE) hl_remote_flush();   /* queue, batch */
    }
    void *p = hl_heap_alloc_sb(h, c);
    if (!p) p = hl_heap_refill(h, c);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, -1);
    hl_heap_unlock(h);
    /* No lock held: the purge thread may start here (ticker.h says why a free may not). */
    hl_ticker_poll();
    return hl_likely(p != NULL) ? hl_stats_malloc(p, hl_class_size(c)) : NULL;
}

HL_COLD void *hl_heap_malloc_general(unsigned c)
{
    struct hl_heap *h = hl_heap_mine();
    hl_heap_lock(h);
    return hl_heap_malloc_retry(h, c);
}

HL_COLD void hl_heap_free_retry(struct hl_heap *h, void *p)
{
    hl_heap_unlock(h);
    hl_heap_free_general(p);
}

HL_COLD void *hl_heap_malloc_finish(struct hl_heap *h, struct hl_sb *sb, void *p)
{
    size_t size = sb->size;
    hl_heap_regroup(h, sb);
    if (hl_remote_pending(h)) hl_remote_collect(h);     /* on its way to full: blocks back */
    hl_heap_unlock(h);
    return hl_stats_malloc(p, size);
}

HL_COLD void hl_heap_free_general(void *p)
{
    struct hl_sb *sb = hl_sb_of(p);
    p = hl_sb_block(sb, p);
    if (hl_remote_mode && atomic_load_explicit(&sb->owner, memory_order_relaxed) !=
                          hl_heap_current()) {
        hl_remote_free(sb, p);
        return;
    }
    struct hl_heap *h = hl_heap_lock_owner(sb);
    if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
    hl_heap_count_remote(h);
    size_t size = sb->size;
    hl_heap_free(h, sb, p);
    hl_heap_after_free(h, sb);
    hl_heap_unlock(h);
    hl_stats_free(size);
}

HL_COLD void hl_heap_free_finish(struct hl_heap *h, struct hl_sb *sb, size_t size)
{
    if (hl_heap_must_regroup(sb)) hl_heap_regroup(h, sb);
    else hl_heap_to_front(h, sb);
    /* The policies act only below the floor or on an empty superblock (heap.h). */
    if (hl_heap_policy_due(h, sb)) hl_heap_after_free(h, sb);
    if (hl_remote_pending(h)) hl_remote_collect(h);
    hl_heap_unlock(h);
    hl_stats_free(size);
}

/* ---- the heap rows' paths, built once for every row (a row adds only its policy) ---------- */

/* HL_MALLOC_PAIR defines hl_heap_row_malloc, hl_heap_row_malloc_entry,
 * hl_heap_row_malloc_uncounted, hl_heap_row_malloc_uncounted_entry */
HL_MALLOC_PAIR(, hl_heap_row_malloc, hl_heap_malloc_fast)
/* HL_FREE_PAIR defines hl_heap_row_free, hl_heap_row_free_entry, hl_heap_row_free_uncounted,
 * hl_heap_row_free_uncounted_entry */
HL_FREE_PAIR(, hl_heap_row_free, hl_heap_free_fast)

void *hl_heaps_memalign(size_t align, size_t size)
{
    return hl_sb_memalign(hl_front_malloc_fn, align, size);    /* the strategy's malloc */
}

size_t hl_heaps_usable_size(const void *p) { return hl_sb_usable(p); }

static void add_lock_counts(struct hl_heap *h, void *arg)
{
    struct hoardlab_stats *s = arg;
    s->lock_acquisitions += __atomic_load_n(&h->acquisitions, __ATOMIC_RELAXED);
    s->lock_contended += __atomic_load_n(&h->contended, __ATOMIC_RELAXED);
}

/* Where the heaps keep free memory (issue 36): a - u of each heap, and its empty superblocks,
 * summed over the thread / processor heaps and over the global heap's shards; and over every
 * heap, the superblocks holding a block and the bytes out of them (their u: an empty
 * superblock has none), whose ratio says how thinly the live blocks are spread. A shared
 * heap is read under its lock (taken uncounted, so reading does not change
 * lock_acquisitions); a heap only its thread touches (private, heap_select = thread) is read
 * as it is, a gauge. */
static void add_free(struct hl_heap *h, void *arg)
{
    struct hoardlab_stats *s = arg;
    if (h->shared) hl_lock_acquire(&h->lock);
    size_t u = hl_heap_u(h), free = hl_heap_a(h) - u, empty = (size_t)h->nempty * hl_sb_size;
    uint32_t live = h->nsb - h->nempty;
    if (h->shared) hl_lock_release(&h->lock);
    s->sb_live += live;
    s->sb_live_used_bytes += u;
    if (hl_heap_is_shard(h)) {
        s->global_free_bytes += free;
    } else {
        s->heaps_free_bytes += free;
        s->heaps_empty_bytes += empty;
    }
}

void hl_heaps_stats(struct hoardlab_stats *s)
{
    hl_heaps_foreach(add_lock_counts, s);
    hl_heaps_foreach(add_free, s);
    s->parked_bytes = hl_purge_retained() + hl_purge_ranges_kept();   /* what retain bounds */
    s->purged_bytes = hl_purge_purged();
}
