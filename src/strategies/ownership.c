/* ownership — private heaps with ownership (Hoard Table 7; ptmalloc, MTmalloc, LKmalloc):
 * each thread allocates from its own heap, and a freed block goes back to its superblock in
 * the heap that OWNS it, under that heap's lock. Memory one heap frees stays in that heap, so
 * a round-robin producer-consumer (thread i allocates, thread i+1 frees) makes every heap
 * hold the live set once: O(P) blowup (§6.1).
 *
 * Its neighbours: `private` differs only in where free puts a block (the freeing thread's
 * heap); `hoard` adds only the emptiness threshold and the global heap. */
#include "fronts.h"

/* HL_MALLOC_PAIR defines ownership_malloc, ownership_malloc_entry, ownership_malloc_uncounted,
 * ownership_malloc_uncounted_entry */
HL_MALLOC_PAIR(static, ownership_malloc, hl_heap_malloc_fast, hl_heaps_refill_from_os)

/* After a free, the owner locked: with release_empty, an empty superblock goes to the OS. */
static void after_free(struct hl_heap *h, struct hl_sb *sb)
{
    unsigned c = sb->cls;
    if (hl_cfg.release_empty && hl_sb_empty(sb)) {
        hl_heap_detach(h, sb);
        hl_sb_release(sb);
    } else if (HL_INVARIANT_CHECKS) {
        hl_sb_check(sb);
    }
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
}

/* HL_FREE_PAIR defines ownership_free, ownership_free_entry, ownership_free_uncounted,
 * ownership_free_uncounted_entry */
HL_FREE_PAIR(static, ownership_free, hl_heap_free_fast, after_free)

/* free_lists = sharded (sharded.h): the heap's paths over three lists per superblock.
 * HL_SHARDED_PATHS defines ownership_sharded_paths[2], the table of ownership_sharded_malloc,
 * ownership_sharded_malloc_entry, ownership_sharded_malloc_uncounted,
 * ownership_sharded_malloc_uncounted_entry, ownership_sharded_free, ownership_sharded_free_entry,
 * ownership_sharded_free_uncounted, ownership_sharded_free_uncounted_entry. */
HL_SHARDED_PATHS(ownership_sharded, hl_heaps_refill_from_os, after_free)

/* A front cache (cache = thread, the TLAB, or cpu: fronts.c) goes in front of the heap as
 * under hoard: with remote_free = list or queue and the TLAB, a malloc it serves takes no
 * lock, and nothing else differs from `hoard` with the same front but Hoard's threshold and
 * global heap. */
static int ownership_init(void)
{
    hl_heap_floor = NULL;
    hl_heap_after_free = after_free;
    hl_heaps_init(false, false);
    if (hl_sb_sharded) hl_paths = hl_sharded_start(ownership_sharded_paths);
    hl_fronts_start(hl_heaps_refill_from_os, after_free,
                    hl_sb_sharded ? &ownership_sharded_paths[1] : &hl_active->counted);
    return 0;
}

const struct hl_strategy hl_strategy_ownership = {
    .name = "ownership",
    .summary = "private heaps with ownership: a freed block returns to its owner heap",
    .init = ownership_init,
    HL_ROW_PATHS(ownership_malloc, ownership_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
