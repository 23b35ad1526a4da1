/* ownership — private heaps with ownership (Hoard Table 7; ptmalloc, MTmalloc, LKmalloc):
 * each thread allocates from its own heap, and a freed block goes back to its superblock in
 * the heap that OWNS it, under that heap's lock. Memory one heap frees stays in that heap, so
 * a round-robin producer-consumer (thread i allocates, thread i+1 frees) makes every heap
 * hold the live set once: O(P) blowup (§6.1).
 *
 * Its neighbours: `private` differs only in where free puts a block (the freeing thread's
 * heap); `hoard` adds only the emptiness threshold and the global heap. */
#include "sharded.h"
#include "cpucache.h"

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

/* tlab = on: a thread-local buffer in front of the heap, as under hoard (tlab.h): with
 * remote_free = list or queue, a malloc it serves takes no lock, and nothing else differs
 * from `hoard` with tlab = on but Hoard's threshold and global heap.
 * HL_TLAB_PATHS defines ownership_tlab_paths[6], the table of ownership_tlab_malloc,
 * ownership_tlab_malloc_entry, ownership_tlab_malloc_uncounted,
 * ownership_tlab_malloc_uncounted_entry, ownership_tlab_malloc_exact,
 * ownership_tlab_malloc_exact_entry, ownership_tlab_free, ownership_tlab_free_entry,
 * ownership_tlab_free_uncounted, ownership_tlab_free_uncounted_entry, ownership_tlab_free_exact,
 * ownership_tlab_free_exact_entry, ownership_tlab_free_sbc, ownership_tlab_free_sbc_entry,
 * ownership_tlab_free_sbc_uncounted, ownership_tlab_free_sbc_uncounted_entry,
 * ownership_tlab_free_sbc_exact, ownership_tlab_free_sbc_exact_entry */
HL_TLAB_PATHS(ownership_tlab, hl_heaps_refill_from_os, ownership_malloc, after_free, ownership_free)
/* free_lists = sharded (sharded.h), with or without the TLAB.
 * HL_SHARDED_PATHS defines ownership_sharded_paths[2], the table of ownership_sharded_malloc,
 * ownership_sharded_malloc_entry, ownership_sharded_malloc_uncounted,
 * ownership_sharded_malloc_uncounted_entry, ownership_sharded_free, ownership_sharded_free_entry,
 * ownership_sharded_free_uncounted, ownership_sharded_free_uncounted_entry;
 * HL_TLAB_PATHS defines ownership_tlab_sharded_paths[6], the table of
 * ownership_tlab_sharded_malloc, ownership_tlab_sharded_malloc_entry,
 * ownership_tlab_sharded_malloc_uncounted, ownership_tlab_sharded_malloc_uncounted_entry,
 * ownership_tlab_sharded_malloc_exact, ownership_tlab_sharded_malloc_exact_entry,
 * ownership_tlab_sharded_free, ownership_tlab_sharded_free_entry,
 * ownership_tlab_sharded_free_uncounted, ownership_tlab_sharded_free_uncounted_entry,
 * ownership_tlab_sharded_free_exact, ownership_tlab_sharded_free_exact_entry,
 * ownership_tlab_sharded_free_sbc, ownership_tlab_sharded_free_sbc_entry,
 * ownership_tlab_sharded_free_sbc_uncounted, ownership_tlab_sharded_free_sbc_uncounted_entry,
 * ownership_tlab_sharded_free_sbc_exact, ownership_tlab_sharded_free_sbc_exact_entry */
HL_SHARDED_PATHS(ownership_sharded, hl_heaps_refill_from_os, after_free)
HL_TLAB_PATHS(ownership_tlab_sharded, hl_heaps_refill_from_os, ownership_sharded_malloc,
              after_free, ownership_sharded_free)

/* cache = cpu: the per-CPU cache in front of the heap (cpucache.h).
 * HL_CPU_PATHS defines ownership_cpu_paths[3], the table of ownership_cpu_malloc, ownership_cpu_malloc_entry, ownership_cpu_malloc_uncounted, ownership_cpu_malloc_uncounted_entry, ownership_cpu_malloc_exact, ownership_cpu_malloc_exact_entry, ownership_cpu_free, ownership_cpu_free_entry, ownership_cpu_free_uncounted, ownership_cpu_free_uncounted_entry, ownership_cpu_free_exact, ownership_cpu_free_exact_entry;
 * and ownership_cpu_sharded_paths[3], the table of ownership_cpu_sharded_malloc, ownership_cpu_sharded_malloc_entry, ownership_cpu_sharded_malloc_uncounted, ownership_cpu_sharded_malloc_uncounted_entry, ownership_cpu_sharded_malloc_exact, ownership_cpu_sharded_malloc_exact_entry, ownership_cpu_sharded_free, ownership_cpu_sharded_free_entry, ownership_cpu_sharded_free_uncounted, ownership_cpu_sharded_free_uncounted_entry, ownership_cpu_sharded_free_exact, ownership_cpu_sharded_free_exact_entry */
HL_CPU_PATHS(ownership_cpu, hl_heaps_refill_from_os, ownership_malloc, after_free, ownership_free)
HL_CPU_PATHS(ownership_cpu_sharded, hl_heaps_refill_from_os, ownership_sharded_malloc,
             after_free, ownership_sharded_free)

static int ownership_init(void)
{
    hl_heap_floor = NULL;
    hl_heap_after_free = after_free;
    hl_heaps_init(false, false);
    if (hl_sb_sharded) hl_paths = hl_sharded_start(ownership_sharded_paths);
    if (hl_cfg.cache == HL_CACHE_THREAD)
        hl_paths = hl_tlab_start(hl_sb_sharded ? ownership_tlab_sharded_paths
                                               : ownership_tlab_paths);
    if (hl_cfg.cache == HL_CACHE_CPU)
        hl_paths = hl_cpu_cache_start(hl_sb_sharded ? ownership_cpu_sharded_paths
                                                    : ownership_cpu_paths);
    return 0;
}

const struct hl_strategy hl_strategy_ownership = {
    .name = "ownership",
    .summary = "private heaps with ownership: a freed block returns to its owner heap",
    .init = ownership_init,
    HL_ROW_PATHS(ownership_malloc, ownership_free),
    /* HL_CACHE_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_tlab_heaps_thread_exit,
     * hl_tlab_heaps_fork, hl_cache_heaps_stats */
    HL_CACHE_HEAP_ROW,
};
