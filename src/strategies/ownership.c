/* ownership — private heaps with ownership (Hoard Table 7; ptmalloc, MTmalloc, LKmalloc):
 * each thread allocates from its own heap, and a freed block goes back to its superblock in
 * the heap that OWNS it, under that heap's lock. Memory one heap frees stays in that heap, so
 * a round-robin producer-consumer (thread i allocates, thread i+1 frees) makes every heap
 * hold the live set once: O(P) blowup (§6.1).
 *
 * Its neighbours: `private` differs only in where free puts a block (the freeing thread's
 * heap); `hoard` adds only the emptiness threshold and the global heap. */
#include "cache.h"

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

/* All ownership adds to the heap paths (heappaths.c, sharded.c) and the fronts (fronts.c):
 * a refill from the OS, the after-free above, no floor, no global heap. */
static const struct hl_heap_policy ownership_policy = {
    .refill = hl_heaps_refill_from_os, .after_free = after_free,
};

/* A front cache (cache = thread, the TLAB, or cpu: fronts.c) goes in front of the heap as
 * under hoard: with remote_free = list or queue and the TLAB, a malloc it serves takes no
 * lock, and nothing else differs from `hoard` with the same front but Hoard's threshold and
 * global heap. */
static int ownership_init(void)
{
    hl_fronts_start(&ownership_policy);
    return 0;
}

const struct hl_strategy hl_strategy_ownership = {
    .name = "ownership",
    .summary = "private heaps with ownership: a freed block returns to its owner heap",
    .init = ownership_init,
    HL_ROW_PATHS(hl_heap_row_malloc, hl_heap_row_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
