/* hoard2026 — `hoard`'s code with the 2026 Hoard's defaults (Hoard PR #88): a thread-local
 * allocation buffer per size class (tlab), the global heap in 8 shards (global_shards), heap
 * selection by CPU (heap_select = cpu) and 256 KiB superblocks. Every element is a knob of
 * `hoard` too, so a comparison of the two rows isolates them all at once, and `hoard` with one
 * key set isolates one (docs/hoard2026.md). */
#include "hoard.h"

const struct hl_strategy hl_strategy_hoard2026 = {
    .name = "hoard2026",
    .summary = "Hoard with the 2026 optimizations: TLAB, sharded global heap, CPU heap selection",
    .defaults = "tlab=on global_shards=8 heap_select=cpu superblock_size=256K",
    .init = hl_hoard_init,
    /* with tlab = on (its default) init puts the TLAB's paths in front, as for `hoard` */
    HL_ROW_PATHS(hl_heap_row_malloc, hl_heap_row_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
