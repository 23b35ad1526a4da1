/* ownership — private heaps with ownership (Hoard Table 7; ptmalloc, MTmalloc, LKmalloc):
 * each thread allocates from its own heap, and a freed block goes back to its superblock in
 * the heap that OWNS it, under that heap's lock. Memory one heap frees stays in that heap, so
 * a round-robin producer-consumer (thread i allocates, thread i+1 frees) makes every heap
 * hold the live set once: O(P) blowup (§6.1).
 *
 * Its neighbours: `private` differs only in where free puts a block (the freeing thread's
 * heap); `hoard` adds only the emptiness threshold and the global heap. */
#include "heap.h"

static int heaps_init(void)
{
    hl_heaps_init(false, false);
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
    struct hl_heap *h = hl_heap_lock_owner(sb);          /* the heap that owns the block */
    unsigned c = sb->cls;
    if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
    hl_heap_count_remote(h);
    hl_heap_free(h, sb, p);
    if (hl_cfg.release_empty && hl_sb_empty(sb)) {
        hl_heap_detach(h, sb);
        hl_sb_release(sb);
    } else if (HL_INVARIANT_CHECKS) {
        hl_sb_check(sb);
    }
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_unlock(h);
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

const struct hl_strategy hl_strategy_ownership = {
    .name = "ownership",
    .summary = "private heaps with ownership: a freed block returns to its owner heap",
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
