/* api.c — the public API of include/hoardlab.h: which strategy runs, the effective
 * configuration and the statistics (summed by stats.c); the explicit collect is collect.c's.
 * The first two start the library if nothing did; the statistics of a library not started
 * are zero. */
#include <string.h>
#include "front.h"

HL_EXPORT void hoardlab_stats(struct hoardlab_stats *out)
{
    if (atomic_load(&hl_init_state) == 2) hl_stats_sum(out);
    else memset(out, 0, sizeof *out);
}

HL_EXPORT void hoardlab_stats_reset_peaks(void) { hl_stats_reset_peaks(); }

HL_EXPORT const char *hoardlab_strategy(void)
{
    if (atomic_load(&hl_init_state) != 2) hl_init();
    return hl_active->name;
}

HL_EXPORT const char *hoardlab_config_get(const char *key)
{
    static _Thread_local char buf[256];
    if (atomic_load(&hl_init_state) != 2) hl_init();
    return hl_config_value(key, buf, sizeof buf);
}
