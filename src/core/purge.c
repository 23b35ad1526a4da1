/* purge.c — `purge` and `retain`: what happens to an empty superblock parked in hoard's global
 * heap (the later Hoard's #99: purge empty superblocks; #116: a retain budget).
 *
 *   purge = off       kept as it is (the paper; hoard2026).
 *   purge = free      its blocks' pages are given back with madvise(MADV_FREE): the kernel
 *                     reclaims them when it needs memory, and a page written before that stays.
 *   purge = dontneed  madvise(MADV_DONTNEED): gone at once; the next touch maps a zero page.
 * Either way, up to `retain` bytes of parked superblocks (over all shards) are kept unpurged,
 * for a fast reuse; the rest is purged as it parks.
 *
 * A purged superblock is formatted afresh first (no free list, nothing carved: blocks are
 * carved anew as it is reused), since its free list lived in the pages given back. Its header
 * page stays. It stays in the global heap, mapped, and counted in A: A is the memory hoardlab
 * holds from the OS for blocks, resident or not, so with purge on, RSS may be below A by the
 * purged pages (docs/hoard2026.md). Only the pages wholly after the header are purged. */
#include <sys/mman.h>
#include "purge.h"

enum { KEPT = 1, PURGED = 2 };          /* sb->parked */

static _Atomic size_t retained;          /* bytes of superblocks parked KEPT */
static _Atomic size_t purged;            /* bytes of superblocks parked PURGED (a gauge) */

void hl_purge_park(struct hl_sb *sb)
{
    if (hl_cfg.purge == HL_PURGE_OFF || sb->parked) return;
    size_t was = atomic_fetch_add_explicit(&retained, hl_sb_size, memory_order_relaxed);
    if (was + hl_sb_size <= hl_cfg.retain) {
        sb->parked = KEPT;
        return;
    }
    atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
    sb->parked = PURGED;
    atomic_fetch_add_explicit(&purged, hl_sb_size, memory_order_relaxed);
    hl_sb_format(sb, sb->cls);
    uintptr_t from = hl_align_up((uintptr_t)sb + HL_SB_HEADER, HL_PAGE);
    uintptr_t end = (uintptr_t)sb + hl_sb_size;
    if (from < end)
        madvise((void *)from, end - from,
                hl_cfg.purge == HL_PURGE_FREE ? MADV_FREE : MADV_DONTNEED);
}

void hl_purge_unpark(struct hl_sb *sb)
{
    if (sb->parked == KEPT)
        atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
    else if (sb->parked == PURGED)
        atomic_fetch_sub_explicit(&purged, hl_sb_size, memory_order_relaxed);
    sb->parked = 0;
}

size_t hl_purge_retained(void) { return atomic_load_explicit(&retained, memory_order_relaxed); }
size_t hl_purge_purged(void) { return atomic_load_explicit(&purged, memory_order_relaxed); }
