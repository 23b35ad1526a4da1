/* tlab_bins.h — a TLAB's layout and what the TLAB's files share of it (tlab_bins.c defines
 * the shared state): tlab.c, the TLAB, and its keys' files, tlab_sb_cache.[ch],
 * tlab_scavenge.[ch], tlab_adaptive.h, tlab_remote.[ch], which use nothing of tlab.c (they
 * are below it: tools/hoardlab layers). tlab.h is the TLAB's face and includes it.
 *
 * A TLAB is a struct hl_tlab, then its bins (one per class, then the bypass bin), then their
 * spares, one per class (struct hl_tlab_spare): a second chain the slow paths keep out of the
 * fast paths' way (runs of remote frees taken whole: tlab_remote.h), and `seen`, the bin's
 * room when U last counted it. Invariants:
 *   - only the owner writes its bins and spares, or the purge thread holding the TLAB's guard
 *     with its stop set (tlab_scavenge.h);
 *   - a bin's room counts the blocks of its spare chain too: room = limit - (head's blocks +
 *     the spare's n);
 *   - a slow path that changes a bin's room other than by the program's malloc or free (a
 *     refill, a give-back, runs taken whole, a new limit) moves `seen` with it
 *     (hl_tlab_move_uncounted), so U never counts it; the block a slow path hands out or
 *     takes back it counts itself (hl_stats_malloc, hl_stats_free).
 * The helpers are inline, as when the TLAB was one file: tools/hoardlab cost counts the slow
 * halves in its remote column. */
#ifndef HL_TLAB_BINS_H
#define HL_TLAB_BINS_H

#include "cache.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* The superblock cache's entries (tlab_sb_cache.h), in a TLAB's header. */
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
                                          * (on head, and in tlab_bins.h's spare chain) */
    uint32_t limit;                      /* tlab_budget / class size */
};

/* A thread's TLAB: this header, then its bins (hl_classes->count of them). */
struct hl_tlab {
    struct hl_tlab_sbc sbc[HL_TLAB_SBC_MAX];   /* tlab_sb_cache.h: first tlab_sb_cache used */
    uint64_t sbc_gen;                    /* hl_sb_generation when the entries were good */
    struct hl_tlab *next, *prev;         /* tlab_bins.h: live TLABs (doubly linked), or the pool */
    size_t budget;                       /* tlab_adaptive.h: bytes per class now */
    size_t limit_bytes;                  /* tlab_adaptive.h: what the bins' limits hold in all */
    uint32_t slow;                       /* tlab_adaptive.h: slow paths taken */
    /* Scavenging (tlab_scavenge.h): the owner's hl_me.tlab_in; the purge thread's last look
     * at the bins' room (folded); the lock of the slow halves and the purge thread. */
    uint32_t *in;
    uint64_t seen_rooms;
    hl_lock guard;
    /* The fast paths leave for the slow half while it is set (tlab_scavenge.h). */
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

/* Threads without bins of their own point at these (hl.h's hl_tlab_none): heap NULL, no
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

#pragma GCC visibility pop

#endif
