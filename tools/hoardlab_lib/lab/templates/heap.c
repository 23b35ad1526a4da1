/* @NAME@ — TODO: one line saying what this strategy changes, and which Table 7 row you expect.
 * Made by `tools/hoardlab new @NAME@ --from @FROM@` (docs/lab.md): it starts as private heaps
 * with ownership (src/strategies/ownership.c without its knobs): each thread allocates from
 * its own heap (heap_select), and a freed block goes back to the heap that owns its
 * superblock. The mechanisms are src/core/heap/heap.h and heappaths.h; `hoard` adds the
 * emptiness threshold and the global heap (src/strategies/hoard.c). `tools/hoardlab grade
 * @NAME@` measures it.
 *
 * Each path is built twice by HL_MALLOC_PAIR / HL_FREE_PAIR (src/core/base/stats.h): `counted` is
 * a constant true in the build init installs by default and false in the one it installs with
 * counting = off; the heap's fast paths take it last and count U only in the counted build. */
#include "heappaths.h"

/* HL_MALLOC_PAIR defines @NAME@_malloc, @NAME@_malloc_entry, @NAME@_malloc_uncounted,
 * @NAME@_malloc_uncounted_entry: the heap's fast path, which takes a superblock from the OS
 * (hl_heaps_refill_from_os) when the thread's heap has none with room. */
HL_MALLOC_PAIR(static, @NAME@_malloc, hl_heap_malloc_fast, hl_heaps_refill_from_os)

/* After every free, with the block's owner heap h locked: your policy for a superblock that
 * is emptying goes here (Hoard moves it to the global heap when u < a - K*S and u < (1-f)a). */
static void @NAME@_after_free(struct hl_heap *h, struct hl_sb *sb)
{
    if (HL_INVARIANT_CHECKS) {
        hl_sb_check(sb);
        hl_heap_check(h, (int)sb->cls);
    }
}

/* HL_FREE_PAIR defines @NAME@_free, @NAME@_free_entry, @NAME@_free_uncounted,
 * @NAME@_free_uncounted_entry */
HL_FREE_PAIR(static, @NAME@_free, hl_heap_free_fast, @NAME@_after_free)

static int @NAME@_init(void)
{
    hl_heap_floor = NULL;                 /* no emptiness threshold */
    hl_heap_after_free = @NAME@_after_free;
    hl_heaps_init(false, false);          /* (a global heap?, one heap per thread only?) */
    return 0;
}

const struct hl_strategy hl_strategy_@NAME@ = {
    .name = "@NAME@",
    .summary = "TODO: one line for hlconfig --strategies",
    .init = @NAME@_init,
    HL_ROW_PATHS(@NAME@_malloc, @NAME@_free),
    /* HL_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_heaps_thread_exit, hl_heaps_fork,
     * hl_heaps_stats */
    HL_HEAP_ROW,
};
