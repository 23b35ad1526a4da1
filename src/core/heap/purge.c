/* purge.c — `purge`, `retain`, `retain_counts`, `decay_ms` and `purge_delay`: what happens to
 * an empty superblock parked in hoard's global heap (the later Hoard's #99 and #116,
 * jemalloc's decay, mimalloc's purge delay, as knobs); ranges.c parks large.c's cached
 * mappings beside them, by the same policy and clock.
 *
 *   purge = off       kept as it is (the paper; hoard2026).
 *   purge = free      its blocks' pages given back with madvise(MADV_FREE).
 *   purge = dontneed  madvise(MADV_DONTNEED): gone at once; the next touch maps a zero page.
 *   purge = decay     MADV_FREE, along a curve in time: bytes that park at time 0 may stay
 *                     unpurged at t only up to E(0) (1 - s(t / decay_ms)), s the smoothstep
 *                     3x^2 - 2x^3 (hl_purge_decay_curve), counted in DECAY_STEPS epochs.
 * Up to `retain` bytes (of parked superblocks and ranges; with retain_counts = free, of every
 * free byte held, as the ticker's count last found them: `outside`) are never purged; the
 * excess is purged as it parks (free or dontneed, purge_delay = 0), once it has stayed
 * parked purge_delay ms, oldest first, or as the decay curve no longer allows it. The timed
 * purges fall due with the clock (CLOCK_MONOTONIC_COARSE) and are done by the slow paths that
 * pass by (hl_purge_tick: a parking, a refill, a large malloc or free) and by the ticker
 * (ticker.c, key purge_thread), which this file registers with when something here
 * waits (ranges_wait).
 *
 * Invariants:
 *   - A purged superblock is formatted afresh first (its free list lived in the pages given
 *     back); its header page stays; it stays in the global heap, mapped and counted in A (so
 *     with purge on, RSS may be below A by the purged pages).
 *   - A superblock parks and leaves under its shard's lock. Listed ones (timed, or
 *     retain_counts = free) are also in one list in parking order under hl_parked_lock,
 *     taken under a shard's lock (park, unpark), a heap's (refill) or the large cache's
 *     (ranges); a due purge holds hl_parked_lock and takes the shard of the superblock it
 *     purges with a trylock only (busy: the next tick), so no lock is ever waited for in the
 *     reverse order. fork.c takes hl_parked_lock after every heap's and the large cache's.
 *   - A superblock taken back cuts the excess, not the decay backlog, and one parked again
 *     while the excess is within what the curve allowed at the last epoch is no new growth
 *     (jemalloc's nunpurged = max(limit, current)).
 * docs/hoard2026.md ("Purging parked memory: how it was decided") has the full account and
 * the measurements behind each rule. */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include "heap.h"
#include "holes.h"
#include "purge.h"
#include "ticker.h"

enum { KEPT = HL_PARKED_KEPT, PURGED = HL_PARKED_PURGED };     /* sb->parked */
enum { DECAY_STEPS = 100 };             /* epochs per decay_ms */

/* The timed purges' fields in the header must not push `remote`, and the blocks, a line on. */
_Static_assert(offsetof(struct hl_sb, remote) == 2 * HL_CACHE_LINE, "hl_sb grew a line");

static _Atomic size_t retained;          /* bytes of superblocks parked KEPT */
static _Atomic size_t purged;            /* bytes of superblocks parked PURGED (a gauge) */

/* Timed purges: all under hl_parked_lock (parked.c), but `due`, read by every tick. */
static struct hl_sb *oldest, *newest;    /* the KEPT superblocks, in parking order */
static _Atomic uint64_t due = UINT64_MAX;    /* the tick before which nothing falls due, ns */
static uint64_t epoch_start;             /* decay: the current epoch began then (ns) */
static size_t seen;                      /* decay: counted as growth up to here (the excess, or
                                          * the limit of the last epoch if more) */
static size_t backlog[DECAY_STEPS];      /* decay: the excess's growth per epoch, newest last */
/* retain_counts = free: the free bytes held outside the parked lists, as last counted (on
 * the ticker: hl_purge_count_free) */
static _Atomic size_t outside;

static bool timed(void) { return hl_cfg.purge == HL_PURGE_DECAY || hl_cfg.purge_delay > 0; }

/* Kept superblocks are in the list in parking order: timed, or untimed with retain_counts =
 * free, whose budget a count of the free bytes outside can later find exceeded. */
static bool listed(void) { return timed() || hl_cfg.retain_counts == HL_RETAIN_FREE; }

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
    return hl_ms_ns(hl_cfg.purge_delay > 0 ? hl_cfg.purge_delay : HL_PURGE_RANGE_AGE_MS);
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

/* What `retain` counts: parked superblocks and ranges, and with retain_counts = free the free
 * bytes outside them, as last counted. */
static size_t counted(void)
{
    return atomic_load_explicit(&retained, memory_order_relaxed) +
           hl_purge_ranges_kept() +
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

/* hl_parked_lock held: purge the oldest KEPT superblocks and ranges (the older head of the
 * two lists each time), those parked before `before`, until the excess is at most `limit`. held:
 * a shard the caller holds (else NULL). */
static void purge_oldest(size_t limit, uint64_t before, struct hl_heap *held)
{
    struct hl_sb *sb = oldest;
    struct hl_purge_range *r = hl_ranges_oldest();
    while (excess() > limit) {
        if (r && (!sb || r->parked_at <= sb->parked_at)) {
            if (r->parked_at > before) break;
            struct hl_purge_range *next = r->next;
            hl_ranges_give_back(r, excess() - limit);
            r = next;
            continue;
        }
        if (!sb || sb->parked_at > before) break;
        struct hl_sb *next = sb->purge_next;
        /* The owner cannot change: sb leaves its shard only through hl_purge_unpark, which
         * waits for hl_parked_lock. */
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

/* decay, hl_parked_lock held: the excess's growth since the last call enters the backlog in
 * the current epoch (park calls it each time, so growth is dated to its epoch); at a new epoch,
 * the excess beyond what the backlog allows is purged. */
static void decay(uint64_t now, struct hl_heap *held)
{
    uint64_t epoch = hl_ms_ns(hl_cfg.decay_ms) / DECAY_STEPS;
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

/* hl_parked_lock held: when the next purge can fall due, for the ticks (and the ticker) to
 * compare. */
static void set_due(void)
{
    uint64_t at = UINT64_MAX, first = UINT64_MAX;     /* first: the oldest parking */
    struct hl_purge_range *r = hl_ranges_oldest();
    if (oldest) first = oldest->parked_at;
    if (r && r->parked_at < first) first = r->parked_at;
    if (excess() && hl_cfg.purge == HL_PURGE_DECAY) {
        /* the next epoch's start after now: epoch_start moves only where decay() runs, and a
         * due in the past, recomputed at every unpark, woke the thread at each */
        uint64_t epoch = hl_ms_ns(hl_cfg.decay_ms) / DECAY_STEPS, now = hl_coarse_ns();
        at = epoch_start + epoch;
        if (at <= now) at += (now - epoch_start) / epoch * epoch;
    } else if (excess() && first != UINT64_MAX)
        at = first + delay_ns();
    atomic_store_explicit(&due, at, memory_order_seq_cst);   /* before the thread's deadline */
    hl_ticker_wake(at);
}

/* hl_parked_lock held: what is due at `now`. */
static void purge_due(uint64_t now, struct hl_heap *held)
{
    if (hl_cfg.purge == HL_PURGE_DECAY) decay(now, held);
    else if (now >= delay_ns())
        purge_oldest(0, now - delay_ns(), held);
    set_due();
}

/* retain_counts = free (fronts.c's count_free, every HL_PURGE_COUNT_MS on the ticker): the free
 * bytes held outside the parked lists are now `bytes`; what their change made due is done. */
void hl_purge_count_free(size_t bytes)
{
    atomic_store_explicit(&outside, bytes, memory_order_relaxed);
    hl_lock_acquire(&hl_parked_lock);
    purge_due(hl_coarse_ns(), NULL);
    hl_lock_release(&hl_parked_lock);
}

/* The parked lists' part of a tick: what is due, if hl_parked_lock is free (busy: whoever
 * holds it will set `due`). */
static void tick_due(uint64_t now, struct hl_heap *held)
{
    if (now < atomic_load_explicit(&due, memory_order_relaxed) ||
        !hl_trylock(&hl_parked_lock))
        return;
    purge_due(now, held);
    hl_lock_release(&hl_parked_lock);
}

/* A slow path's tick: hole purging's sweep first (holding no shard's lock), then the lists. */
static void tick(struct hl_heap *held)
{
    uint64_t now = hl_coarse_ns();
    if (hl_unlikely(hl_cfg.purge_holes) && !held) hl_holes_tick(now);
    tick_due(now, held);
}

void hl_purge_tick_slow(void) { tick(NULL); }

/* Listed: sb joins the list, and what fell due is done (its shard, locked, is sb's owner). */
static void park_listed(struct hl_sb *sb)
{
    sb->parked = KEPT;
    hl_lock_acquire(&hl_parked_lock);
    atomic_fetch_add_explicit(&retained, hl_sb_size, memory_order_relaxed);
    sb->parked_at = hl_coarse_ns();
    sb->purge_next = NULL;
    if ((sb->purge_prev = newest)) newest->purge_next = sb;
    else oldest = sb;
    newest = sb;
    purge_due(sb->parked_at, atomic_load_explicit(&sb->owner, memory_order_relaxed));
    hl_lock_release(&hl_parked_lock);
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
                 hl_purge_ranges_kept();
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
    hl_lock_acquire(&hl_parked_lock);
    unlink_kept(sb);
    set_due();
    hl_lock_release(&hl_parked_lock);
    tick(atomic_load_explicit(&sb->owner, memory_order_relaxed));   /* the shard it left */
}

size_t hl_purge_retained(void) { return atomic_load_explicit(&retained, memory_order_relaxed); }
size_t hl_purge_purged(void) { return atomic_load_explicit(&purged, memory_order_relaxed); }

/* ---- ranges (large.c's cached mappings; ranges.c keeps them) ------------------------------ */

void hl_purge_park_range(struct hl_purge_range *r, char *from, size_t len, bool cut_high)
{
    r->parked = 0;
    r->from = from;
    r->cut_high = cut_high;
    r->len = hl_cfg.purge == HL_PURGE_OFF ? 0 : len;     /* 0: not parked */
    if (!r->len) return;
    hl_lock_acquire(&hl_parked_lock);
    hl_ranges_keep(r);
    if (ranges_wait()) purge_due(r->parked_at, NULL);    /* what fell due, not r */
    else purge_oldest(0, UINT64_MAX, NULL);              /* retain = 0: all of it, now */
    hl_lock_release(&hl_parked_lock);
}

bool hl_purge_unpark_range(struct hl_purge_range *r)
{
    if (hl_cfg.purge == HL_PURGE_OFF) return true;   /* never parked */
    /* r's fields are read under the lock: the ticker may be cutting r (hl_ranges_give_back
     * shortens r->len), and a purge of r in progress ends first. */
    hl_lock_acquire(&hl_parked_lock);
    if (!r->len) {                       /* never parked */
        hl_lock_release(&hl_parked_lock);
        return true;
    }
    bool was_purged = r->parked == PURGED;
    if (!was_purged) {
        hl_ranges_unlink(r);
        if (ranges_wait()) set_due();
    }
    r->parked = 0;
    hl_lock_release(&hl_parked_lock);
    if (!was_purged) hl_purge_tick();    /* a slow path passing by */
    return was_purged;
}

/* ---- the ticker ---------------------------------------------------------------------------- */

/* The ticker's watch of `due`: the lists' part of a tick (hole purging has its own watch). */
static void ticker_run(void) { tick_due(hl_coarse_ns(), NULL); }

void hl_purge_init(void)
{
    hl_holes_init();                     /* first: its sweep ticks before the lists, as a slow
                                          * path's tick does */
    if (ranges_wait()) hl_ticker_watch(&due, ticker_run);
}

/* ---- hoardlab_collect: every parked superblock purged now ---------------------------------- */

/* hoardlab_collect (front/collect.c): every empty superblock in the global heap's shards (n of
 * them) purged now, kept or not -- within `retain`, a timed purge not yet due, and under purge
 * = off, where nothing parks, the empty ones as they are -- and those an earlier MADV_FREE
 * purged given back for good: MADV_DONTNEED whatever `purge` says, since a program that asks
 * wants the pages gone from its RSS now (jemalloc's arena.<i>.purge, mimalloc's
 * mi_collect(true)). Each shard's lock in turn, then hl_parked_lock as a parking takes them.
 * The bytes newly purged (they count in purged_bytes; the re-advised ones already did). */
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
                        hl_lock_acquire(&hl_parked_lock);
                        unlink_kept(sb);
                        set_due();
                        hl_lock_release(&hl_parked_lock);
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
        bytes += hl_holes_collect(g);     /* purge_holes: the ones with blocks too */
        hl_heap_unlock(g);
    }
    return bytes;
}

