/* tlab.h — thread-local allocation buffers (tlab.c): per thread and size class, a short list
 * of free blocks in front of the thread's heap, so that the common malloc and free take no
 * lock and touch no shared line (the 2026 Hoard's TLAB, key `tlab`).
 *
 * A bin holds blocks linked through their first word and counts them (as the room left, so
 * the fast paths test it against zero); its limit, in blocks, is tlab_budget / class size,
 * fixed at init (0: the class bypasses the TLAB). malloc pops,
 * free pushes while the count is under the limit; an empty bin refills from the heap and a
 * full one gives half back, each a batch under one lock acquisition.
 *
 * Accounting. A block in a TLAB is free memory: U counts it when the program gets it and
 * uncounts it when the program frees it into the TLAB; A does not change. The bin's room
 * already moves by one block each way, so the fast paths leave U to it (counting = on with
 * stats_batch > 0): what U has not yet seen of a bin is (room - seen) x class size, which
 * its slow paths publish (tlab.c's see) and hoardlab_stats adds for every bin (hl_tlab_unseen),
 * so U read is exact and its peak, taken at publication, exact to within what the threads'
 * bins hold. With stats_batch = 0 (U exact at every call) the fast paths count U themselves
 * (the `exact` build, hl_stats_malloc / hl_stats_free). The heap it came from, though, still
 * counts it in u (and its superblock in `used`): it is out of its superblock. So u >= U, by
 * at most the threads' TLAB bytes, which the `tlab_bytes` gauge reports (hl_tlab_bytes).
 *
 * Ownership. A block enters a TLAB on free only while its superblock's owner is the freeing
 * thread's heap; the owner may change while it sits there (hoard moves superblocks to the
 * global heap under the owner's lock), so giving blocks back re-reads the owner under its
 * lock (hl_heap_lock_owner) and frees each block to the heap that owns it then.
 *
 * Remote frees (remote_free = list). When the thread's heap collects a superblock's list of
 * blocks other threads freed, while the thread fills its TLAB from that heap, the bin of the
 * list's class may take the list whole, unwalked (tlab.c's take_runs): as its chain if
 * empty, else as a second, spare chain that its next slow path uses without a lock, else in
 * front of its chain; a list longer than the bin's room is cut there (walked up to the cut),
 * its first part taken, the rest settled as before. The blocks were out of their superblock
 * while pending and stay so in the TLAB: `used` and u do not change, and nobody reads a
 * block's link until malloc hands it out. Under remote_free = batch the same goes for each
 * run of one superblock's blocks in a message, which the malloc slow path takes from the
 * heap's inbox without the heap's lock (inbox.c's hl_remote_drain).
 *
 * Threads. A thread's bins are set up on its first free or malloc that would use them (state
 * 1 only), given back when it exits (hl_tlab_thread_exit, after which its calls bypass the
 * TLAB), and pooled for the next thread. Fork: the forking thread's TLAB survives in the child;
 * other threads' TLABs are dropped there, and the free blocks they held stay counted in use in
 * their heaps for good (a bounded leak: at most tlab_budget per class per such thread).
 *
 * Scavenging (tlab_scavenge_ms > 0). A thread that stops calling malloc keeps its bins' blocks
 * until it calls again, and only the owner may touch its bins, which its fast paths change
 * with plain loads and stores. So the purge thread asks it to keep out: every fast path
 * (built again for it: `guarded`) stores 1 in the thread's hl_me.tlab_in, then tests its
 * TLAB's `stop`, and leaves for the slow half if set; it stores 0 when done. The slow halves
 * hold the TLAB's `guard` lock instead. The purge thread takes `guard` of each TLAB whose bins'
 * room did not move since its last sweep, sets their `stop`, then calls membarrier once
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED: each thread of the process runs a full barrier), and
 * reads each owner's tlab_in: 0 there means the owner is outside its fast paths and will see
 * `stop` at its next (the barrier orders the owner's store before its test, which a plain
 * store and load do not: store-load is the one order x86 does not keep), so the bins are the
 * purge thread's until it clears `stop`; 1 means the owner is inside one, and that TLAB waits
 * for the next sweep. Without the barrier each fast path would need a locked instruction; with
 * it, two stores and a test. */
#ifndef HL_TLAB_H
#define HL_TLAB_H

#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* Written by its thread only (stats.h's HL_OWN_ADD and HL_OWN_SET: plain adds in memory);
 * hl_tlab_bytes reads `room` of other threads' bins with relaxed atomic loads, a gauge that
 * may be one call old. */
struct hl_tlab_bin {
    void *head;                          /* free blocks of the class, linked */
    int32_t room;                        /* blocks it may still take: limit - blocks held
                                          * (on head, and in tlab.c's spare chain) */
    uint32_t limit;                      /* tlab_budget / class size */
};

/* The superblock cache (tlab_sb_cache = N ways; Hoard #95, #123), kept by the slow halves
 * only, so that the pair costs what it costs without it (issue 49: the lookup on every free
 * cost 10 instructions a pair, tools/hoardlab cost). Entry (sb / S) mod N holds a superblock
 * the bins last refilled from or flushed into (tlab.c's sbc_fill), and its tlab_slot. The
 * fast free tests the owner as without the cache; a block whose superblock the TLAB's heap
 * no longer owns (hoard moved it to the global heap, another heap took it) leaves the fast
 * path, and there an entry for its superblock lets it into the bin still (sbc_push), as
 * tlab_foreign = adopt's blocks enter (a block in a TLAB is out of its superblock whoever
 * owns it; giving back re-reads the owner), where without the cache it goes to the owner.
 * An entry goes stale when the superblock changes class or becomes interior
 * (hl_sb_generation moves: the entries are dropped where they are next read or filled) or
 * when the TLAB's heap changes (dropped then). What the cache no longer does: spare the
 * free the read of the superblock's header (docs/hoard2026.md says why). */
struct hl_tlab_sbc {
    uintptr_t sb;                        /* the superblock's address; 0: empty */
    uintptr_t slot;                      /* its tlab_slot when filled */
};
#define HL_TLAB_SBC_MAX 64               /* tlab_sb_cache's largest value */
/* An entry's byte offset is (sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask: log2 S - 4 and
 * (tlab_sb_cache - 1) x 16, so the lookup does no scaling. */
extern unsigned hl_tlab_sbc_shift;
extern uintptr_t hl_tlab_sbc_mask;

/* A thread's TLAB: this header, then its bins (hl_classes->count of them). */
struct hl_tlab {
    struct hl_tlab_sbc sbc[HL_TLAB_SBC_MAX];   /* tlab_sb_cache: first tlab_sb_cache used */
    uint64_t sbc_gen;                    /* hl_sb_generation when the entries were good */
    struct hl_tlab *next, *prev;         /* tlab.c: live TLABs (doubly linked), or the pool */
    size_t budget;                       /* tlab_adaptive: bytes per class now */
    size_t limit_bytes;                  /* tlab_adaptive: what the bins' limits hold in all */
    uint32_t slow;                       /* tlab_adaptive: slow paths taken */
    /* Scavenging (above): the owner's hl_me.tlab_in; the purge thread's last look at the
     * bins' room (folded); the lock of the slow halves and the purge thread. */
    uint32_t *in;
    uint64_t seen_rooms;
    hl_lock guard;
    /* The fast paths leave for the slow half while it is set (scavenging). */
    uint32_t stop;
    /* The heap the bins refill from and give back to (the thread's, re-read at each batch);
     * a block enters the TLAB only if this heap owns its superblock. Just before the bins. */
    struct hl_heap *heap;
};

_Static_assert(sizeof(struct hl_tlab_sbc) == 16, "hl_tlab_sbc_shift: log2 S - 4");
_Static_assert(sizeof(struct hl_tlab_bin) == HL_CACHE_BIN_BYTES, "superblock.h's tlab_slot");

/* The calling thread's bins are hl_me.tlab_bins (hl.h), just after its struct hl_tlab: one
 * per class, then the bypass bin (limit 0: superblock.h's tlab_slot of an interior
 * superblock points there). Until the thread sets up its own, hl_tlab_none: a shared array
 * with heap NULL, no blocks and limit 0, so the fast paths need no NULL test and never
 * write it. */
/* The byte offset of the class's bin (hl_cache_slot) for a request of (n + 15) / 16 granules:
 * the class table's, scaled, so the fast path does no multiplication. */
extern const uint16_t *hl_tlab_slot16;
static inline struct hl_tlab_bin *hl_tlab_bin_at(struct hl_tlab_bin *bins, size_t slot)
{
    return (struct hl_tlab_bin *)((char *)bins + slot);
}
static inline struct hl_tlab *hl_tlab_of(struct hl_tlab_bin *bins)
{
    return (struct hl_tlab *)bins - 1;
}

/* The slow halves, out of line; the row behind the TLAB (its refill, its after-free policy,
 * its own paths: cache.h) is the one hl_tlab_start kept. The heap to use is the caller's,
 * through hl_heap_mine. */
void *hl_tlab_malloc_slow(size_t size);
/* The free of p, a block of sb, that the fast path leaves: */
typedef void hl_tlab_free_fn(void *p, struct hl_sb *sb);
hl_tlab_free_fn hl_tlab_free_slow;
/* The same holding the TLAB's guard, for the guarded fast paths (Scavenging above), so that
 * the others' slow halves test nothing for it. */
void *hl_tlab_malloc_slow_guarded(size_t size);
hl_tlab_free_fn hl_tlab_free_slow_guarded;
/* the same for a block whose superblock the TLAB's heap does not own: with tlab_sb_cache,
 * the superblock cache first (an entry lets it into the bin); then under remote_free = batch
 * (tlab_foreign = home) tlab.c's path straight to the remote cache, else hl_tlab_free_slow;
 * set at init (hl_tlab_start). */
extern hl_tlab_free_fn *hl_tlab_free_other;

/* Scavenging (above): the calling thread enters a fast path of bins (1 in tlab_in, then the
 * test of their TLAB's stop: false, leave for the slow half), and leaves it. The barrier
 * keeps the compiler from moving the test above the store; the purge thread's membarrier
 * keeps the CPU from it. The release: the bins' stores before it are seen by the purge thread
 * that reads 0 (and by ThreadSanitizer, which knows nothing of membarrier, as ordered). */
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
 * (else the bin's room is U's record: Accounting above). The slow halves and the row's own
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

/* h (locked, the TLAB's heap) collects its pending remote frees (remote.h): the lists and
 * runs the calling thread's bins hold go into them whole, the rest back into their
 * superblocks. The TLAB's malloc slow path calls it. */
void hl_tlab_collect(struct hl_heap *h);

/* A thread exits: every block of its TLAB back to its superblock's current owner (and the
 * row's hl_heap_after_free), then its bins to the pool. Later calls of that thread (TLS
 * teardown) bypass the TLAB. */
void hl_tlab_thread_exit(void);
/* hoardlab_collect: every block of the calling thread's TLAB given back as at its exit, its
 * bins kept, their limits back at their start (tlab_adaptive). Nothing without bins. */
void hl_tlab_flush(void);
size_t hl_tlab_bytes(void);             /* free bytes in every live thread's TLAB */
/* What U has not seen of the bins (Accounting above), in bytes: stats.c's
 * hl_stats_unseen_fn. */
int64_t hl_tlab_unseen(bool mine);
void hl_tlab_fork(int phase);           /* HL_FORK_*: the registry of TLABs */
/* HL_FORK_*, first and last of all (fronts.c): the forking thread's guard (scavenging), which
 * the purge thread may hold while it takes heaps' locks. */
void hl_tlab_fork_guard(int phase);

/* The TLAB's paths, built once in tlab.c for every row, the one that counting, stats_batch
 * and tlab_sb_cache ask for; row: the row behind the TLAB (fronts.c's table, cache = thread). */
const struct hl_paths *hl_tlab_start(const struct hl_cache_row *row);

#pragma GCC visibility pop

#endif
