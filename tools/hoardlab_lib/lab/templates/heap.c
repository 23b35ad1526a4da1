/* @NAME@ — TODO: one line saying what this strategy changes, and which Table 7 row you expect.
 * Made by `tools/hoardlab new @NAME@ --from @FROM@` (docs/lab.md): it starts as private heaps
 * with ownership (src/strategies/ownership.c): each thread allocates from its own heap
 * (heap_select), and a freed block goes back to the heap that owns its superblock. The
 * mechanisms are src/core/heap/heap.h and src/core/heaps/heappaths.h, whose malloc and free
 * are built once for every heap row; a row is its policy below. `hoard` adds the emptiness
 * threshold and the global heap (src/strategies/hoard.c). `tools/hoardlab grade @NAME@`
 * measures it. The front caches (key `cache`) and the sharded free lists (`free_lists`) work
 * under it as under ownership: hl_fronts_start puts them in. */
#include "cache.h"

/* After a free, with the block's owner heap h locked, when the policy is due: the class's u
 * fell below the floor (none here) or sb became empty (and in the checks build, always).
 * Your policy for an emptying superblock goes here (Hoard moves one to the global heap when
 * u < a - K*S and u < (1-f)a). */
static void @NAME@_after_free(struct hl_heap *h, struct hl_sb *sb)
{
    if (HL_INVARIANT_CHECKS) {
        hl_sb_check(sb);
        hl_heap_check(h, (int)sb->cls);
    }
}

/* All a heap row adds to the paths (src/core/heap/heap.h's struct hl_heap_policy): where a
 * heap with no room gets a superblock (here a new one from the OS), the after-free policy,
 * the floor of u below which it is due (none), and whether there is a global heap (no). */
static const struct hl_heap_policy @NAME@_policy = {
    .refill = hl_heaps_refill_from_os, .after_free = @NAME@_after_free,
};

static int @NAME@_init(void)
{
    hl_fronts_start(&@NAME@_policy);
    return 0;
}

const struct hl_strategy hl_strategy_@NAME@ = {
    .name = "@NAME@",
    .summary = "TODO: one line for hlconfig --strategies",
    .init = @NAME@_init,
    HL_ROW_PATHS(hl_heap_row_malloc, hl_heap_row_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
