/* heap.h — the private heap shared by `private`, `ownership` and `hoard`: per size class, the
 * superblocks it owns sorted into fullness groups (move-to-front within a group), its u and
 * a, and one lock. The three strategies differ only in which heap a freed block goes to and
 * whether superblocks move to the global heap; all of that is policy in their own files.
 *
 * Per class c, a heap keeps G + 2 doubly linked lists (G = fullness_groups):
 *   0 .. G-1   partly used superblocks, group g holding used/capacity in [g/G, (g+1)/G)
 *   G          full superblocks (never scanned by malloc)
 *   G + 1      completely empty superblocks (reused by this class first, then by any class)
 * and u (bytes of blocks in use) and a (bytes of blocks its superblocks can hold). u and a are
 * kept per class because the Hoard paper states its algorithm for one size class and
 * applies the bound to each class (§3 "we assume a single size class", §4.1); the totals
 * over classes are the heap's u_i and a_i. (With one u and a over all classes, Figure 2's
 * malloc itself would break the invariant whenever a heap full in one class but with free
 * space in others takes a new superblock.) a counts block bytes (S less header and tail
 * waste), so a full superblock has u = a exactly, as in the paper's figures; counting S
 * instead, a heap of full superblocks of S/2-byte blocks would sit at u = a/2 for ever.
 *
 * Locking: whoever holds h->lock may touch the heap and the headers of its superblocks. A
 * heap used by one thread only (`private` with heap_select=thread) is never locked
 * (hl_heap_enter/leave test h->shared).
 */
#ifndef HL_HEAP_H
#define HL_HEAP_H

#include "superblock.h"

struct hl_heap_class {
    struct hl_sb **list;                 /* G + 2 list heads, see above */
    void *loose;                         /* `private`: blocks freed into this heap */
    size_t u, a;                         /* bytes in use / bytes held, this class */
    uint32_t nsb;                        /* superblocks of this class */
};

struct hl_heap {
    hl_lock lock;
    bool shared;                         /* other threads may touch it: lock it */
    unsigned index;                      /* 0 = hoard's global heap; stable, for stats */
    size_t u, a;                         /* u_i, a_i: sums over classes */
    uint32_t nsb, nempty;                /* superblocks held; of those, completely empty */
    _Atomic uint64_t acquisitions, contended;   /* this heap's lock, written under it */
    struct hl_heap *pool_next;           /* heapselect.c: free pool of exited threads' heaps */
    struct hl_heap *all_next;            /* heapselect.c: every heap, newest first */
    struct hl_heap_class cls[];          /* hl_classes->count */
};

extern unsigned hl_heap_groups;          /* G */
#define HL_LIST_FULL  (hl_heap_groups)
#define HL_LIST_EMPTY (hl_heap_groups + 1)
#define HL_LIST_NONE  255u

void hl_heap_init(void);                 /* after config and size classes */
struct hl_heap *hl_heap_new(unsigned index, bool shared);

/* ---- locking ------------------------------------------------------------------------------ */

static inline void hl_heap_lock(struct hl_heap *h)
{
    bool waited = false;
    HL_COUNT(lock_acquisitions, 1);
    if (hl_unlikely(!hl_trylock(&h->lock))) {
        HL_COUNT(lock_contended, 1);
        hl_lock_slow(&h->lock);
        waited = true;
    }
    atomic_store_explicit(&h->acquisitions,
        atomic_load_explicit(&h->acquisitions, memory_order_relaxed) + 1, memory_order_relaxed);
    if (waited)
        atomic_store_explicit(&h->contended,
            atomic_load_explicit(&h->contended, memory_order_relaxed) + 1, memory_order_relaxed);
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

static inline void hl_heap_list_push(struct hl_heap *h, struct hl_sb *sb, unsigned list)
{
    struct hl_sb **head = &h->cls[sb->cls].list[list];
    sb->prev = NULL;
    sb->next = *head;
    if (*head) (*head)->prev = sb;
    *head = sb;
    sb->list = (uint8_t)list;
}

static inline void hl_heap_list_unlink(struct hl_heap *h, struct hl_sb *sb)
{
    if (sb->prev) sb->prev->next = sb->next;
    else h->cls[sb->cls].list[sb->list] = sb->next;
    if (sb->next) sb->next->prev = sb->prev;
    sb->next = sb->prev = NULL;
    sb->list = HL_LIST_NONE;
}

/* One block of sb, which h owns and which is not full. */
static inline void *hl_heap_alloc_from(struct hl_heap *h, struct hl_sb *sb)
{
    struct hl_heap_class *k = &h->cls[sb->cls];
    bool was_empty = sb->used == 0;
    void *p = hl_sb_pop(sb);
    k->u += sb->size;
    h->u += sb->size;
    if (was_empty) h->nempty--;
    unsigned g = hl_heap_group_of(sb);
    if (g != sb->list) {
        hl_heap_list_unlink(h, sb);
        hl_heap_list_push(h, sb, g);
    }
    return p;
}

/* The slow half of hl_heap_alloc: an empty superblock of any class, re-formatted. */
void *hl_heap_alloc_empty(struct hl_heap *h, unsigned c);

/* A block of class c from h alone: `loose` blocks first (only `private` has any), then the
 * fullest superblock with free space (Figure 2 line 4), then a recycled empty superblock.
 * NULL when h has no room: the strategy then asks the global heap or the OS. */
static inline void *hl_heap_alloc(struct hl_heap *h, unsigned c)
{
    struct hl_heap_class *k = &h->cls[c];
    void *p = k->loose;
    if (p) {
        k->loose = *(void **)p;
        return p;
    }
    for (unsigned g = hl_heap_groups; g-- > 0;)
        if (k->list[g]) return hl_heap_alloc_from(h, k->list[g]);
    if (k->list[HL_LIST_EMPTY]) return hl_heap_alloc_from(h, k->list[HL_LIST_EMPTY]);
    return hl_heap_alloc_empty(h, c);
}

/* Block p back into its superblock sb, which h owns; sb moves to the front of its fullness
 * group (§3.1 move-to-front). */
static inline void hl_heap_free(struct hl_heap *h, struct hl_sb *sb, void *p)
{
    struct hl_heap_class *k = &h->cls[sb->cls];
    hl_sb_push(sb, p);
    k->u -= sb->size;
    h->u -= sb->size;
    if (sb->used == 0) h->nempty++;
    unsigned g = hl_heap_group_of(sb);
    if (g != sb->list || k->list[g] != sb) {             /* not already in front */
        hl_heap_list_unlink(h, sb);
        hl_heap_list_push(h, sb, g);
    }
}

/* `private`: a block goes onto this heap's own list for its class, not into its superblock. */
static inline void hl_heap_push_loose(struct hl_heap *h, unsigned c, void *p)
{
    *(void **)p = h->cls[c].loose;
    h->cls[c].loose = p;
}

/* ---- heapselect.c: which heap a thread uses; the set of heaps ----------------------------- */

/* heap_select: thread (a heap per live thread, pooled and reused after the thread exits; the
 * uC++ hybrid), hash (thread id onto `heaps` heaps, as the paper), cpu (sched_getcpu modulo
 * `heaps`, as the 2026 Hoard). */
extern struct hl_heap *hl_heap_global;   /* hoard's heap 0; NULL for the other strategies */
/* Build the heap set: with_global adds heap 0; exclusive: a heap only one thread uses at a
 * time (heap_select=thread) needs no lock. Numbers heaps 1, 2, ... */
void hl_heaps_init(bool with_global, bool exclusive);
struct hl_heap *hl_heap_select_slow(struct hl_thread *t);
/* The calling thread's heap. */
static inline struct hl_heap *hl_heap_mine(void)
{
    struct hl_thread *t = hl_self();
    if (hl_likely(t->heap != NULL)) return t->heap;
    return hl_heap_select_slow(t);
}
/* The calling thread's heap if it has one now, without taking one (NULL if none). */
struct hl_heap *hl_heap_current(void);
/* Statistics: count a free of a block whose owner is not the freeing thread's heap. */
static inline void hl_heap_count_remote(const struct hl_heap *owner)
{
#ifdef HL_STATS
    const struct hl_heap *mine = hl_me.heap ? (const struct hl_heap *)hl_me.heap
                                            : hl_heap_current();
    if (owner != mine) HL_COUNT(remote_frees, 1);
#else
    (void)owner;
#endif
}
void hl_heaps_thread_exit(struct hl_thread *t);   /* thread mode: its heap back to the pool */
void hl_heaps_fork(int phase);                    /* 0 prepare, 1 parent, 2 child */

/* ---- heap.c: the rows of the dispatch table the heap strategies share ------------------- */

/* Allocation without a global heap (private, ownership): the fullest superblock of the class
 * in the thread's heap, else a fresh superblock from the OS. */
void  *hl_heaps_malloc(size_t size);
void  *hl_heaps_memalign(size_t align, size_t size);   /* inside a block of hl_heaps_malloc */
size_t hl_heaps_usable_size(const void *p);
void   hl_heaps_fork_prepare(void), hl_heaps_fork_parent(void), hl_heaps_fork_child(void);
/* Visit every heap (global first), without locks: for statistics and tests. */
void hl_heaps_foreach(void (*fn)(struct hl_heap *h, void *arg), void *arg);

/* ---- checks build ------------------------------------------------------------------------ */

/* -Dchecks=true: verify the heap and superblock after every operation. A constant, so that
 * `if (HL_INVARIANT_CHECKS)` compiles away when off. (Not the `checks` config key, hl_checking,
 * which checks frees in interpose.c.) */
#ifdef HL_CHECKS
#define HL_INVARIANT_CHECKS 1
#else
#define HL_INVARIANT_CHECKS 0
#endif

/* Verify class c of h: every list's links, owners, classes and groups; nsb, u and a against
 * the superblocks; the heap's totals. c = -1: every class. Aborts with a message. */
void hl_heap_check(const struct hl_heap *h, int c);

#endif
