/* private — pure private heaps (Hoard Table 7; STL pthread_alloc, Cilk 4.1): each thread
 * allocates from its own heap, and a freed block goes onto the FREEING thread's heap, which
 * reuses it for its own next allocations. With heap_select=thread no lock is taken at all.
 * Memory a consumer frees never returns to the producer, so a producer-consumer program grows
 * without bound (§2.2), and pieces of one cache line end up on several heaps (passive false
 * sharing, §6.1).
 *
 * Its neighbour `ownership` differs only in where free puts a block (the owner's heap). */
#include "heap.h"

static int heaps_init(void)
{
    hl_heaps_init(false, true);
    return 0;
}

static void *heaps_malloc(size_t size)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_heap_mine();
    hl_heap_enter(h);
    void *p = hl_heap_alloc(h, c);
    if (hl_unlikely(!p)) {
        struct hl_sb *sb = hl_sb_new(c);
        if (sb) {
            hl_heap_attach(h, sb);
            p = hl_heap_alloc_from(h, sb);
        }
    }
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_leave(h);
    return p;
}

static void heaps_free(void *p)
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
}

static void *heaps_memalign(size_t align, size_t size)
{
    return hl_sb_memalign(heaps_malloc, align, size);
}

static size_t heaps_usable_size(const void *p) { return hl_sb_usable(p); }

static void heaps_thread_exit(struct hl_thread *t) { hl_heaps_thread_exit(t); }
static void heaps_fork_prepare(void) { hl_heaps_fork(0); }
static void heaps_fork_parent(void) { hl_heaps_fork(1); }
static void heaps_fork_child(void) { hl_heaps_fork(2); }

const struct hl_strategy hl_strategy_private = {
    .name = "private",
    .summary = "pure private heaps: a freed block goes onto the freeing thread's heap",
    .defaults = "heap_select=thread",
    .init = heaps_init,
    .malloc = heaps_malloc,
    .free = heaps_free,
    .memalign = heaps_memalign,
    .usable_size = heaps_usable_size,
    .thread_exit = heaps_thread_exit,
    .fork_prepare = heaps_fork_prepare,
    .fork_parent = heaps_fork_parent,
    .fork_child = heaps_fork_child,
};
