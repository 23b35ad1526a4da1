/* ranges.c — the parked ranges: large.c's cache of freed mappings parks each mapping it keeps
 * as a range of pages (all but the first, where the cache writes its record, struct
 * hl_purge_range), taken out again before the mapping is reused, merged or cut. This file
 * keeps them, in a list in parking order, and gives their pages back when the policy says
 * (purge.c, which parks and takes them: hl_purge_park_range, hl_purge_unpark_range). A range
 * is kept, aged and purged as a parked superblock is: counted in the same `retain`, the
 * excess purged oldest first over both lists (the older head of the two), at the same times:
 * under decay or purge_delay never as it parks, but when due. Untimed (free or dontneed,
 * purge_delay = 0) with a budget (retain > 0), a range still waits HL_PURGE_RANGE_AGE_MS
 * before it may go (oldest first): a mapping taken again within it keeps its pages. With
 * retain = 0 (keep nothing) it goes as it parks.
 *
 * Invariants:
 *   - Everything here but the counters' readers runs with hl_parked_lock held (parked.c), and
 *     a range is purged with it held, so a take waits for a purge in progress before the
 *     mapping is written.
 *   - large.c parks and takes ranges under its cache's lock, which is therefore taken
 *     before hl_parked_lock, never after (fork.c's order).
 *   - A range is counted by its pages' bytes (len), outside the superblocks' gauges
 *     (parked_bytes, purged_bytes): hl_purge_ranges_kept and hl_purge_ranges_purged.
 * docs/hoard2026.md ("Purging parked memory: how it was decided", its "Ranges") has the
 * measurements that chose the age and the order. */
#include <sys/mman.h>
#include "purge.h"


static struct hl_purge_range *oldest, *newest;   /* the KEPT ranges, in parking order */
static _Atomic size_t kept;              /* bytes of ranges parked KEPT */
static _Atomic size_t purged;            /* bytes of ranges purged so far (a counter) */

struct hl_purge_range *hl_ranges_oldest(void) { return oldest; }

void hl_ranges_keep(struct hl_purge_range *r)
{
    r->parked = HL_PARKED_KEPT;
    r->parked_at = hl_coarse_ns();
    atomic_fetch_add_explicit(&kept, r->len, memory_order_relaxed);
    r->next = NULL;
    if ((r->prev = newest)) newest->next = r;
    else oldest = r;
    newest = r;
}

void hl_ranges_unlink(struct hl_purge_range *r)
{
    if (r->prev) r->prev->next = r->next; else oldest = r->next;
    if (r->next) r->next->prev = r->prev; else newest = r->prev;
    r->next = r->prev = NULL;
    atomic_fetch_sub_explicit(&kept, r->len, memory_order_relaxed);
}

/* Only the excess goes when it is less than the range (a cache's mapping merged from many
 * freed blocks is one range, and need not be given back whole for one block beyond
 * `retain`), from the end away from the pages freed last; the rest stays kept, as old as it
 * was. */
void hl_ranges_give_back(struct hl_purge_range *r, size_t want)
{
    size_t cut = hl_align_up(want, HL_PAGE);
    char *from = r->from;
    if (cut < r->len) {
        if (r->cut_high) from += r->len - cut;
        else r->from += cut;
        r->len -= cut;
        atomic_fetch_sub_explicit(&kept, cut, memory_order_relaxed);
    } else {
        cut = r->len;
        hl_ranges_unlink(r);
        r->parked = HL_PARKED_PURGED;
    }
    atomic_fetch_add_explicit(&purged, cut, memory_order_relaxed);
    hl_os_madvise(from, cut, hl_cfg.purge == HL_PURGE_DONTNEED ? MADV_DONTNEED : MADV_FREE);
}

size_t hl_purge_ranges_kept(void) { return atomic_load_explicit(&kept, memory_order_relaxed); }
size_t hl_purge_ranges_purged(void) { return atomic_load_explicit(&purged, memory_order_relaxed); }
