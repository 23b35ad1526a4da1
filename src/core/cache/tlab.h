/* tlab.h — thread-local allocation buffers (tlab.c): per thread and size class, a short list
 * of free blocks in front of the thread's heap, so that the common malloc and free take no
 * lock and touch no shared line (the 2026 Hoard's TLAB, key `tlab`; cache = thread in
 * fronts.c's table). docs/hoard2026.md ("The TLAB, file by file") tells the whole design:
 * accounting, ownership, remote runs, threads and fork, scavenging.
 *
 * A bin holds blocks linked through their first word and counts them as the room left (so
 * the fast paths test it against zero); its limit, in blocks, is tlab_budget / class size at
 * the start (0: the class bypasses the TLAB; tlab_adaptive.h may grow it). malloc pops, free
 * pushes while there is room; an empty bin refills from the heap (refill.h) and a full one
 * gives a batch back, each under one lock acquisition.
 *
 * Invariants a reader must keep:
 *   - Accounting: a block in a TLAB is free memory to U but in use to its heap (u) and its
 *     superblock (`used`), so u >= U by at most the TLABs' bytes (hl_tlab_bytes). With
 *     counting = on and stats_batch > 0 the fast paths leave U to the bins' room: what U has
 *     not seen of a bin is (room - seen) x class size, which the slow paths publish
 *     (tlab_bins.h) and hoardlab_stats adds (hl_tlab_unseen); with stats_batch = 0 the fast
 *     paths count U themselves (the `exact` build).
 *   - Ownership: a block enters a TLAB on free only while the TLAB's heap owns its
 *     superblock (but for tlab_foreign = adopt and tlab_sb_cache.h); the owner may change
 *     while it sits there, so giving back re-reads the owner under its lock.
 *   - Only the owner thread writes its bins, with plain loads and stores, but for the purge
 *     thread under tlab_scavenge.h's protocol (the guarded fast paths: hl_tlab_enter).
 *   - Runs of remote frees taken whole (tlab_remote.h) are read only when malloc hands their
 *     blocks out; they wait in a bin's spare chain, which counts in its room.
 *   - A thread's bins are set up at its first call that would use them, given back at its
 *     exit (later calls bypass the TLAB), and pooled; in a fork's child only the forking
 *     thread's TLAB survives (the others' blocks stay counted in use: a bounded leak). */
#ifndef HL_TLAB_H
#define HL_TLAB_H

#include "tlab_bins.h"
#include "tlab_remote.h"
#include "tlab_sb_cache.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* The calling thread's bins are hl_me.tlab_bins (hl.h), just after its struct hl_tlab: one
 * per class, then the bypass bin (limit 0: superblock.h's tlab_slot of an interior
 * superblock points there). Until the thread sets up its own, hl_tlab_none: a shared array
 * with heap NULL, no blocks and limit 0, so the fast paths need no NULL test and never
 * write it. */
/* The byte offset of the class's bin (hl_cache_slot) for a request of (n + 15) / 16 granules:
 * the class table's, scaled, so the fast path does no multiplication. */
extern const uint16_t *hl_tlab_slot16;

/* The slow halves, out of line; the row behind the TLAB (its refill, its after-free policy,
 * its own paths: cache.h) is the one the front's start kept. The heap to use is the caller's,
 * through hl_heap_mine. */
void *hl_tlab_malloc_slow(size_t size);
/* The free of p, a block of sb, that the fast path leaves (hl_tlab_free_fn: tlab_bins.h): */
hl_tlab_free_fn hl_tlab_free_slow;
/* The same holding the TLAB's guard, for the guarded fast paths (tlab_scavenge.h), so that
 * the others' slow halves test nothing for it. */
void *hl_tlab_malloc_slow_guarded(size_t size);
hl_tlab_free_fn hl_tlab_free_slow_guarded;
/* hl_tlab_free_other (tlab_bins.h): the slow half of a block of another heap. */

/* Scavenging (tlab_scavenge.h): the calling thread enters a fast path of bins (1 in
 * tlab_in, then the test of their TLAB's stop: false, leave for the slow half), and leaves
 * it. The barrier keeps the compiler from moving the test above the store; the purge
 * thread's membarrier keeps the CPU from it. The release: the bins' stores before it are
 * seen by the purge thread that reads 0 (and by ThreadSanitizer, which knows nothing of
 * membarrier, as ordered). */
static inline __attribute__((always_inline)) bool hl_tlab_enter(struct hl_tlab_bin *bins)
{
    __atomic_store_n(&hl_me.tlab_in, 1, __ATOMIC_RELAXED);
    atomic_signal_fence(memory_order_seq_cst);
    if (hl_likely(!__atomic_load_n(&hl_tlab_of(bins)->stop, __ATOMIC_ACQUIRE))) return true;
    __atomic_store_n(&hl_me.tlab_in, 0, __ATOMIC_RELEASE);
    return false;
}
static inline __attribute__((always_inline)) void hl_tlab_leave(void)
{
    __atomic_store_n(&hl_me.tlab_in, 0, __ATOMIC_RELEASE);
}

/* Both fast paths take `exact` and `counted` last (built three ways in tlab.c: uncounted,
 * counted, and counted with exact = true), and `guarded` before them (each way built again
 * for tlab_scavenge_ms), malloc `prefetch` first (each way built again with it:
 * tlab_prefetch). Counted, they count the call; exact, U as well
 * (else the bin's room is U's record: Accounting, at the top). The slow halves and the row's own
 * paths always count.
 *
 * malloc of a block of class c = hl_class_of(size): the bin's first block, else the slow half,
 * which refills the bin from the thread's heap (the row's refill when the heap has no room),
 * or, for a thread without a TLAB, calls the row's own malloc. */
static inline __attribute__((always_inline)) void *hl_tlab_malloc(size_t size, bool exact,
                                                                  bool prefetch, bool guarded,
                                                                  bool counted)
{
    /* Exact, the class is needed for its size, and the table of classes gives both; else
     * the bin's offset comes straight from its own table (one instruction fewer). Its index
     * (size + 15) / 16 is written ((size - 1) >> 4) + 1 (equal for size >= 1), which reuses
     * the entry's size - 1 (entry.h). */
    exact = exact && counted;
    size_t g = ((size - 1) >> 4) + 1;
    size_t c = exact ? hl_classes->of16[g] : 0;
    struct hl_tlab_bin *bins = hl_me.tlab_bins;
    if (guarded && hl_unlikely(!hl_tlab_enter(bins))) return hl_tlab_malloc_slow_guarded(size);
    struct hl_tlab_bin *b = exact ? &bins[c] : hl_tlab_bin_at(bins, hl_tlab_slot16[g]);
    void *p = b->head;
    if (hl_unlikely(!p)) {
        if (!guarded) return hl_tlab_malloc_slow(size);
        hl_tlab_leave();
        return hl_tlab_malloc_slow_guarded(size);
    }
    void *next = *(void **)p;
    b->head = next;
    /* tlab_prefetch: the next malloc's block, which another core may have written last (a
     * remote free's link), is on its way here while the caller uses this one. */
    if (prefetch) hl_prefetch_write(next);
    HL_OWN_ADD(b->room, 1);
    if (guarded) hl_tlab_leave();
    if (exact) return hl_stats_malloc(p, hl_class_size(c));
    HL_COUNT_IF(counted, mallocs, 1);
    return p;
}

/* free: into the bin while the block's superblock is the TLAB's heap's and the bin is under
 * its limit (never the bypass bin's, 0); else the slow half: set up the bins, give a batch
 * back, or the row's own free (a block of another heap, a memalign'd inner pointer, a thread
 * without a TLAB), a block of another heap through hl_tlab_free_other (which, with
 * tlab_sb_cache, looks in the superblock cache first). No validation: p must be what
 * malloc returned (C's rule). A thread's heap, not hl_me.heap: a thread without bins
 * (teardown, tlab = off) fails the owner test and never writes the shared array. */
static inline __attribute__((always_inline)) void hl_tlab_free(void *p, bool exact,
                                                               bool guarded, bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_tlab_bin *bins = hl_me.tlab_bins;
    if (hl_unlikely(atomic_load_explicit(&sb->owner, memory_order_relaxed) !=
                    hl_tlab_of(bins)->heap)) {
        hl_tlab_free_other(p, sb);
        return;
    }
    if (guarded && hl_unlikely(!hl_tlab_enter(bins))) {
        hl_tlab_free_slow_guarded(p, sb);
        return;
    }
    struct hl_tlab_bin *b = hl_tlab_bin_at(bins, HL_WORD_LOAD(sb->tlab_slot));
    if (hl_likely(HL_OWN_ADD(b->room, -1) >= 0)) {
        *(void **)p = b->head;
        b->head = p;
        if (guarded) hl_tlab_leave();
        if (exact && counted) hl_stats_free(sb->size);
        else HL_COUNT_IF(counted, frees, 1);
        return;
    }
    HL_OWN_SET(b->room, 0);              /* it was: full, the class bypasses the TLAB, or
                                          * sb is interior (the bypass bin) */
    if (!guarded) {
        hl_tlab_free_slow(p, sb);
        return;
    }
    hl_tlab_leave();
    hl_tlab_free_slow_guarded(p, sb);
}


/* A thread exits: every block of its TLAB back to its superblock's current owner (and the
 * row's hl_heap_after_free), then its bins to the pool. Later calls of that thread (TLS
 * teardown) bypass the TLAB. */
void hl_tlab_thread_exit(void);
/* hoardlab_collect: every block of the calling thread's TLAB given back as at its exit, its
 * bins kept, their limits back at their start (tlab_adaptive). Nothing without bins. */
void hl_tlab_flush(void);
size_t hl_tlab_bytes(void);             /* free bytes in every live thread's TLAB */
/* What U has not seen of the bins (Accounting, at the top), in bytes: stats.c's
 * hl_stats_unseen_fn. */
int64_t hl_tlab_unseen(bool mine);
void hl_tlab_fork(int phase);           /* HL_FORK_*: the registry of TLABs */
bool hl_tlab_prefetch_on(void);         /* tlab_prefetch.c: malloc prefetches (tlab_prefetch) */

/* The TLAB as a front (cache.h's struct hl_front, fronts.c's table, cache = thread): its
 * start builds nothing (its paths were built once in tlab.c for every row) but returns the
 * one that counting, stats_batch, tlab_scavenge_ms and tlab_prefetch ask for, and keeps the
 * row. */
extern const struct hl_front hl_tlab_front;

#pragma GCC visibility pop

#endif
