/* hoard202607 — `hoard`'s code with the defaults of Hoard as of July 2026 (pull requests #89
 * to #123 on top of hoard2026's #88): a home heap per thread handed out round-robin
 * (heap_select = home) to which foreign frees go (tlab_foreign = home), an adaptive TLAB
 * that refills and flushes in batches, the global heap in 64 shards keyed by thread,
 * 4 size classes per power of two, and a bounded remote-free queue. Each element is a knob
 * of `hoard` (docs/hoard2026.md has the table: element, pull request, key, default, file). */
#include "hoard.h"

const struct hl_strategy hl_strategy_hoard202607 = {
    .name = "hoard202607",
    .summary = "Hoard as of July 2026: home heaps, adaptive batched TLAB, thread-keyed shards",
    /* hoard2026's defaults (tlab=on superblock_size=256K), with heap_select and global_shards
     * changed, plus the later elements. */
    .defaults = "tlab=on superblock_size=256K heap_select=home tlab_foreign=home "
                "tlab_adaptive=on tlab_refill=batch tlab_flush=batch global_shards=64 "
                "global_shard_key=thread purge=free retain=64M size_classes=pow2x4 "
                "remote_free=queue tlab_sb_cache=16 "
                "remote_queue_cap=256",
    .init = hl_hoard_init,
    HL_ROW_PATHS(hl_heap_row_malloc, hl_heap_row_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
