/* purge.h — returning the pages of hoard's parked empty superblocks to the OS (the later
 * Hoard's #99 and #116, jemalloc's decay, mimalloc's purge delay; keys `purge`, `retain`,
 * `retain_counts`, `decay_ms`, `purge_delay`): purge.c says how and when. Beside them,
 * large.c's cached mappings, parked as ranges (ranges.c), under one lock (parked.c); the
 * holes of used superblocks are holes.h's. */
#ifndef HL_PURGE_H
#define HL_PURGE_H

#include "mem.h"
#include "ticker.h"                     /* the timer purge and the fronts register with */

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* sb, empty, is now in the global heap (its shard locked): kept as it is while the retained
 * bytes allow, else formatted afresh and its blocks' pages purged, now or (timed: purge =
 * decay, or purge_delay > 0) on a later slow path. Once per parking. */
void hl_purge_park(struct hl_sb *sb);
/* sb leaves the global heap (its shard locked, sb->owner still that shard): out of the
 * retained bytes, if it was in. Anything that takes a parked superblock out of a shard must
 * call it. */
void hl_purge_unpark(struct hl_sb *sb);
size_t hl_purge_retained(void);          /* bytes of parked superblocks kept unpurged */
size_t hl_purge_purged(void);            /* bytes of parked superblocks purged */

/* ---- ranges.c: large.c's cached mappings, parked ---------------------------------------- */

/* Parked ranges: large.c's cached free mappings, whose pages that may be resident,
 * [from, from + len), are kept, aged and purged beside the parked superblocks, by the same
 * policy and clock, sharing `retain` (ranges.c says how). The record lives in the mapping's
 * first page, which is never purged. Its fields are ranges.c's, under the parked lists' lock,
 * while parked; a purge of part of the range narrows [from, from + len) (what may still be
 * resident). */
struct hl_purge_range {
    struct hl_purge_range *next, *prev;  /* in the list of ranges kept unpurged, oldest first */
    uint64_t parked_at;                  /* ns, CLOCK_MONOTONIC_COARSE */
    char *from;                          /* the pages that may be resident */
    size_t len;                          /* 0: not parked */
    uint8_t parked;                      /* kept or purged */
    bool cut_high;                       /* a purge of part of it takes its high end first */
};
/* Untimed (purge = free | dontneed, purge_delay = 0) with retain > 0, a range waits this long
 * before it may be purged (ranges.c); with retain = 0 it goes as it parks. */
enum { HL_PURGE_RANGE_AGE_MS = 500 };
/* purge.c: r's pages [from, from + len) enter the cache (its lock held, never the parked
 * lists' or a shard's): kept while `retain` has room, else purged, the oldest ranges first,
 * when due (delay, decay; untimed, once parked HL_PURGE_RANGE_AGE_MS, or as it parks if
 * retain = 0). cut_high: the pages freed last are at its low end, so a purge of part of it
 * starts at the high end (else the low). */
void hl_purge_park_range(struct hl_purge_range *r, char *from, size_t len, bool cut_high);
/* r leaves the cache (its lock held), before anyone writes its pages: true if they were
 * purged meanwhile (or never parked). Waits for a purge of r in progress. */
bool hl_purge_unpark_range(struct hl_purge_range *r);
size_t hl_purge_ranges_kept(void);       /* bytes of parked ranges kept unpurged now */
size_t hl_purge_ranges_purged(void);     /* bytes of ranges purged so far (a counter) */

/* The list, for purge.c only, hl_parked_lock held (ranges.c): */
void hl_ranges_keep(struct hl_purge_range *r);     /* r (from, len set) parked KEPT, now */
void hl_ranges_unlink(struct hl_purge_range *r);   /* r KEPT leaves the list */
struct hl_purge_range *hl_ranges_oldest(void);     /* the oldest range kept, or NULL */
/* r KEPT: at least `want` bytes of its pages given back (all: r leaves the list, PURGED). */
void hl_ranges_give_back(struct hl_purge_range *r, size_t want);

/* ---- purge.c -------------------------------------------------------------------------- */

/* Timed purges: do what has fallen due. Called by slow paths holding no shard lock (a heap's
 * refill); park and unpark do the same themselves. Not on a fast path: a clock read. */
void hl_purge_tick_slow(void);
static inline void hl_purge_tick(void)
{
    if (hl_unlikely(hl_cfg.purge_delay > 0 || hl_cfg.purge == HL_PURGE_DECAY))
        hl_purge_tick_slow();
}

/* purge = decay: the fraction of bytes parked at once that may stay unpurged x = t / decay_ms
 * later: 1 - smoothstep(x) = 1 - (3x^2 - 2x^3) on [0, 1], 1 before, 0 after (purge.c). */
double hl_purge_decay_curve(double x);

/* hoardlab_collect: every empty superblock in the n shards of the global heap purged now with
 * MADV_DONTNEED, whatever the policy and its timing; the bytes newly purged (purge.c). */
size_t hl_purge_all(struct hl_heap *const *shards, unsigned n);

/* After config and hl_heap_init: hole purging's init (holes.h), and, when a parked entry can
 * wait for a purge (timed, or ranges aged), the watch the ticker (ticker.h) runs. */
void hl_purge_init(void);
/* retain_counts = free: the free bytes the heaps, TLABs and caches hold outside the parked
 * lists, counted by the layer that sees them all (fronts.c) with hl_ticker_every, every
 * HL_PURGE_COUNT_MS; `retain` bounds them with the parked ones, and what is parked beyond it
 * now is purged when due (untimed: once parked HL_PURGE_RANGE_AGE_MS). */
enum { HL_PURGE_COUNT_MS = 100 };
void hl_purge_count_free(size_t bytes);

/* ---- parked.c: what the purge's files share -------------------------------------------- */

enum { HL_PARKED_KEPT = 1, HL_PARKED_PURGED = 2 };     /* sb->parked, r->parked */

/* The parked lists' lock: purge.c's superblocks and ranges.c's ranges are listed and purged
 * under it; holes.c's sweep holds it. Taken under a shard's lock or the large cache's, never
 * the reverse. */
extern hl_lock hl_parked_lock;
void hl_parked_fork(int phase);          /* fork.c: after every heap's and the large cache's */

static inline uint64_t hl_ms_ns(long ms) { return (uint64_t)ms * 1000000u; }

#pragma GCC visibility pop

#endif
