/* lockfree — Michael's lock-free allocator (PLDI 2004, §3): no lock on malloc or free, only
 * CAS. docs/lockfree.md gives the algorithm, the state machine and every departure.
 *
 *   superblock  S bytes (superblock_size, the paper's 16 KiB by default), S-aligned, carved
 *               from 1 MiB hyperblocks (§3.2.5). Its first bytes hold a pointer to its
 *               descriptor and the links of its available blocks (block i's successor on the
 *               avail list is links[i]); its blocks follow, from a cache line boundary.
 *   descriptor  one per superblock in use: the Anchor {avail, count, state, tag} in one 64-bit
 *               word changed only by CAS, and the superblock's fixed facts. Descriptors come
 *               from DescAvail, a lock-free stack guarded by hazard pointers (lfstack.c).
 *   processor heap  per size class: Active (descriptor pointer | credits in the 6 low bits)
 *               and its Partial slots (partial_slots of them, the paper's one by default, used
 *               as a ring: the oldest is taken first). Heap sets are chosen by heap_select
 *               with the other strategies' rule (selector.c).
 *   size class  its list of partial superblocks: a lock-free FIFO queue (the paper's
 *               preference; lfqueue.c) or a LIFO stack (lfstack.c), by partial_list.
 *
 * Fast paths (inline, no call): malloc takes a credit from Active and pops a block
 * (MallocFromActive with credits > 0: two CAS); free pushes the block when its superblock
 * neither leaves FULL nor becomes EMPTY (one CAS). Everything else is out of line. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "ds.h"
#include "lockfree.h"
#include "heaps.h"

/* -Dchecks=true: verify anchors after every operation of a single-threaded program (the
 * idiom of heap.h's HL_INVARIANT_CHECKS; a constant, so the checks compile away when off). */
#ifdef HL_CHECKS
#define LF_CHECKS 1
#else
#define LF_CHECKS 0
#endif

#define ACTIVE  HL_LF_ACTIVE
#define FULL    HL_LF_FULL
#define PARTIAL HL_LF_PARTIAL
#define EMPTY   HL_LF_EMPTY
#define MAXCREDITS 64u                  /* credits field: 6 bits of a 64-aligned pointer */
#define CREDITS    ((uintptr_t)MAXCREDITS - 1)
#define HYPER      ((size_t)1 << 20)    /* hyperblock: superblocks are carved from these */
#define DCHUNK     ((size_t)64 << 10)   /* descriptors come in chunks of this many bytes */
#define SB_LINKS   sizeof(struct lf_sbhdr)   /* offset of the links in a superblock */

/* HP slots: 0 a short pop (descriptors, nodes, superblocks), 1-2 a list operation, 3 the
 * descriptor a free is emptying (so RemoveEmptyDesc's CAS cannot meet a reused one). */
enum { HP_POP, HP_LIST1, HP_LIST2, HP_FREE };

struct lf_heap;

struct lf_desc {
    _Atomic uint64_t anchor;
    char *base;                          /* block 0 */
    _Atomic uint32_t *links;             /* links[i]: the block after block i on the avail list */
    uint64_t recip;                      /* ceil(2^64 / sz): block index by one multiplication */
    uint64_t free_limit;                 /* (maxcount - 1) << ib: see lf_free */
    uint32_t sz, maxcount;
    char *sb;
    _Atomic(struct lf_heap *) heap;      /* the processor heap that last owned it */
    _Atomic(struct lf_desc *) next;      /* DescAvail */
    _Atomic int live;                    /* between DescAlloc's user and DescRetire */
    struct hl_hp_node hp;
} HL_CACHE_ALIGNED;

struct lf_sbhdr {
    struct lf_desc *desc;
    _Atomic(struct lf_sbhdr *) next;     /* the pool of free superblocks */
    struct hl_hp_node hp;
};

struct lf_class {
    struct hl_lfqueue list;              /* FIFO (lfqueue.h), or LIFO: list.head the top */
    uint32_t sz, maxcount, hdr;          /* hdr: bytes before block 0 */
    uint64_t recip;
} HL_CACHE_ALIGNED;

/* The Partial slots are a ring of nslots: HeapPutPartial exchanges a superblock into the slot
 * `put` names (advancing it), HeapGetPartial takes the first one it finds from `take` on, i.e.
 * the one parked longest, and moves `take` past it. `take` is only a hint (a put's exchange may
 * land after a get passed its slot: that superblock is then displaced to the list by a later
 * put, never lost), kept so that a get does not scan empty slots. Out of line from the heap, so
 * that Active's line and the fast path (&set->ph[c]) stay what they were with one slot. */
struct lf_heap {
    _Atomic uintptr_t active;            /* descriptor | credits, or 0 */
    _Atomic(struct lf_desc *) *partial;  /* nslots slots */
    struct lf_class *sc;
    _Atomic unsigned put, take;          /* nslots > 1: puts and gets so far (mod nslots: slots) */
};

struct lf_set { struct lf_heap ph[1]; };   /* one heap per size class; hl_me.heap points here */

struct lf_hyper { char *base; _Atomic unsigned used; unsigned n; };
struct lf_chunk { _Atomic(struct lf_chunk *) next; unsigned n; };   /* a chunk of descriptors */

/* Anchor layout, bottom up: avail (ib bits), count (ib bits), state (2), tag (the rest).
 * ib = log2(S / 16) holds any block index; S = 16 KiB gives the paper's 10/10/2/42. */
static unsigned ib;
static uint64_t amask, count_one, tag_one;
static uint64_t fmask;                   /* count and the high bit of state (FULL, EMPTY) */
static unsigned state_shift;
static uintptr_t sbmask;
static size_t sbsize;
static bool fifo;
static unsigned nslots;                  /* partial_slots */
static unsigned nclasses;
static struct lf_class *classes;
static struct hl_selector sel;           /* heap_select: the sets (selector.c) */

static _Atomic(struct lf_desc *) desc_avail;
static _Atomic(struct lf_chunk *) chunks;
static _Atomic(struct lf_sbhdr *) sb_pool;
static _Atomic long sb_pooled;
static _Atomic(struct lf_hyper *) hyper;

/* The generic stack's view of this file's typed tops and links (lfstack.h). */
#define STACK(p) ((_Atomic(void *) *)(p))
#define LINK(p)  ((_Atomic(void *) *)(p))

#define RLX memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release
#define AR  memory_order_acq_rel

static inline unsigned a_avail(uint64_t a) { return (unsigned)(a & amask); }
static inline unsigned a_count(uint64_t a) { return (unsigned)((a >> ib) & amask); }
static inline unsigned a_state(uint64_t a) { return (unsigned)(a >> state_shift) & 3u; }
static inline uint64_t a_with_state(uint64_t a, unsigned s)
{
    return (a & ~((uint64_t)3 << state_shift)) | (uint64_t)s << state_shift;
}
static inline bool cas64(_Atomic uint64_t *p, uint64_t *old, uint64_t nw)
{
    return atomic_compare_exchange_weak_explicit(p, old, nw, AR, ACQ);
}

/* Counting CAS: every attempt, failures as retries; those of free also in the free pair. */
static inline void count_cas(bool freeing, bool ok)
{
    HL_COUNT(cas_attempts, 1);
    if (!ok) HL_COUNT(cas_retries, 1);
    if (freeing) {
        HL_COUNT(cas_free_attempts, 1);
        if (!ok) HL_COUNT(cas_free_retries, 1);
    }
    (void)freeing, (void)ok;
}

/* A loop of CASes, the last of which succeeded (ok) or not (an empty stack's pop): fails+ok
 * attempts, fails retries. */
static inline void count_cas_loop(bool freeing, unsigned fails, bool ok)
{
    HL_COUNT(cas_attempts, fails + ok);
    HL_COUNT(cas_retries, fails);
    if (freeing) {
        HL_COUNT(cas_free_attempts, fails + ok);
        HL_COUNT(cas_free_retries, fails);
    }
    (void)freeing, (void)fails, (void)ok;
}

/* A CAS tried once (its failure is an outcome, not a retry). */
static inline void count_cas_once(bool freeing)
{
    HL_COUNT(cas_attempts, 1);
    if (freeing) HL_COUNT(cas_free_attempts, 1);
    (void)freeing;
}

static inline struct lf_desc *desc_of(const void *p)
{
    return ((const struct lf_sbhdr *)((uintptr_t)p & sbmask))->desc;
}

/* Index of the block holding p (an interior pointer too): floor(off / sz), exact for every
 * off < 2^64 / sz with recip = ceil(2^64 / sz). */
static inline uint32_t index_of(const struct lf_desc *d, const void *p)
{
    uint64_t off = (uint64_t)((const char *)p - d->base);
    return (uint32_t)(((unsigned __int128)off * d->recip) >> 64);
}

/* A thread past its exit hook took a hazard record again: give it back after each use. */
static inline void hp_done(void)
{
    if (hl_unlikely(hl_me.state == 2)) hl_hp_release();
}

/* ---- pools: descriptors (Figure 7), superblocks and hyperblocks (list nodes: lfqueue.c) -- */

static void desc_free_cb(struct hl_hp_node *n)
{
    struct lf_desc *d = (struct lf_desc *)((char *)n - offsetof(struct lf_desc, hp));
    hl_lfs_push(STACK(&desc_avail), d, LINK(&d->next));
}

/* DescRetire: onto DescAvail once no hazard pointer holds it. */
static void desc_retire(struct lf_desc *d)
{
    atomic_store_explicit(&d->live, 0, RLX);
    hl_hp_retire(hl_hp_mine(), &d->hp, d, desc_free_cb);
}

/* DescAlloc: pop DescAvail (SafeCAS: the popped descriptor is hazard-protected, and one
 * returns to the list only through DescRetire's deferral, so the CAS cannot meet an ABA);
 * if empty, a new chunk, installed only if the list is still empty (else given back). */
static struct lf_desc *desc_alloc(void)
{
    struct hl_hp_rec *r = hl_hp_mine();
    struct lf_desc *d;
    for (;;) {
        d = hl_lfs_pop(r, HP_POP, STACK(&desc_avail), offsetof(struct lf_desc, next), NULL);
        if (d) break;
        struct lf_chunk *ch = hl_arena_alloc(DCHUNK, HL_PAGE, HL_OS_META);
        if (!ch) break;
        struct lf_desc *first = (struct lf_desc *)((char *)ch + sizeof(struct lf_desc));
        unsigned n = (unsigned)(DCHUNK / sizeof(struct lf_desc)) - 1;
        ch->n = n;
        for (unsigned i = 1; i < n; i++)
            atomic_store_explicit(&first[i].next, i + 1 < n ? &first[i + 1] : NULL, RLX);
        struct lf_desc *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&desc_avail, &none, &first[1], AR, RLX)) {
            hl_lfs_push(STACK(&chunks), ch, LINK(&ch->next));
            d = &first[0];
            break;
        }
        hl_arena_free(ch, DCHUNK, HL_OS_META);
    }
    return d;
}

/* release_empty: a pooled superblock gives all but its first page (which holds the pool
 * link) back to the kernel and leaves A; it comes back when the pool hands it out. */
static bool release_empty;

static void sb_free_cb(struct hl_hp_node *n)
{
    struct lf_sbhdr *s = (struct lf_sbhdr *)((char *)n - offsetof(struct lf_sbhdr, hp));
    if (release_empty && sbsize > HL_PAGE) {
        hl_os_madvise((char *)s + HL_PAGE, sbsize - HL_PAGE, MADV_DONTNEED);
        hl_os_account(HL_OS_HELD, -(ptrdiff_t)(sbsize - HL_PAGE));
    }
    hl_lfs_push(STACK(&sb_pool), s, LINK(&s->next));
    atomic_fetch_add_explicit(&sb_pooled, 1, RLX);
}

/* "Free the superblock": back to the pool of free superblocks (any class reuses it). */
static void sb_free(char *sb)
{
    hl_hp_retire(hl_hp_mine(), &((struct lf_sbhdr *)sb)->hp, sb, sb_free_cb);
}

/* A superblock: a pooled one, else the next of the current hyperblock, else a new
 * hyperblock from the arena (installed by CAS; a loser gives its own back and retries). */
static char *sb_alloc(void)
{
    struct hl_hp_rec *r = hl_hp_mine();
    for (;;) {
        struct lf_sbhdr *s = hl_lfs_pop(r, HP_POP, STACK(&sb_pool),
                                        offsetof(struct lf_sbhdr, next), NULL);
        if (s) {
            atomic_fetch_sub_explicit(&sb_pooled, 1, RLX);
            if (release_empty && sbsize > HL_PAGE) hl_os_account(HL_OS_HELD, (ptrdiff_t)(sbsize - HL_PAGE));
            return (char *)s;
        }
        struct lf_hyper *h = atomic_load_explicit(&hyper, ACQ);
        if (h) {
            unsigned i = atomic_fetch_add_explicit(&h->used, 1, RLX);
            if (i < h->n) return h->base + (size_t)i * sbsize;
        }
        size_t hsize = HYPER > sbsize ? HYPER : sbsize;
        char *base = hl_arena_alloc(hsize, sbsize, HL_OS_HELD);
        if (!base) return NULL;
        struct lf_hyper *nh = hl_meta_alloc(sizeof *nh);
        nh->base = base;
        nh->n = (unsigned)(hsize / sbsize);
        atomic_store_explicit(&nh->used, 1, RLX);
        if (atomic_compare_exchange_strong_explicit(&hyper, &h, nh, AR, ACQ)) return base;
        hl_arena_free(base, hsize, HL_OS_HELD);
    }
}

/* ---- size-class partial lists (§3.2.6) -------------------------------------------------- */

/* FIFO: Michael and Scott's queue with hazard pointers (lfqueue.c). */
static void fifo_put(struct lf_class *sc, struct lf_desc *d, bool freeing)
{
    hl_lfq_put(&sc->list, d, hl_hp_mine(), HP_LIST1, HP_POP, count_cas, freeing);
}

static struct lf_desc *fifo_get(struct lf_class *sc, bool freeing)
{
    return hl_lfq_get(&sc->list, hl_hp_mine(), HP_LIST1, count_cas, freeing);
}

/* LIFO: a Treiber stack (lfstack.h) of the queue's nodes; a node comes back only through the
 * hazard retire, so the pop's CAS cannot succeed on a recycled top. */
static void lifo_put(struct lf_class *sc, struct lf_desc *d, bool freeing)
{
    struct hl_lf_node *n = hl_lf_node_alloc(hl_hp_mine(), HP_POP);
    n->val = d;
    count_cas_loop(freeing, hl_lfs_push(STACK(&sc->list.head), n, LINK(&n->next)), true);
}

static struct lf_desc *lifo_get(struct lf_class *sc, bool freeing)
{
    struct hl_hp_rec *r = hl_hp_mine();
    unsigned fails = 0;
    struct hl_lf_node *top = hl_lfs_pop(r, HP_LIST1, STACK(&sc->list.head),
                                        offsetof(struct hl_lf_node, next), &fails);
    count_cas_loop(freeing, fails, top != NULL);
    if (!top) return NULL;
    struct lf_desc *d = top->val;        /* ours once popped: no other thread retires it */
    hl_lf_node_retire(r, top);
    return d;
}

static void list_put(struct lf_class *sc, struct lf_desc *d, bool freeing)
{
    if (fifo) fifo_put(sc, d, freeing);
    else lifo_put(sc, d, freeing);
}

static struct lf_desc *list_get(struct lf_class *sc, bool freeing)
{
    return fifo ? fifo_get(sc, freeing) : lifo_get(sc, freeing);
}

/* ListRemoveEmptyDesc: take descriptors off the front while they are EMPTY (retiring them);
 * the first non-empty one goes back (FIFO: to the tail, as the paper does; LIFO: on top). */
static void list_remove_empty(struct lf_class *sc)
{
    struct lf_desc *d;
    while ((d = list_get(sc, true))) {
        if (a_state(atomic_load_explicit(&d->anchor, ACQ)) == EMPTY) {
            desc_retire(d);
            continue;
        }
        list_put(sc, d, true);
        break;
    }
}

/* ---- processor heaps: Partial slots, UpdateActive ----------------------------------------- */

/* HeapGetPartial: the heap's Partial slots put since the last get, the one parked longest
 * first, then the class list. */
static struct lf_desc *heap_get_partial(struct lf_heap *h)
{
    bool ring = nslots > 1;
    unsigned put = ring ? atomic_load_explicit(&h->put, RLX) : 1;
    unsigned take = ring ? atomic_load_explicit(&h->take, RLX) : 0, n = put - take;
    if (n > nslots) { n = nslots; take = put - nslots; }
    unsigned i = take % nslots;
    for (; n; n--, take++, i = i + 1 < nslots ? i + 1 : 0) {
        _Atomic(struct lf_desc *) *slot = &h->partial[i];
        struct lf_desc *d = atomic_load_explicit(slot, ACQ);
        while (d) {
            bool ok = atomic_compare_exchange_weak_explicit(slot, &d, NULL, AR, ACQ);
            count_cas(false, ok);
            if (!ok) continue;
            if (ring) atomic_store_explicit(&h->take, take + 1, RLX);
            return d;
        }
    }
    if (ring) atomic_store_explicit(&h->take, put, RLX);
    return list_get(h->sc, false);
}

/* HeapPutPartial: d into the next Partial slot of its last heap; what was there (parked
 * nslots puts ago, or NULL) goes to the list. The paper's CAS loop is one exchange. */
static void heap_put_partial(struct lf_desc *d, bool freeing)
{
    struct lf_heap *h = atomic_load_explicit(&d->heap, ACQ);
    unsigned i = 0;
    if (nslots > 1) {
        i = atomic_fetch_add_explicit(&h->put, 1, RLX) % nslots;
        count_cas_once(freeing);
    }
    struct lf_desc *prev = atomic_exchange_explicit(&h->partial[i], d, AR);
    count_cas_once(freeing);
    if (prev) list_put(h->sc, prev, freeing);
}

/* RemoveEmptyDesc's first step: d (EMPTY, hazard-protected by the caller) out of h's Partial
 * slots by CAS; false if no slot holds it. */
static bool heap_take_empty(struct lf_heap *h, struct lf_desc *d, bool freeing)
{
    for (unsigned k = 0; k < nslots; k++) {
        if (atomic_load_explicit(&h->partial[k], RLX) != d) continue;
        struct lf_desc *want = d;
        bool ok = atomic_compare_exchange_strong_explicit(&h->partial[k], &want, NULL, AR, RLX);
        count_cas_once(freeing);
        if (ok) return true;
    }
    return false;
}

/* UpdateActive: reinstall d with more credits; if another superblock got there first, give
 * the credits back to d's count, make it PARTIAL and park it. */
static void update_active(struct lf_heap *h, struct lf_desc *d, unsigned more)
{
    uintptr_t none = 0;
    bool ok = atomic_compare_exchange_strong_explicit(&h->active, &none,
                                                      (uintptr_t)d | (more - 1), AR, RLX);
    count_cas_once(false);
    if (ok) return;
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ), na;
    do {
        na = a_with_state(oa + more * count_one, PARTIAL);
    } while (!(ok = cas64(&d->anchor, &oa, na)) && (count_cas(false, false), true));
    count_cas(false, true);
    heap_put_partial(d, false);
}

static void check_fail(const struct lf_desc *d, const char *what, uint64_t a, unsigned reserved);

/* ---- malloc (Figure 4) ----------------------------------------------------------------------- */

/* Pop the block reserved by a credit (MallocFromActive lines 7-18 when credits > 0, and
 * MallocFromPartial lines 11-15): the state stays what it is. One attempt inline; the
 * retries out of line. */
static HL_COLD uint32_t pop_retry(struct lf_desc *d);

static inline bool pop_once(struct lf_desc *d, uint64_t *oa, uint32_t *idx)
{
    uint32_t i = a_avail(*oa);
    if (LF_CHECKS && i >= d->maxcount) check_fail(d, "popped a block beyond the superblock", *oa, 0);
    /* The link of the last available block is stale (a previous use of the memory):
     * harmless, as the paper notes, since no one pops before a free links a block in;
     * masked so that it cannot spill into count. */
    uint64_t next = atomic_load_explicit(&d->links[i], RLX) & amask;
    *idx = i;
    return cas64(&d->anchor, oa, ((*oa & ~amask) | next) + tag_one);
}

static HL_COLD uint32_t pop_retry(struct lf_desc *d)
{
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ);
    uint32_t idx;
    do count_cas(false, false);
    while (!pop_once(d, &oa, &idx));
    return idx;
}

static inline uint32_t pop_reserved(struct lf_desc *d)
{
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ);
    uint32_t idx;
    if (hl_likely(pop_once(d, &oa, &idx))) return idx;
    return pop_retry(d);
}

/* MallocFromActive, every case: NULL if Active is NULL. */
static void *from_active(struct lf_heap *h, uint32_t *sz)
{
    uintptr_t old = atomic_load_explicit(&h->active, ACQ), nw;
    bool ok;
    do {
        if (!old) return NULL;
        nw = (old & CREDITS) ? old - 1 : 0;
        ok = atomic_compare_exchange_weak_explicit(&h->active, &old, nw, AR, ACQ);
        count_cas(false, ok);
    } while (!ok);
    struct lf_desc *d = (struct lf_desc *)(old & ~CREDITS);
    if (old & CREDITS) {
        uint32_t idx = pop_reserved(d);
        HL_COUNT(cas_attempts, 1);
        *sz = d->sz;
        return d->base + (size_t)idx * d->sz;
    }
    /* We took the last credit: pop, and reserve more blocks if there are any (else FULL). */
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ), na;
    unsigned idx, more;
    do {
        idx = a_avail(oa);
        if (LF_CHECKS && idx >= d->maxcount) check_fail(d, "popped a block beyond the superblock", oa, 0);
        na = ((oa & ~amask) | (atomic_load_explicit(&d->links[idx], RLX) & amask)) + tag_one;
        more = 0;
        unsigned count = a_count(oa);
        if (count == 0) {
            na = a_with_state(na, FULL);
        } else {
            more = count < MAXCREDITS ? count : MAXCREDITS;
            na -= more * count_one;
        }
        ok = cas64(&d->anchor, &oa, na);
        count_cas(false, ok);
    } while (!ok);
    if (more) update_active(h, d, more);
    *sz = d->sz;
    return d->base + (size_t)idx * d->sz;
}

/* MallocFromPartial. */
static void *from_partial(struct lf_heap *h, uint32_t *sz)
{
    struct lf_desc *d;
    uint64_t oa, na;
    unsigned more;
    bool ok;
retry:
    if (!(d = heap_get_partial(h))) return NULL;
    atomic_store_explicit(&d->heap, h, REL);
    oa = atomic_load_explicit(&d->anchor, ACQ);
    do {
        if (a_state(oa) == EMPTY) {
            desc_retire(d);
            goto retry;
        }
        unsigned count = a_count(oa);              /* PARTIAL: count > 0 */
        more = count - 1 < MAXCREDITS ? count - 1 : MAXCREDITS;
        na = a_with_state(oa - (uint64_t)(more + 1) * count_one, more ? ACTIVE : FULL);
        ok = cas64(&d->anchor, &oa, na);
        count_cas(false, ok);
    } while (!ok);
    uint32_t idx = pop_reserved(d);
    HL_COUNT(cas_attempts, 1);
    if (more) update_active(h, d, more);
    *sz = d->sz;
    return d->base + (size_t)idx * d->sz;
}

/* MallocFromNewSB. NULL with *oom set when the OS refuses memory; NULL alone when another
 * thread installed an active superblock first (the new one is given back, as the paper). */
static void *from_new_sb(struct lf_heap *h, uint32_t *sz, bool *oom)
{
    struct lf_class *sc = h->sc;
    struct lf_desc *d = desc_alloc();
    if (!d) { *oom = true; return NULL; }
    char *sb = sb_alloc();
    if (!sb) { desc_retire(d); *oom = true; return NULL; }
    ((struct lf_sbhdr *)sb)->desc = d;
    d->sb = sb;
    d->base = sb + sc->hdr;
    d->links = (_Atomic uint32_t *)(sb + SB_LINKS);
    d->sz = sc->sz;
    d->maxcount = sc->maxcount;
    d->recip = sc->recip;
    d->free_limit = (uint64_t)(d->maxcount - 1) << ib;
    atomic_store_explicit(&d->heap, h, RLX);
    atomic_store_explicit(&d->live, 1, RLX);
    for (uint32_t i = 1; i + 1 < d->maxcount; i++)
        atomic_store_explicit(&d->links[i], i + 1, RLX);
    uint64_t tag = (atomic_load_explicit(&d->anchor, RLX) + tag_one) & ~(tag_one - 1);
    *sz = d->sz;
    if (d->maxcount == 1) {              /* one block: FULL at once, never active */
        atomic_store_explicit(&d->anchor, tag | (uint64_t)FULL << state_shift, REL);
        return d->base;
    }
    unsigned credits = (d->maxcount - 1 < MAXCREDITS ? d->maxcount - 1 : MAXCREDITS) - 1;
    uint64_t count = (d->maxcount - 1) - (credits + 1);
    atomic_store_explicit(&d->anchor, tag | (uint64_t)ACTIVE << state_shift |
                          count << ib | 1u, REL);
    uintptr_t none = 0;
    bool ok = atomic_compare_exchange_strong_explicit(&h->active, &none,
                                                      (uintptr_t)d | credits, AR, RLX);
    count_cas_once(false);
    if (ok) return d->base;
    atomic_store_explicit(&d->anchor, tag | (uint64_t)EMPTY << state_shift, RLX);
    sb_free(sb);
    desc_retire(d);
    return NULL;
}

/* ---- heap selection ---------------------------------------------------------------------- */

static void *set_new(void)
{
    size_t heaps = hl_align_up(nclasses * sizeof(struct lf_heap), HL_CACHE_LINE);
    struct lf_set *s = hl_meta_alloc(heaps + nclasses * nslots * sizeof(void *));
    _Atomic(struct lf_desc *) *slots = (void *)((char *)s + heaps);
    for (unsigned c = 0; c < nclasses; c++) {
        s->ph[c].sc = &classes[c];
        s->ph[c].partial = slots + (size_t)c * nslots;
    }
    return s;
}

/* heap_select, by selector.c's rule, over sets of processor heaps: thread = the set of the
 * thread's id (a new thread takes over an exited one's, with whatever its Active and Partial
 * hold), hash = id mod heaps, cpu = sched_getcpu() mod heaps, never cached, so a thread that
 * migrates moves at once. Lock-free, the first call included. Sharing a set is always safe:
 * every heap is lock-free. */
static struct lf_set *select_set(void)
{
    struct hl_thread *t = hl_self();
    struct lf_set *s = hl_select(&sel, t->id);
    if (sel.mode != HL_SELECT_CPU) t->heap = s;
    return s;
}

static inline struct lf_set *my_set(void)
{
    struct lf_set *s = hl_me.heap;
    return hl_likely(s != NULL) ? s : select_set();
}

/* ---- checks build ---------------------------------------------------------------------------- */

static HL_COLD void check_fail(const struct lf_desc *d, const char *what, uint64_t a,
                               unsigned reserved)
{
    hl_say("check failed: lockfree descriptor %p (superblock %p, %u x %u bytes): %s; anchor "
           "avail %u count %u state %u, %u reserved by Active", (void *)d, (void *)d->sb,
           d->maxcount, d->sz, what, a_avail(a), a_count(a), a_state(a), reserved);
    abort();
}

/* At a quiescent point: d's avail list holds count + the reserved credits of its heap's
 * Active (credits + 1 if d is active) blocks, all distinct and in range; the state matches. */
static void check_desc(const struct lf_desc *d)
{
    uint64_t a = atomic_load_explicit(&d->anchor, ACQ);
    struct lf_heap *h = atomic_load_explicit(&d->heap, ACQ);
    uintptr_t act = atomic_load_explicit(&h->active, ACQ);
    unsigned reserved = (act & ~CREDITS) == (uintptr_t)d ? (unsigned)(act & CREDITS) + 1 : 0;
    unsigned st = a_state(a), count = a_count(a);
    if (st == EMPTY) {
        if (count != d->maxcount - 1 || reserved) check_fail(d, "EMPTY but not all free", a, reserved);
        return;                          /* its superblock may be reused already */
    }
    if (st == FULL && (count || reserved)) check_fail(d, "FULL with blocks available", a, reserved);
    if (st == PARTIAL && (!count || reserved)) check_fail(d, "PARTIAL but count 0 or active", a, reserved);
    if (st == ACTIVE && !reserved) check_fail(d, "ACTIVE but not its heap's Active", a, reserved);
    unsigned len = count + reserved;
    /* An ACTIVE superblock may have every block available (its reserved ones included); any
     * other has at least one block allocated, or it would be EMPTY. */
    if (len > d->maxcount || (!reserved && len > d->maxcount - 1))
        check_fail(d, "more blocks available than the superblock holds", a, reserved);
    uint64_t seen[64] = {0};             /* distinctness, for up to 4096 blocks */
    unsigned i = a_avail(a);
    for (unsigned k = 0; k < len; k++) {
        if (i >= d->maxcount) check_fail(d, "avail list leaves the superblock", a, reserved);
        if (i < 4096) {
            if (seen[i / 64] >> (i % 64) & 1) check_fail(d, "avail list has a cycle", a, reserved);
            seen[i / 64] |= 1ull << (i % 64);
        }
        i = atomic_load_explicit(&d->links[i], RLX);
    }
}

#define FOREACH_DESC(d)                                                                       \
    for (struct lf_chunk *ch_ = atomic_load_explicit(&chunks, ACQ); ch_; ch_ = ch_->next)    \
        for (struct lf_desc *d = (struct lf_desc *)((char *)ch_ + sizeof(struct lf_desc)),   \
                            *end_ = d + ch_->n; d < end_; d++)                                \
            if (atomic_load_explicit(&d->live, ACQ))

unsigned hl_lockfree_check(void)
{
    unsigned n = 0;
    FOREACH_DESC(d) { check_desc(d); n++; }
    return n;
}

/* Checks build, single-threaded programs: after each operation, the descriptor it touched. */
static inline void check_after(const void *p)
{
    if (LF_CHECKS && hl_thread_count() <= 1) check_desc(desc_of(p));
}

/* ---- the row ---------------------------------------------------------------------------- */

static HL_COLD void *lf_malloc_slow(unsigned c)
{
    struct lf_heap *h = &my_set()->ph[c];
    uint32_t sz = 0;
    bool oom = false;
    void *p;
    for (;;) {
        if ((p = from_active(h, &sz))) break;
        if ((p = from_partial(h, &sz))) break;
        if ((p = from_new_sb(h, &sz, &oom))) break;
        if (oom) { hp_done(); errno = ENOMEM; return NULL; }
    }
    hp_done();
    if (LF_CHECKS) check_after(p);
    return hl_stats_malloc(p, sz);
}

/* The fast path: a credit from Active, then the reserved block (two CAS, no call). */
static inline __attribute__((always_inline)) void *lf_path_malloc(size_t size, bool counted)
{
    unsigned c = hl_class_of(size);
    struct lf_set *s = hl_me.heap;
    if (hl_unlikely(LF_CHECKS || !s)) return lf_malloc_slow(c);
    struct lf_heap *h = &s->ph[c];
    uintptr_t old = atomic_load_explicit(&h->active, RLX);
    if (hl_unlikely(!(old & CREDITS) ||
                    !atomic_compare_exchange_strong_explicit(&h->active, &old, old - 1, AR, RLX)))
        return lf_malloc_slow(c);
    struct lf_desc *d = (struct lf_desc *)(old & ~CREDITS);
    uint32_t idx = pop_reserved(d);
    HL_COUNT_IF(counted, cas_attempts, 2);
    uint32_t sz = d->sz;
    return hl_stats_malloc_if(counted, d->base + (size_t)idx * sz, sz);
}

/* HL_MALLOC_PAIR defines lf_malloc, lf_malloc_entry, lf_malloc_uncounted,
 * lf_malloc_uncounted_entry */
HL_MALLOC_PAIR(static, lf_malloc, lf_path_malloc)

/* Free, every case (Figure 6): the push, FULL -> PARTIAL (HeapPutPartial), and the last
 * block -> EMPTY (free the superblock, RemoveEmptyDesc). */
static HL_COLD void lf_free_slow(struct lf_desc *d, uint32_t idx)
{
    struct hl_hp_rec *r = hl_hp_mine();
    atomic_store_explicit(&r->slot[HP_FREE], d, memory_order_seq_cst);
    uint32_t sz = d->sz;
    struct lf_heap *h = NULL;
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ), na;
    bool ok;
    if (LF_CHECKS && hl_thread_count() <= 1) {
        unsigned len = a_count(oa), i = a_avail(oa);
        uintptr_t act = atomic_load_explicit(&atomic_load_explicit(&d->heap, RLX)->active, RLX);
        if ((act & ~CREDITS) == (uintptr_t)d) len += (unsigned)(act & CREDITS) + 1;
        for (unsigned k = 0; k < len; k++, i = atomic_load_explicit(&d->links[i], RLX))
            if (i == idx) check_fail(d, "double free (block is on the avail list)", oa, len);
    }
    do {
        atomic_store_explicit(&d->links[idx], a_avail(oa), RLX);
        na = (oa & ~amask) | idx;
        if (a_state(oa) == FULL) na = a_with_state(na, PARTIAL);
        if (a_count(oa) == d->maxcount - 1) {
            h = atomic_load_explicit(&d->heap, ACQ);
            na = a_with_state(na, EMPTY);
        } else {
            na += count_one;
        }
        ok = cas64(&d->anchor, &oa, na);
        count_cas(true, ok);
    } while (!ok);
    if (a_state(na) == EMPTY && a_state(oa) == FULL) {
        /* FULL -> EMPTY (a superblock of one block): no list or slot holds d. */
        sb_free(d->sb);
        desc_retire(d);
    } else if (a_state(na) == EMPTY) {
        sb_free(d->sb);
        /* RemoveEmptyDesc. d is hazard-protected, so it cannot have been retired and reused
         * since it went EMPTY: a slot's CAS takes exactly the descriptor that emptied. */
        if (heap_take_empty(h, d, true)) desc_retire(d);
        else list_remove_empty(h->sc);
    } else if (a_state(oa) == FULL) {
        heap_put_partial(d, true);
    }
    hl_hp_clear(r, HP_FREE);
    hp_done();
    hl_stats_free(sz);
}

static HL_COLD void lf_free_retry(struct lf_desc *d, uint32_t idx)
{
    count_cas(true, false);
    lf_free_slow(d, idx);
}

/* The fast path: one push while the superblock neither leaves FULL nor becomes EMPTY (one
 * CAS). Both conditions in one comparison: with the state codes ACTIVE 0, PARTIAL 1, FULL 2,
 * EMPTY 3, (anchor & fmask) < (maxcount - 1) << ib says state < 2 and count < maxcount - 1.
 * A failed CAS goes out of line, where the whole of Figure 6 runs. */
static inline __attribute__((always_inline)) void lf_path_free(void *p, bool counted)
{
    struct lf_desc *d = desc_of(p);
    uint32_t idx = index_of(d, p);
    uint64_t oa = atomic_load_explicit(&d->anchor, ACQ);
    if (hl_unlikely(LF_CHECKS || (oa & fmask) >= d->free_limit)) {
        lf_free_slow(d, idx);
        if (LF_CHECKS && hl_thread_count() <= 1 && atomic_load_explicit(&d->live, ACQ))
            check_desc(d);
        return;
    }
    uint32_t sz = d->sz;                 /* before the CAS: after it, d may empty and go */
    uint64_t avail = oa & amask;
    atomic_store_explicit(&d->links[idx], (uint32_t)avail, RLX);
    if (hl_unlikely(!cas64(&d->anchor, &oa, ((oa ^ avail) | idx) + count_one))) {
        lf_free_retry(d, idx);
        return;
    }
    HL_COUNT_IF(counted, cas_attempts, 1);
    HL_COUNT_IF(counted, cas_free_attempts, 1);
    hl_stats_free_if(counted, sz);
}

/* HL_FREE_PAIR defines lf_free, lf_free_entry, lf_free_uncounted, lf_free_uncounted_entry */
HL_FREE_PAIR(static, lf_free, lf_path_free)

/* Blocks of size + align - 16 bytes, and the aligned address inside; free and usable_size
 * find the block start of any interior pointer by the block index (a multiplication). */
static void *lf_memalign(size_t align, size_t size)
{
    char *p = lf_malloc(size + align - HL_ALIGN);
    if (!p) return NULL;
    return (void *)hl_align_up((uintptr_t)p, align);
}

static size_t lf_usable_size(const void *p)
{
    const struct lf_desc *d = desc_of(p);
    const char *block = d->base + (size_t)index_of(d, p) * d->sz;
    return d->sz - (size_t)((const char *)p - block);
}

/* Thread exit: nothing of the heaps is per thread (a set stays with its id or hash); the
 * thread gives back its hazard-pointer record, retired nodes and all. */
static void lf_thread_exit(struct hl_thread *t)
{
    (void)t;
    hl_hp_release();
}

/* Fork: no lock to take. Every structure is consistent between any two atomic steps, so the
 * child sees each one either before or after any other thread's step; a thread that was in
 * the middle of an operation vanished in the child holding at most what it had reserved (a
 * credit's block, a popped descriptor or superblock): leaked in the child, never corrupt. The
 * vanished threads' hazard records are freed for the child to reuse (their slots cleared). */
static void lf_fork(int phase)
{
    if (phase == HL_FORK_CHILD) hl_hp_fork_child();
}

static void lf_stats(struct hoardlab_stats *s)
{
    uint64_t n[4] = {0}, live = 0;
    FOREACH_DESC(d) {
        n[a_state(atomic_load_explicit(&d->anchor, RLX))]++;
        live++;
    }
    s->sb_active += n[ACTIVE];
    s->sb_partial += n[PARTIAL];
    s->sb_full += n[FULL];
    s->sb_empty += n[EMPTY];
    s->descriptors += live;
    if (LF_CHECKS && hl_thread_count() <= 1) hl_lockfree_check();
}

static int lf_init(void)
{
    sbsize = hl_cfg.superblock_size;
    sbmask = ~(uintptr_t)(sbsize - 1);
    ib = (unsigned)__builtin_ctzll(sbsize / HL_ALIGN);
    amask = ((uint64_t)1 << ib) - 1;
    count_one = (uint64_t)1 << ib;
    state_shift = 2 * ib;
    tag_one = (uint64_t)1 << (2 * ib + 2);
    fmask = (amask << ib) | (uint64_t)2 << state_shift;
    fifo = hl_cfg.partial_list == HL_LIST_FIFO;
    nslots = (unsigned)hl_cfg.partial_slots;
    release_empty = hl_cfg.release_empty;
    nclasses = hl_classes->count;
    classes = hl_meta_alloc(nclasses * sizeof *classes);
    for (unsigned c = 0; c < nclasses; c++) {
        struct lf_class *sc = &classes[c];
        size_t sz = hl_class_size(c);
        size_t n = (sbsize - SB_LINKS) / (sz + sizeof(uint32_t));
        while (n && hl_align_up(SB_LINKS + n * sizeof(uint32_t), HL_CACHE_LINE) + n * sz > sbsize)
            n--;
        if (!n) {
            hl_say("lockfree: blocks of %zu bytes do not fit a %zu-byte superblock with its "
                   "header; raise superblock_size or lower large_threshold", sz, sbsize);
            return -1;
        }
        sc->sz = (uint32_t)sz;
        sc->maxcount = (uint32_t)n;
        sc->hdr = (uint32_t)hl_align_up(SB_LINKS + n * sizeof(uint32_t), HL_CACHE_LINE);
        sc->recip = UINT64_MAX / sz + 1;
        hl_lfq_init(&sc->list);
        if (!fifo) atomic_store_explicit(&sc->list.head, NULL, RLX);
    }
    hl_selector_init(&sel, set_new);
    for (unsigned i = 0; i < sel.n; i++) sel.fixed[i] = set_new();
    return 0;
}

const struct hl_strategy hl_strategy_lockfree = {
    .name = "lockfree",
    .summary = "Michael 2004: lock-free processor heaps, superblock anchors and CAS",
    .defaults = "superblock_size=16K",
    .init = lf_init,
    HL_ROW_PATHS(lf_malloc, lf_free),
    .memalign = lf_memalign,
    .usable_size = lf_usable_size,
    .thread_exit = lf_thread_exit,
    .fork = lf_fork,
    .stats = lf_stats,
};

/* ---- test hooks (lockfree.h) ------------------------------------------------------------- */

void *hl_lockfree_desc_of(const void *p) { return desc_of(p); }

struct hl_lf_anchor hl_lockfree_anchor(const void *desc)
{
    uint64_t a = atomic_load_explicit(&((const struct lf_desc *)desc)->anchor, ACQ);
    return (struct hl_lf_anchor){ a_avail(a), a_count(a), a_state(a), a >> (2 * ib + 2) };
}

unsigned hl_lockfree_maxcount(const void *desc)
{
    return ((const struct lf_desc *)desc)->maxcount;
}

int hl_lockfree_credits(unsigned c, void **desc)
{
    uintptr_t a = atomic_load_explicit(&my_set()->ph[c].active, ACQ);
    *desc = (void *)(a & ~CREDITS);
    return a ? (int)(a & CREDITS) : -1;
}

void *hl_lockfree_partial_slot(unsigned c)
{
    struct lf_heap *h = &my_set()->ph[c];
    unsigned i = nslots > 1 ? atomic_load_explicit(&h->put, RLX) % nslots : 0;
    for (unsigned k = 0; k < nslots; k++, i = i + 1 < nslots ? i + 1 : 0) {
        struct lf_desc *d = atomic_load_explicit(&h->partial[i], ACQ);
        if (d) return d;
    }
    return NULL;
}

void *hl_lockfree_desc_alloc(void) { return desc_alloc(); }
void hl_lockfree_desc_retire(void *desc) { desc_retire(desc); }
void hl_lockfree_hp_flush(void) { hl_hp_scan(hl_hp_mine()); }
void hl_lockfree_list_put(unsigned c, void *desc) { list_put(&classes[c], desc, false); }
void *hl_lockfree_list_get(unsigned c) { return list_get(&classes[c], false); }
