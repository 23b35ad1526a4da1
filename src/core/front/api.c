/* api.c — the public API of include/hoardlab.h: which strategy runs, the effective
 * configuration, the statistics (summed by stats.c), and the explicit collect. The first two
 * start the library if nothing did; the statistics of a library not started are zero, and
 * there is nothing to collect in it. */
#include <string.h>
#include <sys/mman.h>
#include "hl.h"
#include "heapselect.h"
#include "large.h"
#include "fronts.h"
#include "purge.h"

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

/* hoardlab_collect: the empty superblocks of a heap that is not a shard (hoard keeps up to its
 * emptiness threshold's worth; the others, every empty one) formatted afresh under its lock and
 * their pages given back, as purge.c does to parked ones; they stay the heap's. A heap only
 * its thread uses (heap_select = thread, unlocked) only by that thread. */
static void collect_heap(struct hl_heap *h, void *arg)
{
    size_t *bytes = arg;
    if (hl_heap_is_shard(h) || (!h->shared && h != hl_me.heap)) return;
    hl_heap_enter(h);
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (unsigned l = 0; l <= HL_LIST_EMPTY; l++)      /* (a lone one: the lowest group) */
        for (struct hl_sb *sb = h->cls[c].list[l]; sb; sb = sb->next) {
            if (!hl_sb_empty(sb)) continue;
            hl_sb_format(sb, sb->cls);
            uintptr_t from = hl_align_up((uintptr_t)sb + HL_SB_HEADER, HL_PAGE);
            if (from < (uintptr_t)sb + hl_sb_size &&
                !hl_os_madvise((void *)from, (uintptr_t)sb + hl_sb_size - from, MADV_DONTNEED))
                *bytes += hl_sb_size;
        }
    *bytes += hl_purge_heap_holes(h);    /* purge_holes: free pages of partly used ones */
    hl_heap_leave(h);
}

HL_EXPORT size_t hoardlab_collect(void)
{
    if (atomic_load(&hl_init_state) != 2) return 0;
    size_t bytes = 0;
    hl_fronts_flush();                   /* first: what it gives back may empty superblocks */
    hl_heaps_foreach(collect_heap, &bytes);
    bytes += hl_purge_all(hl_heap_shards, hl_heap_nshards);
    size_t large = hl_large_cached();
    hl_large_flush();
    return bytes + large;
}
