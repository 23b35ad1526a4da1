/* serial — the serial single heap (Hoard Table 7, first row): one heap behind one lock.
 * Fast on one thread; threads serialise on the lock, and blocks for different threads come
 * from neighbouring addresses, so it induces false sharing. Blowup O(1). */
#include "base.h"
#include "heap.h"

static int serial_init(void) { return hl_sh_init(false); }

const struct hl_strategy hl_strategy_serial = {
    .name = "serial",
    .summary = "serial single heap: uC++ free lists behind one heap lock",
    .defaults = "size_classes=pow2",
    .init = serial_init,
    HL_ROW_PATHS(hl_sh_malloc, hl_sh_free),
    .memalign = hl_sh_memalign,
    .usable_size = hl_sh_usable_size,
    .fork = hl_sh_fork,
};
