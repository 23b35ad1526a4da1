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
 *     (tlab_bins.c) and hoardlab_stats adds (hl_tlab_unseen); with stats_batch = 0 the fast
 *     paths count U themselves (the `exact` build).
 *   - Ownership: a block enters a TLAB on free only while the TLAB's heap owns its
 *     superblock (but for tlab_foreign = adopt and tlab_sb_cache.c); the owner may change
 *     while it sits there, so giving back re-reads the owner under its lock.
 *   - Only the owner thread writes its bins, with plain loads and stores, but for the purge
 *     thread under the guard of tlab_scavenge.c (the guarded fast paths: hl_tlab_enter).
 *   - Runs of remote frees taken whole (tlab_remote.c) are read only when malloc hands their
 *     blocks out; they wait in a bin's spare chain, which counts in its room.
 *   - A thread's bins are set up at its first call that would use them, given back at its
 *     exit (later calls bypass the TLAB), and pooled; in a fork's child only the forking
 *     thread's TLAB survives (the others' blocks stay counted in use: a bounded leak). */
#ifndef HL_TLAB_H
#define HL_TLAB_H

#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* ---- tlab_bins.c: a TLAB's layout and what the TLAB's files share of it (tlab_bins.c
 * defines the shared state): tlab.c, the TLAB, and its keys' files, tlab_sb_cache.c,
 * tlab_scavenge.c, tlab_adaptive.h, tlab_remote.c, which use nothing of tlab.c (they are
 * below it: tools/hoardlab layers). Each has its section of this header, the TLAB's face.
 *
 * A TLAB is a struct hl_tlab, then its bins (one per class, then the bypass bin), then their
 * spares, one per class (struct hl_tlab_spare): a second chain the slow paths keep out of the
 * fast paths' way (runs of remote frees taken whole: tlab_remote.c), and `seen`, the bin's
 * room when U last counted it. Invariants:
 *   - only the owner writes its bins and spares, or the purge thread holding the TLAB's guard
 *     with its stop set (tlab_scavenge.c);
 *   - a bin's room counts the blocks of its spare chain too: room = limit - (head's blocks +
 *     the spare's n);
 *   - a slow path that changes a bin's room other than by the program's malloc or free (a
 *     refill, a give-back, runs taken whole, a new limit) moves `seen` with it
 *     (hl_tlab_move_uncounted), so U never counts it; the block a slow path hands out or
 *     takes back it counts itself (hl_stats_malloc, hl_stats_free).
 * The helpers are inline, as when the TLAB was one file: tools/hoardlab cost counts the slow
 * halves in its remote column. */

/* The superblock cache's entries (tlab_sb_cache.c), in a TLAB's header. */
struct hl_tlab_sbc {
    uintptr_t sb;                        /* the superblock's address; 0: empty */
    uintptr_t slot;                      /* its tlab_slot when filled */
};
#define HL_TLAB_SBC_MAX 64               /* tlab_sb_cache's largest value */
_Static_assert(sizeof(struct hl_tlab_sbc) == 16, "hl_tlab_sbc_shift: log2 S - 4");
/* Written by its thread only (stats.h's HL_OWN_ADD and HL_OWN_SET: plain adds in memory);
 * hl_tlab_bytes reads `room` of other threads' bins with relaxed atomic loads, a gauge that
 * may be one call old. */
struct hl_tlab_bin {
    void *head;                          /* free blocks of the class, linked */
    int32_t room;                        /* blocks it may still take: limit - blocks held
                                          * (on head, and in tlab_bins.c's spare chain) */
    uint32_t limit;                      /* tlab_budget / class size */
};

/* A thread's TLAB: this header, then its bins (hl_classes->count of them). */
struct hl_tlab {
    struct hl_tlab_sbc sbc[HL_TLAB_SBC_MAX];   /* tlab_sb_cache.c: first tlab_sb_cache used */
    uint64_t sbc_gen;                    /* hl_sb_generation when the entries were good */
    struct hl_tlab *next, *prev;         /* tlab_bins.c: live TLABs (doubly linked), or the pool */
    size_t budget;                       /* tlab_adaptive.h: bytes per class now */
    size_t limit_bytes;                  /* tlab_adaptive.h: what the bins' limits hold in all */
    uint32_t slow;                       /* tlab_adaptive.h: slow paths taken */
    /* Scavenging (tlab_scavenge.c): the owner's hl_me.tlab_in; the purge thread's last look
     * at the bins' room (folded); the lock of the slow halves and the purge thread. */
    uint32_t *in;
    uint64_t seen_rooms;
    hl_lock guard;
    /* The fast paths leave for the slow half while it is set (tlab_scavenge.c). */
    uint32_t stop;
    /* The heap the bins refill from and give back to (the thread's, re-read at each batch);
     * a block enters the TLAB only if this heap owns its superblock. Just before the bins. */
    struct hl_heap *heap;
};

_Static_assert(sizeof(struct hl_tlab_bin) == HL_CACHE_BIN_BYTES, "superblock.h's tlab_slot");

static inline struct hl_tlab_bin *hl_tlab_bin_at(struct hl_tlab_bin *bins, size_t slot)
{
    return (struct hl_tlab_bin *)((char *)bins + slot);
}
static inline struct hl_tlab *hl_tlab_of(struct hl_tlab_bin *bins)
{
    return (struct hl_tlab *)bins - 1;
}

typedef void hl_tlab_free_fn(void *p, struct hl_sb *sb);
/* The slow half of the free of p, a block of sb (tlab.h), for a block whose superblock the
 * TLAB's heap does not own, set at start (tlab.c): under remote_free = batch (tlab_foreign =
 * home) tlab.c's path straight to the remote cache, else hl_tlab_free_slow; with
 * tlab_sb_cache the superblock cache's lookup in front (tlab_sb_cache.c: an entry lets it
 * into the bin); with scavenging the guard around it all (tlab.c). */
extern hl_tlab_free_fn *hl_tlab_free_other;

struct hl_tlab_spare { void *head; uint32_t n; int32_t seen; };

static inline struct hl_tlab_spare *hl_tlab_spares(struct hl_tlab_bin *bins)
{
    return (struct hl_tlab_spare *)(bins + hl_classes->count + 1);
}
static inline struct hl_tlab_bin *hl_tlab_bins_of(struct hl_tlab *t)
{
    return (struct hl_tlab_bin *)(t + 1);
}

/* Threads without bins of their own point at these (cache.h's hl_tlab_none): heap NULL, no
 * blocks, limit 0, so both fast paths leave at once. Never written. */
struct hl_tlab_none { struct hl_tlab t; struct hl_tlab_bin bin[HL_MAX_CLASSES + 1]; };
extern struct hl_tlab_none hl_tlab_none_tlab;

static inline struct hl_tlab *hl_tlab_mine(void) { return hl_tlab_of(hl_me.tlab_bins); }
/* The calling thread has bins of its own (NULL: before its first slow call, interpose.c's
 * ready). */
static inline bool hl_tlab_own_bins(void)
{
    return hl_me.tlab_bins && hl_me.tlab_bins != hl_tlab_none_tlab.bin;
}

extern uint32_t hl_tlab_limit[HL_MAX_CLASSES];   /* tlab_budget / class size: the start */
extern size_t hl_tlab_limit_bytes;               /* what those limits hold in all, in bytes */
/* The live TLABs (doubly linked), under hl_tlab_reg_lock: a leaf lock, nothing else is taken
 * while it is held (hl_meta_alloc runs outside it). */
extern hl_lock hl_tlab_reg_lock;
extern struct hl_tlab *hl_tlab_live;
/* The fast paths leave U to the bins' room (refill.h's hl_cache_u_left), fixed at start. */
extern bool hl_tlab_u_by_bins;

static inline uint32_t hl_tlab_limit_of(size_t budget, unsigned c)
{
    size_t n = budget / hl_class_size(c);
    return n > INT32_MAX ? INT32_MAX : (uint32_t)n;          /* room is signed */
}

/* What the program did with bin c since U last saw it (the fast paths' malloc and free, each
 * a block of room), in bytes; the bin is marked seen. */
static inline int64_t hl_tlab_take_unseen(struct hl_tlab_bin *bins, unsigned c)
{
    int32_t *seen = &hl_tlab_spares(bins)[c].seen, was = *seen;
    HL_OWN_SET(*seen, bins[c].room);
    return (int64_t)(bins[c].room - was) * (int64_t)hl_class_size(c);
}
/* U counts it at the start of the bin's slow paths (marked seen before the shift, which may
 * publish, and publishing counts the thread's unseen bins: hl_tlab_unseen). */
static inline void hl_tlab_publish_unseen(struct hl_tlab_bin *bins, unsigned c)
{
    if (hl_tlab_u_by_bins) hl_stats_shift(hl_tlab_take_unseen(bins, c));
}
/* The slow paths' change of bin c's room by n blocks, which U does not count. */
static inline void hl_tlab_move_uncounted(struct hl_tlab_bin *bins, unsigned c, int32_t n)
{
    HL_OWN_ADD(bins[c].room, n);
    HL_OWN_ADD(hl_tlab_spares(bins)[c].seen, n);
}

/* What the bins hold beyond `keep` blocks of each class (floor: a sixteenth of the start;
 * else none) back to h, their blocks to their superblocks' current owners (tlab_bins.c).
 * mine: the owner's call, which has U see each bin first. */
void hl_tlab_give_back_beyond(struct hl_tlab_bin *bin, struct hl_heap *h, bool floor,
                              bool mine);

/* ---- tlab_sb_cache.c: the TLAB's superblock cache (key tlab_sb_cache = N ways; Hoard
 * #123): entry (sb / S) mod N holds a superblock the bins last refilled from or flushed
 * into, and its tlab_slot, so that a free whose superblock the TLAB's heap no longer owns
 * (hoard moved it to the global heap, another heap took it) may still enter the bin. Kept by
 * the slow halves only: the fast free tests the owner as without the cache, and a block of
 * another heap leaves it for hl_tlab_free_other, which tlab_sb_cache.c puts the lookup in
 * front of. docs/hoard2026.md says what it costs and what it no longer does.
 *
 * Invariants: an entry is good only under the hl_sb_generation it was filed under (a
 * superblock that changes class or becomes interior moves it: the entries are dropped where
 * they are next read or filled), and only for the heap the TLAB had when it was filed (the
 * entries are dropped when the TLAB's heap changes: tlab.c's heap_now, or a TLAB taken from
 * the pool). A block let in is out of its superblock whoever owns it, as tlab_foreign =
 * adopt's are; giving back re-reads the owner. The inline parts are the slow halves' (the
 * fill), built into tlab.c as before the split (tools/hoardlab cost). */

/* An entry's byte offset is (sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask: log2 S - 4 and
 * (tlab_sb_cache - 1) x 16, so the lookup does no scaling. */
extern unsigned hl_tlab_sbc_shift;
extern uintptr_t hl_tlab_sbc_mask;

/* The entries are struct hl_tlab_sbc, in a TLAB's header (tlab_bins.c). At the TLAB's
 * start: the key checked, the mask and shift set, and with tlab_sb_cache > 0 the lookup put
 * in front of hl_tlab_free_other. */
void hl_tlab_sb_cache_start(void);

/* The entries of sbc (a TLAB's first HL_TLAB_SBC_MAX), their generation *gen: dropped, the
 * generation seen now gen. */
static inline void hl_tlab_sb_cache_reset(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen,
                                          uint64_t gen)
{
    for (uintptr_t i = 0; i <= hl_tlab_sbc_mask / sizeof sbc[0]; i++) sbc[i].sb = 0;
    *sbc_gen = gen;
}
/* sb's entry. */
static inline struct hl_tlab_sbc *hl_tlab_sb_cache_entry(struct hl_tlab_sbc *sbc,
                                                         const struct hl_sb *sb)
{
    return (struct hl_tlab_sbc *)((char *)sbc +
                                  (((uintptr_t)sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask));
}
/* The entries are good if the generation has not moved since they were filed; else they are
 * dropped (and filed under the new one). The acquire: a slot read after it is no older. */
static inline bool hl_tlab_sb_cache_current(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen)
{
    uint64_t gen = atomic_load_explicit(&hl_sb_generation, memory_order_acquire);
    if (hl_likely(*sbc_gen == gen)) return true;
    hl_tlab_sb_cache_reset(sbc, sbc_gen, gen);
    return false;
}
/* A refill or a flush of the calling thread's bins used sb, which the TLAB's heap owned: its
 * entry now. Filed under the generation read before the slot, so a change after it drops the
 * entry at its next use. */
static inline void hl_tlab_sb_cache_fill(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen,
                                         struct hl_sb *sb)
{
    hl_tlab_sb_cache_current(sbc, sbc_gen);
    struct hl_tlab_sbc *e = hl_tlab_sb_cache_entry(sbc, sb);
    if (e->sb == (uintptr_t)sb) return;
    e->sb = (uintptr_t)sb;
    e->slot = HL_WORD_LOAD(sb->tlab_slot);
    HL_COUNT(tlab_sb_fills, 1);
}

/* ---- tlab_scavenge.c: scavenging idle threads' TLABs (key tlab_scavenge_ms > 0): the owner's
 * side, which every slow half that touches its bins takes (the TLAB's guard), and the start
 * of the purge thread's side (tlab_scavenge.c). docs/hoard2026.md tells the protocol whole.
 *
 * Invariants: only the owner touches its bins, with plain loads and stores, unless the purge
 * thread holds the TLAB's guard, has set its `stop`, has run membarrier, and then read the
 * owner's tlab_in as 0; every guarded fast path stores 1 in tlab_in before it tests `stop`
 * (tlab.h's hl_tlab_enter), and every slow half that touches the bins holds the guard,
 * taken once however deep they nest (a slow half that starts the purge thread mallocs again
 * inside it: pthread_create). tlab.c's setup takes the guard of bins it sets up before
 * another thread can find them. */

/* tlab_scavenge_ms > 0 and membarrier registered: the fast paths are the guarded ones. */
extern bool hl_tlab_scavenging;
extern HL_TLS unsigned hl_tlab_guard_depth;
extern HL_TLS struct hl_tlab *hl_tlab_guarded;   /* whose guard the calling thread holds */

static inline void hl_tlab_scavenge_enter(void)
{
    if (hl_tlab_scavenging && hl_tlab_guard_depth++ == 0 && hl_tlab_own_bins()) {
        hl_tlab_guarded = hl_tlab_mine();
        hl_lock_take(&hl_tlab_guarded->guard);
    }
}
static inline void hl_tlab_scavenge_leave(void)
{
    if (hl_tlab_scavenging && --hl_tlab_guard_depth == 0 && hl_tlab_guarded) {
        hl_lock_release(&hl_tlab_guarded->guard);
        hl_tlab_guarded = NULL;
    }
}

/* At the TLAB's start: true when scavenging is on (membarrier's expedited command
 * registered for the process, else said once and left off), the sweep registered with the
 * purge thread; tlab.c then installs the guarded paths. */
bool hl_tlab_scavenge_start(void);
/* HL_FORK_*, first and last of all (the front's fork_outer, fronts.c): the forking thread's
 * guard, which the purge thread may hold while it takes heaps' locks. */
void hl_tlab_scavenge_fork(int phase);

/* ---- tlab_remote.c: the remote-run side of the TLAB: what the owner's bins do
 * with the remote frees its heap collects: runs taken whole into the bins' spare chains
 * (the freeing side's shortcut under remote_free = batch is tlab.c's). remote.h has both
 * sides of remote frees; docs/hoard2026.md the measurements behind the order runs go in.
 *
 * Invariants: a run taken leaves remote_pending but stays counted in its superblock's `used`
 * and its heap's u, as every block in a TLAB is; a bin takes a run only while a free still
 * fits after it (room - 1), and nobody reads a taken block's link until malloc hands it out;
 * the bins are written by their owner only, so taking runs needs no lock. */

/* At the TLAB's start: whether collections return runs (remote_free = list without
 * free_lists = sharded, or batch). */
void hl_tlab_remote_start(void);

/* The runs of a chain (remote.h) that h's inbox returned into the calling thread's bins, when
 * its TLAB fills from h; returns the runs (and rests of cut runs) they did not take, linked
 * as they came, for hl_remote_settle under h's lock. Writes the bins only. */
void *hl_tlab_remote_take_runs(struct hl_heap *h, void *runs);
/* h (locked, the TLAB's heap) collects its pending remote frees (remote.h): the lists and
 * runs the calling thread's bins hold go into them whole, the rest back into their
 * superblocks. The TLAB's refill calls it. */
void hl_tlab_remote_collect(struct hl_heap *h);

/* ---- tlab.c: the TLAB itself: its fast halves (inline, built in tlab.c for every row), its
 * slow halves, the gauge and its front. */


/* The calling thread's bins are hl_me.tlab_bins (base.h), just after its struct hl_tlab: one
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
/* The free of p, a block of sb, that the fast path leaves (hl_tlab_free_fn: tlab_bins.c): */
hl_tlab_free_fn hl_tlab_free_slow;
/* The same holding the TLAB's guard, for the guarded fast paths (tlab_scavenge.c), so that
 * the others' slow halves test nothing for it. */
void *hl_tlab_malloc_slow_guarded(size_t size);
hl_tlab_free_fn hl_tlab_free_slow_guarded;
/* hl_tlab_free_other (tlab_bins.c): the slow half of a block of another heap. */

/* Scavenging (tlab_scavenge.c): the calling thread enters a fast path of bins (1 in
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
