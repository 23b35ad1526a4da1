/* private — pure private heaps (Hoard Table 7; STL pthread_alloc, Cilk 4.1): each thread
 * allocates from its own heap, and a freed block goes onto the FREEING thread's heap, which
 * reuses it for its own next allocations. With heap_select=thread no lock is taken at all.
 * Memory a consumer frees never returns to the producer, so a producer-consumer program grows
 * without bound (§2.2), and pieces of one cache line end up on several heaps (passive false
 * sharing, §6.1).
 *
 * Its neighbour `ownership` differs only in where free puts a block (the owner's heap).
 *
 * The fast paths serve a thread's own unshared heap (heap_select=thread): a pop from and a
 * push onto the class's list of freed blocks. Everything else — a shared heap (hash, cpu),
 * an empty list, a memalign'd pointer, the checks build — takes the general path. */
#include "heaps.h"

static int private_init(void)
{
    hl_heaps_init(false, true);
    return 0;
}

static inline __attribute__((always_inline)) void *private_path_malloc(size_t size,
                                                                      bool counted)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_me.heap;
    void *p;
    if (hl_unlikely(!h || h->shared || !(p = h->cls[c].loose))) return hl_heaps_malloc(size);
    h->cls[c].loose = *(void **)p;
    return hl_stats_malloc_if(counted, p, hl_class_size(c));
}

/* HL_MALLOC_PAIR defines private_malloc, private_malloc_entry, private_malloc_uncounted,
 * private_malloc_uncounted_entry */
HL_MALLOC_PAIR(static, private_malloc, private_path_malloc)

static HL_COLD void private_free_general(void *p)
{
    struct hl_sb *sb = hl_sb_of(p);
    p = hl_sb_block(sb, p);
    struct hl_heap *h = hl_heap_mine();                  /* the heap of the freeing thread */
    unsigned c = sb->cls;
    if (HL_INVARIANT_CHECKS) hl_sb_check_block(sb, p, "free");
    hl_heap_count_remote(atomic_load_explicit(&sb->owner, memory_order_relaxed));
    hl_heap_enter(h);
    hl_heap_push_loose(h, c, p);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_leave(h);
    hl_stats_free(sb->size);
}

static inline __attribute__((always_inline)) void private_path_free(void *p, bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_heap *h = hl_me.heap;
    if (hl_unlikely(!h || h->shared || HL_INVARIANT_CHECKS ||
                    atomic_load_explicit(&sb->interior, memory_order_relaxed))) {
        private_free_general(p);
        return;
    }
    hl_heap_push_loose(h, sb->cls, p);
    if (counted && atomic_load_explicit(&sb->owner, memory_order_relaxed) != h)
        HL_COUNT(remote_frees, 1);
    hl_stats_free_if(counted, sb->size);
}

/* HL_FREE_PAIR defines private_free, private_free_entry, private_free_uncounted,
 * private_free_uncounted_entry */
HL_FREE_PAIR(static, private_free, private_path_free)

const struct hl_strategy hl_strategy_private = {
    .name = "private",
    .summary = "pure private heaps: a freed block goes onto the freeing thread's heap",
    .defaults = "heap_select=thread",
    .init = private_init,
    HL_ROW_PATHS(private_malloc, private_free),
    /* HL_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_heaps_thread_exit, hl_heaps_fork,
     * hl_heaps_stats */
    HL_HEAP_ROW,
};
