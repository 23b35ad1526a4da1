/* concurrent — the concurrent single heap (Hoard Table 7, second row; the uC++ allocator):
 * the serial heap with a lock per size-class free list instead of one heap lock. Threads
 * allocating different sizes no longer serialise; with `padding = off` the list heads share
 * cache lines, with `padding = on` they do not (uC++/Hoard report). Blowup O(1). */
#include "base.h"
#include "heap.h"

static int concurrent_init(void) { return hl_sh_init(true); }

const struct hl_strategy hl_strategy_concurrent = {
    .name = "concurrent",
    .summary = "concurrent single heap: uC++ free lists with a lock each (padding on/off)",
    .defaults = "size_classes=pow2",
    .init = concurrent_init,
    HL_ROW_PATHS(hl_sh_malloc, hl_sh_free),
    .memalign = hl_sh_memalign,
    .usable_size = hl_sh_usable_size,
    .fork = hl_sh_fork,
};
