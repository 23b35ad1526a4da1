/* collect.c — hoardlab_collect (include/hoardlab.h): everything the library holds free given
 * back to the OS now, whatever the purge policy and its timing (jemalloc's arena.<i>.purge,
 * mimalloc's mi_collect(true)): the calling thread's front first (what it gives back may empty
 * superblocks), then every heap's empty superblocks and holes, the global heap's shards
 * (purge.c's hl_purge_all), and large.c's cache. Nothing to collect in a library not
 * started. */
#include <sys/mman.h>
#include "front.h"
#include "heaps.h"
#include "heap.h"
#include "cache.h"

/* The empty superblocks of a heap that is not a shard (hoard keeps up to its emptiness
 * threshold's worth; the others, every empty one) formatted afresh under its lock and their
 * pages given back, as purge.c does to parked ones; they stay the heap's. A heap only its
 * thread uses (heap_select = thread, unlocked) only by that thread. */
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
    *bytes += hl_holes_collect(h);       /* purge_holes: free pages of partly used ones */
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
