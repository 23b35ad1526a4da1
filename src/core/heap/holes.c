/* holes.c — hole purging (purge_holes = on): free pages inside superblocks that still hold
 * live blocks (survivors spread over every page, where no superblock empties and the parked
 * purges cannot act) are given back; superblock.c says how a hole keeps the free list whole.
 *   - At a free that moves a superblock into the lowest fullness group (used below capacity
 *     / fullness_groups), under its owner's lock: every unit whose blocks are all free, with
 *     madvise as `purge` says (MADV_FREE under decay, and under ownership, which has no
 *     `purge`); at most once per max(10 ms, purge_delay, or decay_ms under decay) for the
 *     same superblock (its parked_at, unused while it holds blocks, keeps when), and again,
 *     whatever the time, each time the frees that follow quarter its `used` in the group
 *     (heap.c sets group_lo there to a quarter of used, at least 2). The heap observer below
 *     does it, installed only under purge_holes = on: the heap's paths gain nothing where it
 *     is off.
 *   - By the sweep: a shared heap whose free purged holes is listed, and a period later
 *     (max(500 ms, purge_delay, or decay_ms under decay)) the sweep purges the holes of its
 *     lowest group's superblocks freed into since their last hole purge (holes_used), and
 *     lists it again if it found one: it follows the frees while they go on and stops once
 *     they stop. Run by the ticker (which purge_holes makes wanted whatever `purge` says) and
 *     by timed purges' slow-path ticks, taking each heap by trylock (busy: the next sweep).
 *   - By hoardlab_collect, in every superblock of every heap and shard, with MADV_DONTNEED
 *     (holes an earlier MADV_FREE made advised again), whatever the timing.
 * Not bounded by `retain`: a hole is no parked superblock, and taking it back costs a page
 * fault per page. Counted in purged_bytes and hole_purged_bytes (a gauge: units given back
 * and not yet taken back by malloc). docs/hoard2026.md ("Hole purging"; "Purging parked
 * memory: how it was decided") has the measurements that chose these times. */
#include <sys/mman.h>
#include "heap.h"
#include "holes.h"
#include "purge.h"
#include "ticker.h"

/* ---- the observer --------------------------------------------------------------------------
 * heap.c calls it on every move, and hl_heap_holes_bound after a move that sets the bounds
 * (attach: here; regroup: hl_heap_regroup's observed branch). Before a regroup or a detach, a
 * hole comes back if the free list ran dry (the pop that emptied it is the one that
 * regroups; a detached superblock's next owner pops once). The heap log's observer, if any,
 * is called after. */
static void (*next_observer)(const struct hl_heap *, const struct hl_sb *, unsigned, unsigned);
static void later(void);

/* sb's holes purged now (its owner locked), as `purge` advises (decay and ownership, which
 * has no purge: MADV_FREE); parked_at, unused while sb is not parked, keeps when. */
static void purge_now(struct hl_sb *sb, uint64_t now)
{
    sb->parked_at = now;
    hl_sb_purge_holes(sb, hl_cfg.purge == HL_PURGE_DONTNEED ? MADV_DONTNEED : MADV_FREE, false);
}

/* The ms a superblock's holes wait between purges at the crossing, and the sweep's period,
 * are at least: purge_delay, or decay_ms under decay. */
static long delay_ms(void)
{
    return hl_cfg.purge == HL_PURGE_DECAY ? hl_cfg.decay_ms : hl_cfg.purge_delay;
}

/* The heaps whose frees purged holes since the last sweep: pushed under the heap's lock,
 * taken whole by the sweep, so no ABA. A heap only its own thread touches (not shared) is
 * never listed: the sweep could not lock it. */
static _Atomic(struct hl_heap *) pending;

static void push(struct hl_heap *h)
{
    struct hl_heap *head = atomic_load_explicit(&pending, memory_order_relaxed);
    do h->holes_next = head;
    while (!atomic_compare_exchange_weak_explicit(&pending, &head, h,
                                                  memory_order_release, memory_order_relaxed));
}

/* A free moved sb (its owner h locked) into its lowest fullness group, or quartered its
 * `used` there (again = true): its free pages given back (superblock.c), unless (at the
 * crossing) that was done within max(10 ms, delay_ms). h is listed for the sweep: the frees
 * that follow, below the next quartering, would otherwise leave their pages for good once
 * the program's threads go idle (a drain's last quarter). */
static void purge_low(struct hl_heap *h, struct hl_sb *sb, bool again)
{
    long ms = delay_ms();
    uint64_t now = hl_coarse_ns(), gap = hl_ms_ns(ms > 10 ? ms : 10);
    if (sb->parked || (!again && sb->parked_at && sb->parked_at <= now &&
                       now - sb->parked_at < gap))
        return;
    purge_now(sb, now);
    if (h->shared && !h->holes_listed) {
        h->holes_listed = true;
        push(h);
        later();
    }
}

static void observer(const struct hl_heap *ch, const struct hl_sb *csb, unsigned from,
                     unsigned to)
{
    struct hl_heap *h = (struct hl_heap *)ch;     /* (the observer's view is const) */
    struct hl_sb *sb = (struct hl_sb *)csb;
    if (from == HL_LIST_NONE) {
        hl_heap_holes_bound(sb);         /* attached: bounds set */
    } else {
        if (sb->holes && !sb->free_head) hl_sb_unhole(sb);
        /* into the lowest group, or its used quartered there (hl_heap_holes_bound) */
        if (to == 0 && from != HL_LIST_EMPTY &&
            (from != 0 || sb->used < sb->group_lo))
            purge_low(h, sb, from == 0);
    }
    if (next_observer) next_observer(h, sb, from, to);
}

/* ---- the sweep ----------------------------------------------------------------------------- */

/* h locked: true if a superblock of h's lowest group was freed into since its last hole
 * purge (its holes are purged now). */
static bool sweep_heap(struct hl_heap *h)
{
    bool found = false;
    uint64_t now = hl_coarse_ns();
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (struct hl_sb *sb = h->cls[c].list[0]; sb; sb = sb->next) {
            if (sb->parked || hl_sb_empty(sb) || sb->used >= sb->holes_used) continue;
            purge_now(sb, now);
            found = true;
        }
    return found;
}

/* The heaps listed since the last sweep, each (by trylock) walked: true if a superblock was
 * freed into (a sweep is due again: the frees may go on) or a heap's lock was busy. */
static bool sweep(void)
{
    bool again = false;
    struct hl_heap *h = atomic_exchange_explicit(&pending, NULL, memory_order_acquire);
    while (h) {
        struct hl_heap *next = h->holes_next;
        if (!hl_trylock(&h->lock)) {     /* busy: at the next sweep (still listed) */
            push(h);
            again = true;
        } else {
            HL_COUNT_AT(h->acquisitions, 1);
            if (sweep_heap(h)) {         /* the frees may go on: look again */
                push(h);
                again = true;
            } else {
                h->holes_listed = false;
            }
            hl_heap_unlock(h);
        }
        h = next;
    }
    return again;
}

/* When the sweep of the listed heaps is due (UINT64_MAX: none listed): the ticker's watch. */
static _Atomic uint64_t due = UINT64_MAX;

/* The sweep's period: half a second, or delay_ms if longer. */
static uint64_t period(void)
{
    long ms = delay_ms();
    return hl_ms_ns(ms > 500 ? ms : 500);
}

/* A heap listed (purge_low): the sweep due a period later, if not sooner. */
static void later(void)
{
    uint64_t at = hl_coarse_ns() + period();
    uint64_t d = atomic_load_explicit(&due, memory_order_relaxed);
    while (at < d)
        if (atomic_compare_exchange_weak_explicit(&due, &d, at, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            hl_ticker_wake(at);
            return;
        }
}

/* The one that takes `due` sweeps (the ticker, or a timed slow path's tick), holding the
 * parked lists' lock (by trylock: busy, it is retried a step later), which fork.c takes
 * after every heap's: a fork never finds the list taken and half swept, which would leave
 * the child with heaps marked listed that no list holds. A large free parking a range waits
 * for it meanwhile. */
void hl_holes_tick(uint64_t now)
{
    uint64_t d = atomic_load_explicit(&due, memory_order_relaxed);
    if (now < d || !hl_trylock(&hl_parked_lock)) return;
    if (atomic_compare_exchange_strong(&due, &d, UINT64_MAX) && sweep())
        later();
    hl_lock_release(&hl_parked_lock);
}

static void ticker_run(void) { hl_holes_tick(hl_coarse_ns()); }

void hl_holes_init(void)
{
    if (hl_cfg.purge_holes && hl_heap_observer != observer) {
        next_observer = hl_heap_observer;
        hl_heap_observer = observer;
    }
    if (hl_cfg.purge_holes) hl_ticker_watch(&due, ticker_run);
}

/* ---- hoardlab_collect ------------------------------------------------------------------- */

size_t hl_holes_collect(struct hl_heap *h)
{
    size_t bytes = 0;
    if (!hl_cfg.purge_holes) return 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (unsigned l = 0; l < HL_LIST_FULL; l++)       /* the partly used ones */
            for (struct hl_sb *sb = h->cls[c].list[l]; sb; sb = sb->next)
                if (!hl_sb_empty(sb)) bytes += hl_sb_purge_holes(sb, MADV_DONTNEED, true);
    return bytes;
}
