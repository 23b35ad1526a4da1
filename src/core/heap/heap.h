/* heap.h — the private heap shared by `private`, `ownership` and `hoard`: per size class, the
 * superblocks it owns sorted into fullness groups (move-to-front within a group), its u and
 * a, and one lock. The three strategies differ only in which heap a freed block goes to and
 * whether superblocks move to the global heap; all of that is policy in their own files.
 *
 * Per class c, a heap keeps G + 2 doubly linked lists (G = fullness_groups):
 *   0 .. G-1   partly used superblocks, group g holding used/capacity in [g/G, (g+1)/G)
 *   G          full superblocks (never scanned by malloc)
 *   G + 1      completely empty superblocks (reused by this class first, then by any class)
 * and an account of u (bytes of blocks in use) and a (bytes of blocks its superblocks can
 * hold), which the emptiness threshold reads. The key `accounting` says which account a class
 * charges:
 *   class  each class its own (the default): the Hoard paper states its algorithm for one
 *          size class and applies the bound to each (§3 "we assume a single size class",
 *          §4.1). With one account over all classes, Figure 2's malloc itself breaks the
 *          invariant whenever a heap full in one class but with free space in others takes a
 *          new superblock; per class it cannot.
 *   heap   every class of a heap the heap's one account: the paper's u_i and a_i, for
 *          measuring what the departure above costs (the invariant then holds after frees).
 * a counts block bytes (S less header and tail waste), so a full superblock has u = a
 * exactly, as in the paper's figures; counting S instead, a heap of full superblocks of
 * S/2-byte blocks would sit at u = a/2 for ever.
 *
 * Locking: whoever holds h->lock may touch the heap and the headers of its superblocks. A
 * heap used by one thread only (`private` with heap_select=thread) is never locked
 * (hl_heap_enter/leave test h->shared).
 */
#ifndef HL_HEAP_H
#define HL_HEAP_H

#include "mem.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* -Dchecks=true: verify the heap and superblock after every operation. A constant, so that
 * `if (HL_INVARIANT_CHECKS)` compiles away when off. (Not the `checks` config key, hl_checking,
 * which checks frees in interpose.c.) */
#ifdef HL_CHECKS
#define HL_INVARIANT_CHECKS 1
#else
#define HL_INVARIANT_CHECKS 0
#endif

struct hl_account {
    size_t u, a;                         /* bytes in use / bytes held */
    size_t u_floor;                      /* u below this: the owner's policy acts (hl_heap_floor) */
};

struct hl_heap_class {
    struct hl_sb **list;                 /* G + 2 list heads, see above */
    void *loose;                         /* `private`: blocks freed into this heap */
    struct hl_account *acct;             /* the account this class charges: &own or &heap->total */
    uint64_t groups;                     /* bit g set: list g (a fullness group) is not empty */
    uint32_t nsb;                        /* superblocks of this class */
    struct hl_account own;               /* accounting = class */
};

struct hl_heap {
    hl_lock lock;
    bool shared;                         /* other threads may touch it: lock it */
    unsigned index;                      /* 0 = hoard's global heap; stable, for stats */
    uint32_t collect_in;                 /* mallocs until it collects remote frees (remote.h) */
    struct hl_account total;             /* accounting = heap: every class's account */
    uint32_t nsb, nempty;                /* superblocks held; of those, completely empty */
    uint64_t acquisitions, contended;    /* this heap's lock, written under it */
    struct hl_heap *all_next;            /* heapselect.c: every heap, newest first */
    /* purge_holes = on (purge.c): listed for the purge thread's sweep of holes, and the link
     * in that list (pushed by a free under the lock, taken whole by the sweep) */
    bool holes_listed;
    struct hl_heap *holes_next;
    /* remote_free = list | queue | batch (remote.h): what other threads freed into this heap and it
     * has not collected; a line of its own, since other threads write it. */
    _Alignas(HL_CACHE_LINE) _Atomic uintptr_t inbox;
    _Atomic size_t inbox_bytes;          /* queue, batch: bytes posted to inbox, not yet collected */
    _Atomic uint32_t inbox_blocks;       /* queue: blocks of them, kept only with remote_queue_cap */
    _Alignas(HL_CACHE_LINE) struct hl_heap_class cls[];   /* hl_classes->count */
};

extern unsigned hl_heap_groups;          /* G */
#define HL_LIST_FULL  (hl_heap_groups)
#define HL_LIST_EMPTY (hl_heap_groups + 1)
#define HL_LIST_NONE  255u

/* A strategy's threshold on u, per account: given a heap and an account's a, the u below
 * which hl_heap_free's caller should act (Hoard: the emptiness threshold). Kept in u_floor
 * and recomputed only when a changes, so free compares two numbers. NULL: never (floor 0). */
extern size_t (*hl_heap_floor)(const struct hl_heap *h, size_t a);

void hl_heap_init(void);                 /* after config and size classes */
/* purge_holes = on (holes.c's observer calls it after a move that sets sb's bounds, h
 * locked): a superblock with holes keeps a block on its free list (superblock.h), so its
 * group_hi is at most hl_sb_hole_bound; in the lowest group its group_lo is a quarter of
 * `used`, so the free that quarters it regroups and the observer purges again. */
void hl_heap_holes_bound(struct hl_sb *sb);
struct hl_heap *hl_heap_new(unsigned index, bool shared);
size_t hl_heap_u(const struct hl_heap *h);   /* u_i: the sum over classes */
size_t hl_heap_a(const struct hl_heap *h);   /* a_i: the sum over classes */


/* ---- locking ------------------------------------------------------------------------------ */

/* Each heap counts its lock's acquisitions itself (under the lock, so plain adds), and
 * hl_heaps_stats adds them to the totals; contention is counted on the slow path. */
void hl_heap_lock_slow(struct hl_heap *h);
static inline void hl_heap_lock(struct hl_heap *h)
{
    if (hl_unlikely(!hl_trylock(&h->lock))) hl_heap_lock_slow(h);
    HL_COUNT_AT(h->acquisitions, 1);
}

static inline void hl_heap_unlock(struct hl_heap *h) { hl_lock_release(&h->lock); }
static inline void hl_heap_enter(struct hl_heap *h) { if (h->shared) hl_heap_lock(h); }
static inline void hl_heap_leave(struct hl_heap *h) { if (h->shared) hl_heap_unlock(h); }

/* Lock the heap that owns sb and return it. The owner changes only under the old owner's
 * lock, so once the re-read after locking agrees, it stays the owner until we unlock. */
struct hl_heap *hl_heap_lock_owner(const struct hl_sb *sb);

/* ---- superblocks in and out of a heap (caller holds the lock) ----------------------------- */

void hl_heap_attach(struct hl_heap *h, struct hl_sb *sb);   /* sb becomes h's */
void hl_heap_detach(struct hl_heap *h, struct hl_sb *sb);   /* sb leaves h (owner kept) */
/* A superblock h gives up for class c: one of class c with free space (fullest first), else a
 * completely empty one of any class re-formatted for c; detached. NULL if h has neither. */
struct hl_sb *hl_heap_take(struct hl_heap *h, unsigned c);
/* A superblock of class c whose in-use bytes are at most (1 - f) of its bytes, emptiest
 * groups first (completely empty ones before all); NULL if there is none. */
struct hl_sb *hl_heap_emptiest(struct hl_heap *h, unsigned c, double f);

/* ---- blocks (caller holds the lock, or the heap is not shared) ------------------------------ */

static inline unsigned hl_heap_group_of(const struct hl_sb *sb)
{
    if (sb->used == sb->capacity) return HL_LIST_FULL;
    if (sb->used == 0) return HL_LIST_EMPTY;
    return (unsigned)((uint64_t)sb->used * hl_heap_groups / sb->capacity);
}

void hl_heap_list_push(struct hl_heap *h, struct hl_sb *sb, unsigned list);
void hl_heap_list_unlink(struct hl_heap *h, struct hl_sb *sb);
/* sb's `used` left [group_lo, group_hi): to the front of the list of its new group. */
void hl_heap_regroup(struct hl_heap *h, struct hl_sb *sb);
/* After a free: sb's `used` fell below group_lo, or sb emptied beside other superblocks of its
 * group (set_bounds lets it stay only alone): it must change lists. */
static inline bool hl_heap_must_regroup(const struct hl_sb *sb)
{
    return sb->used < sb->group_lo || (sb->used == 0 && (sb->prev || sb->next));
}

/* sb to the front of its list (§3.1 move-to-front), where it already is in the common case. */
void hl_heap_move_to_front(struct hl_heap *h, struct hl_sb *sb);
static inline void hl_heap_to_front(struct hl_heap *h, struct hl_sb *sb)
{
    if (hl_unlikely(h->cls[sb->cls].list[sb->list] != sb)) hl_heap_move_to_front(h, sb);
}

/* A block out of sb (which h owns, not full) / back into it, with h's counts; sb's list is
 * the caller's to settle (hl_heap_regroup, hl_heap_to_front). */
static inline void *hl_heap_take_block(struct hl_heap *h, struct hl_sb *sb)
{
    void *p = hl_sb_pop(sb);
    h->cls[sb->cls].acct->u += sb->size;
    if (hl_unlikely(sb->used == 1)) h->nempty--;     /* a branch: rarer than a flag's sum */
    return p;
}

static inline void hl_heap_put_block(struct hl_heap *h, struct hl_sb *sb, void *p)
{
    hl_sb_push(sb, p);
    h->cls[sb->cls].acct->u -= sb->size;
    if (hl_unlikely(sb->used == 0)) h->nempty++;
}

/* After a block of sb went back (sb in its right list): the strategy's after-free policy is
 * due when sb's class's account fell below its floor or sb emptied; in the checks build always. */
static inline bool hl_heap_policy_due(const struct hl_heap *h, const struct hl_sb *sb)
{
    const struct hl_account *ac = h->cls[sb->cls].acct;
    return HL_INVARIANT_CHECKS || ac->u < ac->u_floor || sb->used == 0;
}

/* free_lists = sharded (sharded.h): the superblock class c allocates from until it runs dry,
 * kept in the slot before the class's list heads (hl_heap_new); NULL: none yet. It stays in
 * its fullness group as any other; leaving the heap (hl_heap_detach) clears it. */
static inline struct hl_sb **hl_heap_sharded_sb(const struct hl_heap_class *k)
{
    return &k->list[-1];
}

/* One block of sb, which h owns and which is not full. (free_lists = sharded: sb's local_free
 * is empty or its free list is not; sharded.c's hl_sharded_alloc swaps them, and so does
 * hl_heap_detach for a superblock that leaves its heap, whose next owner pops it once before
 * sharded.c does.) */
static inline void *hl_heap_alloc_from(struct hl_heap *h, struct hl_sb *sb)
{
    void *p = hl_heap_take_block(h, sb);
    if (hl_unlikely(sb->used >= sb->group_hi)) hl_heap_regroup(h, sb);
    return p;
}

/* Up to want blocks of class c out of h's fullest superblock with room, as one chain linked
 * through the blocks' first words, *head .. *tail (the tail's link is the caller's to set):
 * a TLAB's refill (tlab.c) takes a batch in one step, `used` and u moved once and the
 * superblock regrouped once. A superblock only grows fuller as it hands blocks out, so it
 * stays the fullest until full, and this takes the blocks that as many hl_heap_alloc_sb calls
 * would. How many; 0 when no superblock of c in h has room (then hl_heap_alloc_empty). Not
 * for free_lists = sharded (sharded.c takes from its current superblock). */
uint32_t hl_heap_alloc_chain(struct hl_heap *h, unsigned c, uint32_t want, void **head,
                             void **tail);

/* The slow half of hl_heap_alloc: an empty superblock of any class, re-formatted. */
void *hl_heap_alloc_empty(struct hl_heap *h, unsigned c);

/* A block of class c from h's superblocks: the fullest with free space (Figure 2 line 4),
 * then a recycled empty superblock. NULL when h has no room: the strategy then asks the
 * global heap or the OS. */
static inline void *hl_heap_alloc_sb(struct hl_heap *h, unsigned c)
{
    struct hl_heap_class *k = &h->cls[c];
    if (hl_likely(k->groups)) return hl_heap_alloc_from(h, k->list[63 - __builtin_clzll(k->groups)]);
    return hl_heap_alloc_empty(h, c);
}

/* The same, `loose` blocks first (only `private` has any). */
static inline void *hl_heap_alloc(struct hl_heap *h, unsigned c)
{
    struct hl_heap_class *k = &h->cls[c];
    void *p = k->loose;
    if (p) {
        k->loose = *(void **)p;
        return p;
    }
    return hl_heap_alloc_sb(h, c);
}

/* Block p back into its superblock sb, which h owns; sb moves to the front of its fullness
 * group (§3.1 move-to-front). The general paths' free: with free_lists = sharded, onto
 * local_free and no move to the front, as sharded.h's fast path. */
static inline void hl_heap_free(struct hl_heap *h, struct hl_sb *sb, void *p)
{
    if (hl_unlikely(hl_sb_sharded)) {
        hl_sb_push_local(sb, p);
        h->cls[sb->cls].acct->u -= sb->size;
        if (hl_unlikely(sb->used == 0)) h->nempty++;
        if (hl_heap_must_regroup(sb)) hl_heap_regroup(h, sb);
        return;
    }
    hl_heap_put_block(h, sb, p);
    if (hl_unlikely(hl_heap_must_regroup(sb))) hl_heap_regroup(h, sb);
    else hl_heap_to_front(h, sb);
}

/* `private`: a block goes onto this heap's own list for its class, not into its superblock. */
static inline void hl_heap_push_loose(struct hl_heap *h, unsigned c, void *p)
{
    *(void **)p = h->cls[c].loose;
    h->cls[c].loose = p;
}

/* ---- heap.c: the hooks the strategies whose blocks go back to their owner fill in ----------
 * (ownership, hoard; heappaths.h has their malloc and free paths). What they differ in is a
 * hook each: */

/* h locked, no superblock of h has room for class c: a block from elsewhere (hoard: the global
 * heap, then the OS; ownership: the OS), with its superblock attached to h, or NULL. */
typedef void *(*hl_refill_fn)(struct hl_heap *h, unsigned c);
/* h locked, a block of sb was just freed into it and sb is in its right group: the strategy's
 * policy after a free (hoard: the emptiness threshold; release_empty), invariant checks. The
 * fast path calls it only when its class's u fell below u_floor or sb is empty (or in the
 * checks build); the general path always. */
typedef void (*hl_after_free_fn)(struct hl_heap *h, struct hl_sb *sb);

/* Non-NULL while the heap log watches (heap_log, heaplog.c; set by observe.c): sb moves from
 * list `from` to list `to` of h, HL_LIST_NONE for outside h. Called with h locked (or by
 * h's only thread): on attach after the move, on detach and regroup before it. */
extern void (*hl_heap_observer)(const struct hl_heap *h, const struct hl_sb *sb, unsigned from,
                                unsigned to);

/* The active row's hooks, which the heap paths built once (heappaths.c, sharded.c) and the
 * frees collected from other threads (remote.h), outside any free call, call. */
extern hl_refill_fn hl_heap_refill;
extern hl_after_free_fn hl_heap_after_free;

/* All a heap row (ownership, hoard and its rows) adds to the paths, the fronts and the heap
 * selection of heaps/ and cache/: its hooks, and whether it has a global heap (heap 0). The
 * row's init hands it to fronts.h's hl_fronts_start. */
struct hl_heap_policy {
    hl_refill_fn refill;
    hl_after_free_fn after_free;
    size_t (*floor)(const struct hl_heap *h, size_t a);   /* hl_heap_floor; NULL: none */
    bool global_heap;
};

/* ---- heap.c: checks build ---------------------------------------------------------------- */

/* Verify class c of h: every list's links, owners, classes and groups; nsb, u and a against
 * the superblocks; the heap's totals. c = -1: every class. Aborts with a message. */
void hl_heap_check(const struct hl_heap *h, int c);

#pragma GCC visibility pop

/* heap/'s face: this header, and the folder's other headers the layers above use. */
#include "singleheap.h"
#include "ticker.h"
#include "purge.h"
#include "holes.h"
#include "large.h"

#endif
