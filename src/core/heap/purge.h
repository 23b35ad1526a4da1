/* purge.h — returning the pages of hoard's parked empty superblocks to the OS (the later
 * Hoard's #99 and #116, jemalloc's decay and background thread, mimalloc's purge delay; keys
 * `purge`, `retain`, `decay_ms`, `purge_delay`, `purge_thread`): purge.c says how and when. */
#ifndef HL_PURGE_H
#define HL_PURGE_H

#include "superblock.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

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

/* Parked ranges: large.c's cached free mappings, whose pages that may be resident,
 * [from, from + len), are kept, aged and purged beside the parked superblocks, by the same
 * policy and clock, sharing `retain` (purge.c says how). The record lives in the mapping's
 * first page, which is never purged. Its fields are purge.c's, under its lock, while parked;
 * a purge of part of the range narrows [from, from + len) (what may still be resident). */
struct hl_purge_range {
    struct hl_purge_range *next, *prev;  /* in the list of ranges kept unpurged, oldest first */
    uint64_t parked_at;                  /* ns, CLOCK_MONOTONIC_COARSE */
    char *from;                          /* the pages that may be resident */
    size_t len;                          /* 0: not parked */
    uint8_t parked;                      /* kept or purged */
    bool cut_high;                       /* a purge of part of it takes its high end first */
};
/* Untimed (purge = free | dontneed, purge_delay = 0) with retain > 0, a range waits this long
 * before it may be purged (purge.c, "Ranges"); with retain = 0 it goes as it parks. */
enum { HL_PURGE_RANGE_AGE_MS = 500 };
/* r's pages [from, from + len) enter the cache (its lock held, never purge.c's or a shard's):
 * kept while `retain` has room, else purged, the oldest ranges first, when due (delay,
 * decay; untimed, once parked HL_PURGE_RANGE_AGE_MS, or as it parks if retain = 0). cut_high: the pages freed
 * last are at its low end, so a purge of part of it starts at the high end (else the low). */
void hl_purge_park_range(struct hl_purge_range *r, char *from, size_t len, bool cut_high);
/* r leaves the cache (its lock held), before anyone writes its pages: true if they were
 * purged meanwhile (or never parked). Waits for a purge of r in progress. */
bool hl_purge_unpark_range(struct hl_purge_range *r);
size_t hl_purge_ranges_kept(void);       /* bytes of parked ranges kept unpurged now */
size_t hl_purge_ranges_purged(void);     /* bytes of ranges purged so far (a counter) */

/* Timed purges: do what has fallen due. Called by slow paths holding no shard lock (a heap's
 * refill); park and unpark do the same themselves. Not on a fast path: a clock read. */
void hl_purge_tick_slow(void);
static inline void hl_purge_tick(void)
{
    if (hl_unlikely(hl_cfg.purge_delay > 0 || hl_cfg.purge == HL_PURGE_DECAY))
        hl_purge_tick_slow();
}

/* purge_thread = on: the timed purges' background thread (purge.c), started by the first
 * malloc slow path that holds no lock of the library (hl_purge_poll: pthread_create
 * allocates, so neither under a heap's lock nor in malloc's bootstrap), whether or not
 * anything is parked yet: a program's frees park superblocks (a drain) and may then leave
 * the threads idle, so the thread must be there before, and a free may not start it, since
 * the C library frees with its own locks held (a dead thread's TLS blocks under the stack
 * cache's lock, which pthread_create takes: a free that started the thread there deadlocked
 * the thread churn under decay). One load and a branch once decided (running, failed, or
 * not used: purge_thread = off, or nothing for it to do: no timed purge, no untimed one
 * with a budget, no hole purging, no hl_purge_every). */
enum { HL_PURGE_THREAD_NONE, HL_PURGE_THREAD_STARTING, HL_PURGE_THREAD_RUNNING,
       HL_PURGE_THREAD_FAILED, HL_PURGE_THREAD_UNUSED };
extern _Atomic int hl_purge_thread_state;
void hl_purge_thread_start(void);
/* How many times the thread has woken so far (a signal or its deadline): test_purge's count. */
size_t hl_purge_thread_wakes(void);
static inline void hl_purge_poll(void)
{
    if (hl_unlikely(atomic_load_explicit(&hl_purge_thread_state, memory_order_relaxed) ==
                    HL_PURGE_THREAD_NONE))
        hl_purge_thread_start();
}

/* purge = decay: the fraction of bytes parked at once that may stay unpurged x = t / decay_ms
 * later: 1 - smoothstep(x) = 1 - (3x^2 - 2x^3) on [0, 1], 1 before, 0 after (purge.c). */
double hl_purge_decay_curve(double x);

void hl_purge_fork(int phase);           /* fork.c: the timed purges' lock, and the thread */
/* hoardlab_collect: every empty superblock in the n shards of the global heap purged now with
 * MADV_DONTNEED, whatever the policy and its timing; the bytes newly purged (purge.c). */
size_t hl_purge_all(struct hl_heap *const *shards, unsigned n);

struct hl_heap;
/* hoardlab_collect, h locked: every partly used superblock's free pages given back with
 * MADV_DONTNEED (and its earlier holes advised again); the bytes newly given back. 0 under
 * purge_holes = off. */
size_t hl_purge_heap_holes(struct hl_heap *h);
/* After config and hl_heap_init: purge_holes = on installs the heap observer that purges
 * holes (purge.c says when), before the heap log's if any. */
void hl_purge_init(void);
/* Another layer's periodic work for the thread alone (cache = cpu's idle CPUs, cpucache.c:
 * it pins the thread to a CPU, which no program thread's slow path may do): sweep() every
 * `ms`, from the thread's start to the process's end; registered before the first malloc
 * slow path, it starts the thread (unless purge_thread = off). A few may be registered (a
 * front's scavenge, the free count); one registered again keeps its place. */
void hl_purge_every(void (*sweep)(void), long ms);
/* retain_counts = free: the free bytes the heaps, TLABs and caches hold outside the parked
 * lists, counted by the layer that sees them all (fronts.c) with hl_purge_every, every
 * HL_PURGE_COUNT_MS; `retain` bounds them with the parked ones, and what is parked beyond it
 * now is purged when due (untimed: once parked HL_PURGE_RANGE_AGE_MS). */
enum { HL_PURGE_COUNT_MS = 100 };
void hl_purge_count_free(size_t bytes);

#pragma GCC visibility pop

#endif
