/* purge.c — `purge`, `retain`, `decay_ms` and `purge_delay`: what happens to an empty
 * superblock parked in hoard's global heap (the later Hoard's #99: purge empty superblocks;
 * #116: a retain budget; jemalloc's decay and mimalloc's purge delay, as knobs).
 *
 *   purge = off       kept as it is (the paper; hoard2026).
 *   purge = free      its blocks' pages are given back with madvise(MADV_FREE): the kernel
 *                     reclaims them when it needs memory, and a page written before that stays.
 *   purge = dontneed  madvise(MADV_DONTNEED): gone at once; the next touch maps a zero page.
 *   purge = decay     MADV_FREE, along a curve in time (below).
 * Up to `retain` bytes of parked superblocks (over all shards) are never purged, for a fast
 * reuse; what is parked beyond them, the excess, is purged
 *   - as it parks: free or dontneed with purge_delay = 0;
 *   - once it has stayed parked purge_delay ms (mimalloc's purge delay), oldest first: free
 *     or dontneed with purge_delay > 0;
 *   - decay: as much of it as the curve no longer allows. Bytes that park at time 0 may stay
 *     unpurged at time t only up to
 *         E(t) = E(0) (1 - s(t / decay_ms)),   s(x) = 3x^2 - 2x^3 (smoothstep), s = 1 past 1,
 *     which starts flat (a lull of a tenth of decay_ms purges 3% of them, a quarter 16%), is
 *     steepest at decay_ms / 2 (half gone) and ends flat at none (jemalloc's dirty decay; its
 *     second curve, from MADV_FREE to MADV_DONTNEED, is not modelled). Time runs in
 *     DECAY_STEPS epochs of decay_ms / DECAY_STEPS: the growth of the excess in an epoch (as
 *     superblocks park) is one entry of a backlog, weighted by 1 - s(its age / decay_ms); at
 *     each new epoch the excess beyond the backlog's weighted sum, rounded up to whole
 *     superblocks (never below the curve), is purged, oldest first. Superblocks taken back cut
 *     the excess, not the backlog, so a reused burst is purged more slowly, not sooner; and
 *     one parked again while the excess is within what the curve allowed at the last epoch
 *     is no new growth (jemalloc's nunpurged = max(limit, current)): counted as growth, a
 *     light load taking 4 superblocks back and parking them again renewed the backlog, and
 *     phased under hoard2026, decay_ms = 1000, kept 0.85 of its peak 5 s after the drain.
 * The last two are timed: their purges fall due with the clock (CLOCK_MONOTONIC_COARSE) and
 * are done by the slow paths that pass by (a superblock or a range parking or leaving, a
 * heap's refill: hl_purge_tick) and, with purge_thread = on (the default), by a background
 * thread (jemalloc's background_thread), since slow paths alone left a program that stops
 * calling them everything it held then: hoard2026's TLABs absorb idle threads' light load,
 * and `decay, decay_ms = 1000` purged nothing in 5 s after a drain (issue 36).
 *
 * Ranges (issue 51). The large objects' cache of freed mappings (large.c) parks each mapping
 * it keeps as a range of pages (all but the first, where the cache writes its record, struct
 * hl_purge_range), and takes it out again before the mapping is reused, merged or cut. A
 * range is kept, aged and purged as a parked superblock is: counted in the same `retain`, in
 * a list of its own in parking order, the excess purged oldest first over both lists (the
 * older head of the two), at the same times — so under decay or purge_delay never as it
 * parks, but when it is due, by a slow path passing by (a large malloc or free parks and
 * takes ranges, a refill ticks) or by the thread. Untimed (free or dontneed with
 * purge_delay = 0) with a budget (retain > 0), where a superblock's excess is purged as it
 * parks, a range still waits HL_PURGE_RANGE_AGE_MS before it may go (oldest first, by the
 * next range parking or by the thread, which therefore starts): a mapping taken again within
 * it keeps its pages. With retain = 0 (keep nothing) it goes as it parks: under phased's
 * drain, whose light load still frees and takes large blocks hundreds of times a second, the
 * half second kept 17-30 MiB of them resident (held 1 s after the drain 0.20-0.23 of the
 * spike under hoard2026, purge = free, retain = 0, against 0.11). (At
 * first every mapping freed beyond the budget was purged as it was freed, and the budget,
 * counted as mappings entered, did not come back as they were taken: largebuf under
 * hoard202607 gave back 285 of its 600 freed mappings' pages and faulted or re-dirtied them
 * again; a program reusing one size went 3.2 -> 8 s. Then the excess went as it parked,
 * oldest first: largebuf at 2 threads still ran at 0.75-0.86 of hoard2026's speed, and at
 * 0.74 with a 10 ms delay, 0.91 with 100 ms, 0.96 with 1 s, 0.97 with a budget it never
 * reached, each ±15-20 %, 5 repetitions. Aged, it ran 1.41x faster than before, pair by
 * pair, but at 2 threads still at 0.86 [0.75, 0.97] of hoard2026's speed (25 repetitions),
 * which the thread's wakes explained (thread_wake): 0.90-0.99 without them, not decided.)
 * A range is purged with `lock` held, so a take (hl_purge_unpark_range, which takes `lock`)
 * waits for it to finish before the mapping is written; large.c parks and takes ranges under
 * its cache's lock, which is therefore taken before `lock`, never after (fork.c's order). A
 * range is counted by its pages' bytes (len), outside the superblocks' gauges (parked_bytes,
 * purged_bytes): hl_purge_ranges_kept and hl_purge_ranges_purged.
 *
 * A purged superblock is formatted afresh first (no free list, nothing carved: blocks are
 * carved anew as it is reused), since its free list lived in the pages given back. Its header
 * page stays. It stays in the global heap, mapped, and counted in A: A is the memory hoardlab
 * holds from the OS for blocks, resident or not, so with purge on, RSS may be below A by the
 * purged pages (docs/hoard2026.md). Only the pages wholly after the header are purged.
 *
 * What `retain` counts (retain_counts). `parked` (Hoard's #116): the parked superblocks and
 * ranges above, so every free byte held elsewhere -- the free space of partly used
 * superblocks that Hoard's emptiness threshold leaves in the heaps, the TLABs -- sits on top
 * of a budget that fills by itself (hoard202607 with its defaults: 86 MiB beyond live data 1 s
 * after phased's drain, of them 63 MiB parked, against its 64 MiB; with `free`, 58 MiB).
 * `free`: those too, as a memory limit counts them (TCMalloc's soft limit, which counts live
 * data too, is the nearest production counterpart): the purge thread counts them every
 * HL_PURGE_COUNT_MS (fronts.c, which sees the heaps and the fronts; no fast path counts
 * anything) into `outside`, and what is parked beyond retain less them is the excess. Only
 * parked memory is purged for it -- the rest cannot be given back whole -- so a heap holding
 * more free bytes than retain keeps nothing parked. Untimed, a superblock then parks listed
 * (as timed ones do, so that a later count can find it), kept if the last count leaves room,
 * else purged as it parks; a count that finds the budget exceeded purges the listed ones
 * oldest first once parked HL_PURGE_RANGE_AGE_MS, as ranges (a count that comes and goes
 * with a burst's frees purges nothing that a reuse half a second later takes back). Timed,
 * the excess follows the count the same way.
 *
 * Locking. A superblock parks and leaves under its shard's lock. Timed, the superblocks
 * parked unpurged are also in one list in parking order under `lock`, taken under a shard's
 * lock (park, unpark), a heap's (refill) or the large cache's (ranges); a due purge holds
 * `lock` and takes the shard of the superblock it purges with a trylock only — a busy shard's
 * superblock waits for the next tick — so no lock is ever waited for in the reverse order.
 * fork.c takes `lock` after every heap's and the large cache's.
 *
 * Holes (purge_holes = on; superblock.c says how a hole keeps the free list whole). Free pages
 * inside superblocks that still hold live blocks -- survivors spread over every page, where
 * no superblock empties and nothing above can act -- are given back:
 *   - when a free moves a superblock into the lowest fullness group (used below capacity /
 *     fullness_groups: the holes observer below purges them, under the owner's lock),
 *     every unit whose blocks are all free, with madvise as `purge` says (MADV_FREE under
 *     decay, and under ownership, which has no `purge`); at most once per
 *     max(10 ms, purge_delay, or decay_ms under decay) for the same superblock (its parked_at,
 *     unused while it holds blocks, keeps when), so that a superblock going back and forth
 *     across the group's bound is not walked at every crossing; and again, whatever the
 *     time, each time the frees that follow quarter its `used` in the group (heap.c sets
 *     group_lo there to a quarter of used, at least 2: the free path's regroup test, so a
 *     drain purges a superblock about log4(capacity / fullness_groups) times, and one going
 *     back and forth across that bound is not walked twice before it quarters again; at
 *     half, a drain walked the free lists twice as often for 0.43 of the spike, not 0.45).
 *     Done by this file's heap observer, installed only under purge_holes = on, so the
 *     heap's paths gain nothing where it is off.
 *   - by a sweep (holes_sweep, below): a heap whose free purged holes above is
 *     listed, and a period later -- max(500 ms, purge_delay, or decay_ms under decay) --
 *     the sweep purges the holes of its lowest groups' superblocks freed into since their
 *     last hole purge (their holes_used), and lists it again if it found one, so the sweep
 *     follows the frees while they go on and stops once they stop. Without it the frees
 *     after the last quartering kept their pages for good once the threads went idle: the
 *     spread survivors held 0.69 of the spike where the units allow about 0.5. Done by the
 *     purge thread, which purge_holes starts whatever `purge` says (purge_thread = off: by
 *     the timed policies' ticks only), taking each heap by trylock (busy: the next sweep).
 *     At 100 ms, the next burst (whose frees list the heaps again) ran at 0.64 of
 *     purge = off's speed, at 500 ms at 1.18 (spread, 3 repetitions, medians).
 *   - by hoardlab_collect, in every superblock of every heap and shard, with MADV_DONTNEED
 *     (holes an earlier MADV_FREE made advised again), whatever the timing.
 * Not bounded by `retain`: a hole is no parked superblock, and taking it back costs a page
 * fault per page, not a superblock's worth. Counted in purged_bytes and hole_purged_bytes (a
 * gauge: units given back and not yet taken back by malloc).
 *
 * The thread. One per process, for the timed policies, the untimed ones with a budget (the
 * ranges wait), hole purging and other layers' sweeps (hl_purge_every: cache = cpu's idle
 * CPUs, the TLABs' scavenge, retain_counts = free's count), started lazily by the first
 * malloc slow path (hl_purge_poll: a refill, a large malloc), never by a free. It runs the
 * ticks' code, tick(NULL): holding no shard's lock, it takes them by trylock as any tick
 * does; it sleeps (a condition variable with a deadline) on a mutex of its own, `rest`,
 * never holding another lock, until `due` (plus the coarse clock's
 * step, so that the clock has reached `due` when it wakes: at most one wake per step, 1-4 ms),
 * or for good while nothing is due. set_due wakes it when `due` moves before its deadline (the
 * first parking after a lull; never a due back at the deadline it keeps: thread_wake). It
 * never allocates: it has no thread id, heap or TLAB, its counters are never summed, and it
 * is no thread of the program's for the statistics or heap selection (the idle CPUs' sweep
 * gives blocks back to their owners' heaps, as a flush does). It blocks every signal (a
 * program's handlers are for its own threads). fork: the child has no thread; it is wanted
 * again there if something is due, and started by the child's next slow path. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include "heap.h"
#include "purge.h"

enum { KEPT = 1, PURGED = 2 };          /* sb->parked */
enum { DECAY_STEPS = 100 };             /* epochs per decay_ms */

/* The timed purges' fields in the header must not push `remote`, and the blocks, a line on. */
_Static_assert(offsetof(struct hl_sb, remote) == 2 * HL_CACHE_LINE, "hl_sb grew a line");

static _Atomic size_t retained;          /* bytes of superblocks parked KEPT */
static _Atomic size_t purged;            /* bytes of superblocks parked PURGED (a gauge) */
static _Atomic size_t ranges_kept;       /* bytes of ranges parked KEPT (large.c's cache) */
static _Atomic size_t ranges_purged;     /* bytes of ranges purged so far (a counter) */

/* Timed purges: all under `lock`, but `due`, read by every tick. */
static hl_lock lock = HL_LOCK_INIT;
static struct hl_sb *oldest, *newest;    /* the KEPT superblocks, in parking order */
/* The KEPT ranges, in parking order: timed or not (untimed, the oldest are purged first). */
static struct hl_purge_range *oldest_range, *newest_range;
static _Atomic uint64_t due = UINT64_MAX;    /* the tick before which nothing falls due, ns */
static uint64_t epoch_start;             /* decay: the current epoch began then (ns) */
static size_t seen;                      /* decay: counted as growth up to here (the excess, or
                                          * the limit of the last epoch if more) */
static size_t backlog[DECAY_STEPS];      /* decay: the excess's growth per epoch, newest last */
/* retain_counts = free: the free bytes held outside the parked lists, as last counted (the
 * thread's count, hl_purge_count_free) */
static _Atomic size_t outside;

static bool timed(void) { return hl_cfg.purge == HL_PURGE_DECAY || hl_cfg.purge_delay > 0; }

/* Kept superblocks are in the list in parking order: timed, or untimed with retain_counts =
 * free, whose budget a count of the free bytes outside can later find exceeded. */
static bool listed(void) { return timed() || hl_cfg.retain_counts == HL_RETAIN_FREE; }

static uint64_t ms_ns(long ms) { return (uint64_t)ms * 1000000u; }

/* Untimed (free or dontneed, purge_delay = 0) with a budget (retain > 0): ranges wait
 * HL_PURGE_RANGE_AGE_MS. With none (retain = 0: keep nothing) a range goes as it parks, as a
 * superblock does. */
static bool ranges_age(void)
{
    return hl_cfg.purge != HL_PURGE_OFF && !timed() && hl_cfg.retain > 0;
}

/* Parked ranges wait before a purge (a timed policy, or ranges_age): never purged as they
 * park. */
static bool ranges_wait(void) { return timed() || ranges_age(); }

/* How long the oldest parked entry waits before a purge (not decay): purge_delay, or, with
 * none, HL_PURGE_RANGE_AGE_MS (untimed, only ranges are in the lists). */
static uint64_t delay_ns(void)
{
    return ms_ns(hl_cfg.purge_delay > 0 ? hl_cfg.purge_delay : HL_PURGE_RANGE_AGE_MS);
}

double hl_purge_decay_curve(double x)
{
    if (x <= 0) return 1;
    if (x >= 1) return 0;
    return 1 - x * x * (3 - 2 * x);
}

/* sb (its shard locked) formatted afresh and its pages given back. */
static void give_back(struct hl_sb *sb)
{
    sb->parked = PURGED;
    atomic_fetch_add_explicit(&purged, hl_sb_size, memory_order_relaxed);
    hl_sb_format(sb, sb->cls);
    uintptr_t from = hl_align_up((uintptr_t)sb + HL_SB_HEADER, HL_PAGE);
    uintptr_t end = (uintptr_t)sb + hl_sb_size;
    if (from < end)     /* a refusal leaves the pages resident: nothing else to undo */
        hl_os_madvise((void *)from, end - from,
                      hl_cfg.purge == HL_PURGE_DONTNEED ? MADV_DONTNEED : MADV_FREE);
}

/* `lock` held, r KEPT: at least `want` bytes of r's pages given back (all: r leaves the list). */
static void give_back_range(struct hl_purge_range *r, size_t want);

/* What `retain` counts: parked superblocks and ranges, and with retain_counts = free the free
 * bytes outside them, as last counted. */
static size_t counted(void)
{
    return atomic_load_explicit(&retained, memory_order_relaxed) +
           atomic_load_explicit(&ranges_kept, memory_order_relaxed) +
           atomic_load_explicit(&outside, memory_order_relaxed);
}

/* What is kept beyond `retain` (more than the parked lists hold when the free bytes outside
 * alone exceed it: purge_oldest then stops at their end). */
static size_t excess(void)
{
    size_t kept = counted();
    return kept > hl_cfg.retain ? kept - hl_cfg.retain : 0;
}

static void unlink_kept(struct hl_sb *sb)
{
    if (sb->purge_prev) sb->purge_prev->purge_next = sb->purge_next;
    else oldest = sb->purge_next;
    if (sb->purge_next) sb->purge_next->purge_prev = sb->purge_prev;
    else newest = sb->purge_prev;
    sb->purge_next = sb->purge_prev = NULL;
    atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
}

/* `lock` held: purge the oldest KEPT superblocks and ranges (the older head of the two
 * lists each time), those parked before `before`, until the excess is at most `limit`. held:
 * a shard the caller holds (else NULL). */
static void purge_oldest(size_t limit, uint64_t before, struct hl_heap *held)
{
    struct hl_sb *sb = oldest;
    struct hl_purge_range *r = oldest_range;
    while (excess() > limit) {
        if (r && (!sb || r->parked_at <= sb->parked_at)) {
            if (r->parked_at > before) break;
            struct hl_purge_range *next = r->next;
            give_back_range(r, excess() - limit);
            r = next;
            continue;
        }
        if (!sb || sb->parked_at > before) break;
        struct hl_sb *next = sb->purge_next;
        /* The owner cannot change: sb leaves its shard only through hl_purge_unpark, which
         * waits for `lock`. */
        struct hl_heap *g = atomic_load_explicit(&sb->owner, memory_order_relaxed);
        if (g == held || hl_trylock(&g->lock)) {
            if (g != held) HL_COUNT_AT(g->acquisitions, 1);
            unlink_kept(sb);
            give_back(sb);
            if (g != held) hl_heap_unlock(g);
        }
        sb = next;
    }
}

/* decay, `lock` held: the excess's growth since the last call enters the backlog in the
 * current epoch (park calls it each time, so growth is dated to its epoch); at a new epoch,
 * the excess beyond what the backlog allows is purged. */
static void decay(uint64_t now, struct hl_heap *held)
{
    uint64_t epoch = ms_ns(hl_cfg.decay_ms) / DECAY_STEPS;
    uint64_t k = (now - epoch_start) / epoch;
    if (k) {
        size_t shift = k < DECAY_STEPS ? (size_t)k : DECAY_STEPS;
        memmove(backlog, backlog + shift, (DECAY_STEPS - shift) * sizeof *backlog);
        memset(backlog + DECAY_STEPS - shift, 0, shift * sizeof *backlog);
        epoch_start += k * epoch;
    }
    size_t e = excess();
    if (e > seen) {
        backlog[DECAY_STEPS - 1] += e - seen;
        seen = e;
    }
    if (!k) return;
    double limit = 0;
    for (size_t i = 0; i < DECAY_STEPS; i++)    /* backlog[i] is DECAY_STEPS-1-i epochs old */
        limit += (double)backlog[i] *
                 hl_purge_decay_curve((double)(DECAY_STEPS - 1 - i) / DECAY_STEPS);
    size_t whole = ((size_t)limit + hl_sb_size - 1) / hl_sb_size * hl_sb_size;
    purge_oldest(whole, UINT64_MAX, held);      /* never below the curve */
    seen = excess() > whole ? excess() : whole;
}

static void thread_wake(uint64_t at);

/* `lock` held: when the next purge can fall due, for the ticks (and the thread) to compare. */
static void set_due(void)
{
    uint64_t at = UINT64_MAX, first = UINT64_MAX;     /* first: the oldest parking */
    if (oldest) first = oldest->parked_at;
    if (oldest_range && oldest_range->parked_at < first) first = oldest_range->parked_at;
    if (excess() && hl_cfg.purge == HL_PURGE_DECAY) {
        /* the next epoch's start after now: epoch_start moves only where decay() runs, and a
         * due in the past, recomputed at every unpark, woke the thread at each */
        uint64_t epoch = ms_ns(hl_cfg.decay_ms) / DECAY_STEPS, now = hl_coarse_ns();
        at = epoch_start + epoch;
        if (at <= now) at += (now - epoch_start) / epoch * epoch;
    } else if (excess() && first != UINT64_MAX)
        at = first + delay_ns();
    atomic_store_explicit(&due, at, memory_order_seq_cst);   /* before the thread's deadline */
    thread_wake(at);
}

/* `lock` held: what is due at `now`. */
static void purge_due(uint64_t now, struct hl_heap *held)
{
    if (hl_cfg.purge == HL_PURGE_DECAY) decay(now, held);
    else if (now >= delay_ns())
        purge_oldest(0, now - delay_ns(), held);
    set_due();
}

/* ---- holes: the observer, the sweep (purge_holes = on) -------------------------------------
 * The heap's side is an observer (no instruction where it is off): heap.c calls it on every
 * move, and hl_heap_holes_bound after a move that sets the bounds (attach: here; regroup:
 * hl_heap_regroup's observed branch). Before a regroup or a detach, a hole comes back if the
 * free list ran dry (the pop that emptied it is the one that regroups; a detached
 * superblock's next owner pops once); a free that moves a superblock into the lowest group
 * purges holes. The heap log's observer, if any, is called after. */
static void (*next_observer)(const struct hl_heap *, const struct hl_sb *, unsigned, unsigned);
static void holes_later(void);

/* sb's holes purged now (its owner locked), as `purge` advises (decay and ownership, which
 * has no purge: MADV_FREE); parked_at, unused while sb is not parked, keeps when. */
static void purge_holes_now(struct hl_sb *sb, uint64_t now)
{
    sb->parked_at = now;
    hl_sb_purge_holes(sb, hl_cfg.purge == HL_PURGE_DONTNEED ? MADV_DONTNEED : MADV_FREE, false);
}

/* The ms a superblock's holes wait between purges at the crossing, and the sweep's period,
 * are at least: purge_delay, or decay_ms under decay. */
static long holes_delay_ms(void)
{
    return hl_cfg.purge == HL_PURGE_DECAY ? hl_cfg.decay_ms : hl_cfg.purge_delay;
}

/* The heaps whose frees purged holes since the last sweep (the purge thread's, below):
 * pushed under the heap's lock, taken whole by the sweep, so no ABA. A heap only its own
 * thread touches (not shared) is never listed: the sweep could not lock it. */
static _Atomic(struct hl_heap *) holes_pending;

static void holes_push(struct hl_heap *h)
{
    struct hl_heap *head = atomic_load_explicit(&holes_pending, memory_order_relaxed);
    do h->holes_next = head;
    while (!atomic_compare_exchange_weak_explicit(&holes_pending, &head, h,
                                                  memory_order_release, memory_order_relaxed));
}

/* purge_holes = on: a free moved sb (its owner h locked) into its lowest fullness group, or
 * quartered its `used` there (again = true): its free pages given back (superblock.c),
 * unless (at the crossing) that was done within max(10 ms, holes_delay_ms). h is listed for
 * the purge thread's sweep: the frees
 * that follow, below the next quartering, would otherwise leave their pages for good once
 * the program's threads go idle (a drain's last quarter). */
static void purge_holes_low(struct hl_heap *h, struct hl_sb *sb, bool again)
{
    long ms = holes_delay_ms();
    uint64_t now = hl_coarse_ns(), gap = ms_ns(ms > 10 ? ms : 10);
    if (sb->parked || (!again && sb->parked_at && sb->parked_at <= now &&
                       now - sb->parked_at < gap))
        return;
    purge_holes_now(sb, now);
    if (h->shared && !h->holes_listed) {
        h->holes_listed = true;
        holes_push(h);
        holes_later();
    }
}

/* The sweep: h locked; true if a superblock of h's lowest groups was freed into since its
 * last hole purge (its holes are purged now). */
static bool holes_sweep_heap(struct hl_heap *h)
{
    bool found = false;
    uint64_t now = hl_coarse_ns();
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (struct hl_sb *sb = h->cls[c].list[0]; sb; sb = sb->next) {
            if (sb->parked || hl_sb_empty(sb) || sb->used >= sb->holes_used) continue;
            purge_holes_now(sb, now);
            found = true;
        }
    return found;
}

/* The heaps listed since the last sweep, each (by trylock) walked: true if a superblock was
 * freed into (a sweep is due again: the frees may go on) or a heap's lock was busy. */
static bool holes_sweep(void)
{
    bool again = false;
    struct hl_heap *h = atomic_exchange_explicit(&holes_pending, NULL, memory_order_acquire);
    while (h) {
        struct hl_heap *next = h->holes_next;
        if (!hl_trylock(&h->lock)) {     /* busy: at the next sweep (still listed) */
            holes_push(h);
            again = true;
        } else {
            HL_COUNT_AT(h->acquisitions, 1);
            if (holes_sweep_heap(h)) {   /* the frees may go on: look again */
                holes_push(h);
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

static void holes_observer(const struct hl_heap *ch, const struct hl_sb *csb, unsigned from,
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
            purge_holes_low(h, sb, from == 0);
    }
    if (next_observer) next_observer(h, sb, from, to);
}

void hl_purge_init(void)
{
    if (hl_cfg.purge_holes && hl_heap_observer != holes_observer) {
        next_observer = hl_heap_observer;
        hl_heap_observer = holes_observer;
    }
}

/* When the sweep of the listed heaps is due (UINT64_MAX: none listed). */
static _Atomic uint64_t holes_due = UINT64_MAX;

/* The sweep's period: half a second, or holes_delay_ms if longer. */
static uint64_t holes_period(void)
{
    long ms = holes_delay_ms();
    return ms_ns(ms > 500 ? ms : 500);
}

/* heap h listed (purge_holes_low): the sweep due a period later, if not sooner. */
static void holes_later(void)
{
    uint64_t at = hl_coarse_ns() + holes_period();
    uint64_t d = atomic_load_explicit(&holes_due, memory_order_relaxed);
    while (at < d)
        if (atomic_compare_exchange_weak_explicit(&holes_due, &d, at, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            thread_wake(at);
            return;
        }
}

/* The one that takes `holes_due` sweeps (the thread, or a timed slow path's tick), holding
 * `lock` (by trylock: busy, it is retried a step later), which fork.c takes
 * after every heap's: a fork never finds the list taken and half swept, which would leave
 * the child with heaps marked listed that no list holds. A large free parking a range waits
 * for it meanwhile. */
static void holes_tick(uint64_t now)
{
    uint64_t d = atomic_load_explicit(&holes_due, memory_order_relaxed);
    if (now < d || !hl_trylock(&lock)) return;
    if (atomic_compare_exchange_strong(&holes_due, &d, UINT64_MAX) && holes_sweep())
        holes_later();
    hl_lock_release(&lock);
}

/* ---- other layers' sweeps (hl_purge_every) ----------------------------------------------- */

enum { EVERY_MAX = 4 };                  /* a TLAB's or a CPU's scavenge, the free count */
static struct every {
    void (*sweep)(void);
    uint64_t period;                     /* ns */
    _Atomic uint64_t due;
} every[EVERY_MAX];
static unsigned nevery;

void hl_purge_every(void (*sweep)(void), long ms)
{
    unsigned i = 0;
    while (i < nevery && every[i].sweep != sweep) i++;     /* (an init again: the same one) */
    if (i == EVERY_MAX) hl_die("internal: more than %d periodic sweeps", EVERY_MAX);
    if (i == nevery) nevery++;
    struct every *e = &every[i];
    e->sweep = sweep;
    e->period = ms_ns(ms);
    atomic_store_explicit(&e->due, hl_coarse_ns() + e->period, memory_order_relaxed);
}

/* The thread only (a sweep may pin it to a CPU), holding no lock: each sweep when due, and
 * its next a period later. */
static void every_tick(uint64_t now)
{
    for (unsigned i = 0; i < nevery; i++) {
        if (now < atomic_load_explicit(&every[i].due, memory_order_relaxed)) continue;
        every[i].sweep();
        atomic_store_explicit(&every[i].due, hl_coarse_ns() + every[i].period,
                              memory_order_relaxed);
    }
}

/* The thread's next deadline: the earliest of them all. */
static uint64_t next_due(void)
{
    uint64_t d = atomic_load_explicit(&due, memory_order_seq_cst);
    uint64_t h = atomic_load_explicit(&holes_due, memory_order_seq_cst);
    if (h < d) d = h;
    for (unsigned i = 0; i < nevery; i++) {
        uint64_t e = atomic_load_explicit(&every[i].due, memory_order_relaxed);
        if (e < d) d = e;
    }
    return d;
}

/* retain_counts = free (the thread's count, every HL_PURGE_COUNT_MS): the free bytes held
 * outside the parked lists are now `bytes`; what their change made due is done. */
void hl_purge_count_free(size_t bytes)
{
    atomic_store_explicit(&outside, bytes, memory_order_relaxed);
    hl_lock_acquire(&lock);
    purge_due(hl_coarse_ns(), NULL);
    hl_lock_release(&lock);
}

static void tick(struct hl_heap *held)
{
    uint64_t now = hl_coarse_ns();
    if (hl_unlikely(hl_cfg.purge_holes) && !held) holes_tick(now);
    if (now < atomic_load_explicit(&due, memory_order_relaxed) || !hl_trylock(&lock)) return;
    purge_due(now, held);                /* (busy: whoever holds `lock` will set `due`) */
    hl_lock_release(&lock);
}

void hl_purge_tick_slow(void) { tick(NULL); }

/* Listed: sb joins the list, and what fell due is done (its shard, locked, is sb's owner). */
static void park_listed(struct hl_sb *sb)
{
    sb->parked = KEPT;
    hl_lock_acquire(&lock);
    atomic_fetch_add_explicit(&retained, hl_sb_size, memory_order_relaxed);
    sb->parked_at = hl_coarse_ns();
    sb->purge_next = NULL;
    if ((sb->purge_prev = newest)) newest->purge_next = sb;
    else oldest = sb;
    newest = sb;
    purge_due(sb->parked_at, atomic_load_explicit(&sb->owner, memory_order_relaxed));
    hl_lock_release(&lock);
}

void hl_purge_park(struct hl_sb *sb)
{
    if (hl_cfg.purge == HL_PURGE_OFF || sb->parked) return;
    if (timed()) {
        park_listed(sb);
        return;
    }
    if (listed()) {      /* untimed, retain_counts = free: kept within it, else as it parks */
        if (counted() + hl_sb_size <= hl_cfg.retain) park_listed(sb);   /* (a racy read: */
        else give_back(sb);                  /* beyond it by a few, they go when aged) */
        return;
    }
    size_t was = atomic_fetch_add_explicit(&retained, hl_sb_size, memory_order_relaxed) +
                 atomic_load_explicit(&ranges_kept, memory_order_relaxed);
    if (was + hl_sb_size <= hl_cfg.retain) {
        sb->parked = KEPT;
        return;
    }
    atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
    give_back(sb);
}

void hl_purge_unpark(struct hl_sb *sb)
{
    bool kept = sb->parked == KEPT;
    if (sb->parked == PURGED)
        atomic_fetch_sub_explicit(&purged, hl_sb_size, memory_order_relaxed);
    sb->parked = 0;
    if (!kept) return;
    if (!listed()) {
        atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
        return;
    }
    hl_lock_acquire(&lock);
    unlink_kept(sb);
    set_due();
    hl_lock_release(&lock);
    tick(atomic_load_explicit(&sb->owner, memory_order_relaxed));   /* the shard it left */
}

size_t hl_purge_retained(void) { return atomic_load_explicit(&retained, memory_order_relaxed); }
size_t hl_purge_purged(void) { return atomic_load_explicit(&purged, memory_order_relaxed); }

/* ---- ranges (large.c's cached mappings) ---------------------------------------------------- */

static void unlink_range(struct hl_purge_range *r)
{
    if (r->prev) r->prev->next = r->next; else oldest_range = r->next;
    if (r->next) r->next->prev = r->prev; else newest_range = r->prev;
    r->next = r->prev = NULL;
    atomic_fetch_sub_explicit(&ranges_kept, r->len, memory_order_relaxed);
}

/* Only the excess goes when it is less than the range (a cache's mapping merged from many
 * freed blocks is one range, and need not be given back whole for one block beyond
 * `retain`), from the end away from the pages freed last; the rest stays kept, as old as it
 * was. */
static void give_back_range(struct hl_purge_range *r, size_t want)
{
    size_t cut = hl_align_up(want, HL_PAGE);
    char *from = r->from;
    if (cut < r->len) {
        if (r->cut_high) from += r->len - cut;
        else r->from += cut;
        r->len -= cut;
        atomic_fetch_sub_explicit(&ranges_kept, cut, memory_order_relaxed);
    } else {
        cut = r->len;
        unlink_range(r);
        r->parked = PURGED;
    }
    atomic_fetch_add_explicit(&ranges_purged, cut, memory_order_relaxed);
    hl_os_madvise(from, cut, hl_cfg.purge == HL_PURGE_DONTNEED ? MADV_DONTNEED : MADV_FREE);
}

void hl_purge_park_range(struct hl_purge_range *r, char *from, size_t len, bool cut_high)
{
    r->parked = 0;
    r->from = from;
    r->cut_high = cut_high;
    r->len = hl_cfg.purge == HL_PURGE_OFF ? 0 : len;     /* 0: not parked */
    if (!r->len) return;
    hl_lock_acquire(&lock);
    r->parked = KEPT;
    r->parked_at = hl_coarse_ns();
    atomic_fetch_add_explicit(&ranges_kept, len, memory_order_relaxed);
    r->next = NULL;
    if ((r->prev = newest_range)) newest_range->next = r;
    else oldest_range = r;
    newest_range = r;
    if (ranges_wait()) purge_due(r->parked_at, NULL);    /* what fell due, not r */
    else purge_oldest(0, UINT64_MAX, NULL);              /* retain = 0: all of it, now */
    hl_lock_release(&lock);
}

bool hl_purge_unpark_range(struct hl_purge_range *r)
{
    if (hl_cfg.purge == HL_PURGE_OFF) return true;   /* never parked */
    /* r's fields are read under `lock`: the purge thread may be cutting r (give_back_range
     * shortens r->len), and a purge of r in progress ends first. */
    hl_lock_acquire(&lock);
    if (!r->len) {                       /* never parked */
        hl_lock_release(&lock);
        return true;
    }
    bool was_purged = r->parked == PURGED;
    if (!was_purged) {
        unlink_range(r);
        if (ranges_wait()) set_due();
    }
    r->parked = 0;
    hl_lock_release(&lock);
    if (!was_purged) hl_purge_tick();    /* a slow path passing by */
    return was_purged;
}

size_t hl_purge_ranges_kept(void) { return atomic_load_explicit(&ranges_kept, memory_order_relaxed); }
size_t hl_purge_ranges_purged(void)
{
    return atomic_load_explicit(&ranges_purged, memory_order_relaxed);
}

/* ---- the thread (purge_thread = on) -------------------------------------------------------- */

_Atomic int hl_purge_thread_state;
static pthread_mutex_t rest = PTHREAD_MUTEX_INITIALIZER;   /* the thread's, and its wakers' */
static pthread_cond_t wake;              /* on CLOCK_MONOTONIC (thread_init) */
/* The thread's deadline while it waits (UINT64_MAX: none), 0 while it is awake or woken. */
static _Atomic uint64_t resting_until;
static uint64_t step;                    /* the coarse clock's resolution, ns */
static _Atomic size_t wakes;             /* hl_purge_thread_wakes */

/* set_due, `lock` held: `due` (stored before) is now at. A wait that ends later than at's own
 * deadline (at plus the step, as the thread sets it) is woken; under `rest`, so the signal
 * cannot fall between the thread's test of `due` and its wait. A due that comes back to the
 * deadline the thread already keeps wakes nobody: when the excess over `retain` comes and
 * goes (a block parked, taken again) while the oldest parking stays, `due` goes to none and
 * back to the same time. Compared without the step, each coming back woke the thread: a
 * futex call and a context switch (largebuf at 2 threads under hoard202607: 3,700 futex
 * calls in 1.6 s and 0.86 [0.75, 0.97] of hoard2026's speed, 25 repetitions; phased at 2
 * threads with purge_delay = 100: 35,000 in 3 s). Nor does a due while the thread's own wait
 * ends within two steps. (With set_due's next epoch for decay and thread_main's precise
 * deadline: phased at 2 threads under decay_ms = 1000 ran with the thread at 0.80 [0.70,
 * 0.91] of its speed without it, and now at 1.03 [0.76, 1.22], 7 repetitions.) */
static void thread_wake(uint64_t at)
{
    uint64_t until = atomic_load_explicit(&resting_until, memory_order_seq_cst);
    if (at >= until || until - at <= step) return;
    if (until <= hl_coarse_ns() + 2 * step) return;        /* it wakes within two steps anyway */
    pthread_mutex_lock(&rest);
    atomic_store_explicit(&resting_until, 0, memory_order_relaxed);   /* one signal is enough */
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&rest);
}

/* Set when the thread reaches its own code: before that, the C library and a sanitizer's
 * runtime start it, and may hold their own allocators' locks (ASan's thread start calls
 * pthread_getattr_np, which callocs); a fork then would leave them held in the child, which
 * hangs at its next malloc of theirs (rel-asan-fork-hoard202607 hung in 3 runs of 12). So
 * fork waits for it (hl_purge_fork). */
static _Atomic bool entered;

static void *thread_main(void *arg)
{
    (void)arg;
    atomic_store_explicit(&entered, true, memory_order_release);
    prctl(PR_SET_NAME, "hoardlab-purge");
    pthread_mutex_lock(&rest);
    for (;;) {
        uint64_t d = next_due(), now = hl_coarse_ns();
        if (d <= now) {
            atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
            pthread_mutex_unlock(&rest);
            tick(NULL);                  /* the slow paths' code; no lock across the sleep */
            every_tick(hl_coarse_ns());
            pthread_mutex_lock(&rest);
            d = next_due();              /* (still due: `lock` was busy; retry a step later) */
        }
        /* At least a step from now by the precise clock, which the coarse one trails (by a
         * step or more): a deadline from the coarse one could have passed already, the wait
         * ended at once, and the thread spun (still due while `lock` was busy; decay_ms =
         * 100, phased at 2 threads: 10,000 waits in 3 s, one every 66 us at times). */
        uint64_t p = hl_now_ns();
        uint64_t until = d == UINT64_MAX ? UINT64_MAX : (d > p ? d : p) + step;
        atomic_store_explicit(&resting_until, until, memory_order_seq_cst);
        if (next_due() != d) continue;                                   /* moved: again */
        if (until == UINT64_MAX) {
            pthread_cond_wait(&wake, &rest);
        } else {
            struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
            pthread_cond_timedwait(&wake, &rest, &ts);
        }
        atomic_fetch_add_explicit(&wakes, 1, memory_order_relaxed);
    }
    return NULL;
}

size_t hl_purge_thread_wakes(void) { return atomic_load_explicit(&wakes, memory_order_relaxed); }

/* The condition variable waits on the clock `due` is read from (the coarse one is the same
 * clock, read at a lower resolution). */
static void thread_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&rest, NULL);
    atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
    struct timespec res;
    step = clock_getres(CLOCK_MONOTONIC_COARSE, &res) ? 4000000u
         : (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
}

/* hl_purge_poll, on a malloc slow path holding no lock of the library: once. pthread_create's
 * own allocations come back here and find the state STARTING. */
void hl_purge_thread_start(void)
{
    int none = HL_PURGE_THREAD_NONE;
    if (!atomic_compare_exchange_strong(&hl_purge_thread_state, &none,
                                        HL_PURGE_THREAD_STARTING))
        return;
    bool work = ranges_wait() || hl_cfg.purge_holes || nevery;
    if (!hl_cfg.purge_thread || !work) {
        atomic_store(&hl_purge_thread_state, HL_PURGE_THREAD_UNUSED);
        return;
    }
    thread_init();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread starts with every signal blocked */
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&t, &a, thread_main, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* Refused (EAGAIN: a thread limit): the slow paths' ticks go on alone. */
    atomic_store(&hl_purge_thread_state, err ? HL_PURGE_THREAD_FAILED : HL_PURGE_THREAD_RUNNING);
    if (err && hl_cfg.verbose) hl_say("purge_thread: no thread (error %d): purges on slow paths", err);
}

void hl_purge_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        /* a thread being started: until it runs its own code (`entered`) */
        for (int st; ((st = atomic_load(&hl_purge_thread_state)) == HL_PURGE_THREAD_STARTING ||
                      st == HL_PURGE_THREAD_RUNNING) && !atomic_load(&entered); )
            sched_yield();
        hl_lock_take(&lock);
    } else if (phase == HL_FORK_PARENT) {
        hl_lock_release(&lock);
    } else {
        hl_lock_init(&lock);
        atomic_store_explicit(&entered, false, memory_order_relaxed);
        /* The thread did not come along: the child's first malloc slow path starts its own. */
        if (atomic_load_explicit(&hl_purge_thread_state, memory_order_relaxed) ==
            HL_PURGE_THREAD_RUNNING)
            atomic_store_explicit(&hl_purge_thread_state, HL_PURGE_THREAD_NONE,
                                  memory_order_relaxed);
        atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
    }
}

/* ---- hoardlab_collect: every parked superblock purged now ---------------------------------- */

/* hoardlab_collect (api.c): every empty superblock in the global heap's shards (n of them)
 * purged now, kept or not -- within `retain`, a timed purge not yet due, and under purge =
 * off, where nothing parks, the empty ones as they are -- and those an earlier MADV_FREE
 * purged given back for good: MADV_DONTNEED whatever `purge` says, since a program that asks
 * wants the pages gone from its RSS now (jemalloc's arena.<i>.purge, mimalloc's
 * mi_collect(true)). Each shard's lock in turn, then `lock` as a parking takes them. The
 * bytes newly purged (they count in purged_bytes; the re-advised ones already did). */
size_t hl_purge_all(struct hl_heap *const *shards, unsigned n)
{
    size_t bytes = 0;
    for (unsigned k = 0; k < n; k++) {
        struct hl_heap *g = shards[k];
        hl_heap_lock(g);
        for (unsigned c = 0; c < hl_classes->count; c++) {
            /* (a lone superblock that empties stays in the lowest group: heap.c's set_bounds) */
            for (unsigned l = 0; l <= HL_LIST_EMPTY; l++)
            for (struct hl_sb *sb = g->cls[c].list[l]; sb; sb = sb->next) {
                if (!hl_sb_empty(sb)) continue;
                if (sb->parked == KEPT) {
                    if (listed()) {
                        hl_lock_acquire(&lock);
                        unlink_kept(sb);
                        set_due();
                        hl_lock_release(&lock);
                    } else {
                        atomic_fetch_sub_explicit(&retained, hl_sb_size, memory_order_relaxed);
                    }
                }
                if (sb->parked != PURGED) {
                    sb->parked = PURGED;
                    atomic_fetch_add_explicit(&purged, hl_sb_size, memory_order_relaxed);
                    hl_sb_format(sb, sb->cls);
                    bytes += hl_sb_size;
                }
                uintptr_t from = hl_align_up((uintptr_t)sb + HL_SB_HEADER, HL_PAGE);
                if (from < (uintptr_t)sb + hl_sb_size)
                    hl_os_madvise((void *)from, (uintptr_t)sb + hl_sb_size - from, MADV_DONTNEED);
            }
        }
        bytes += hl_purge_heap_holes(g);     /* purge_holes: the ones with blocks too */
        hl_heap_unlock(g);
    }
    return bytes;
}

/* ---- holes (purge_holes) --------------------------------------------------------------------- */

size_t hl_purge_heap_holes(struct hl_heap *h)
{
    size_t bytes = 0;
    if (!hl_cfg.purge_holes) return 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (unsigned l = 0; l < HL_LIST_FULL; l++)       /* the partly used ones */
            for (struct hl_sb *sb = h->cls[c].list[l]; sb; sb = sb->next)
                if (!hl_sb_empty(sb)) bytes += hl_sb_purge_holes(sb, MADV_DONTNEED, true);
    return bytes;
}
