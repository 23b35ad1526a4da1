/* heap.c — the private heap: fullness-group lists, superblocks moving in and out, recycling
 * of empty superblocks for any class, and the checks build's consistency verification: the
 * heap's structure, which heap selection (heapselect.c) and remote frees (remote.h) use.
 * The block-level steps are inline in heap.h; the strategies' paths are in heappaths.{c,h}. */
#include <stdlib.h>
#include "heap.h"
#include <sys/mman.h>
#include <time.h>

unsigned hl_heap_groups;
size_t (*hl_heap_floor)(const struct hl_heap *h, size_t a);
hl_refill_fn hl_heap_refill;
hl_after_free_fn hl_heap_after_free;
void (*hl_heap_observer)(const struct hl_heap *h, const struct hl_sb *sb, unsigned from,
                         unsigned to);

/* ---- purge_holes: the bounds (holes.c's observer purges) ---------------------------------- */

enum { HOLES_STEP = 4 };

void hl_heap_holes_bound(struct hl_sb *sb)
{
    if (hl_unlikely(sb->holes) && sb->group_hi > hl_sb_hole_bound(sb))
        sb->group_hi = hl_sb_hole_bound(sb);
    /* In the lowest group, group_lo (0 there) becomes a quarter of `used`: the free that
     * quarters it regroups (into the same group), and the observer purges again (purge.c).
     * Never below 2, so a lone superblock that empties stays in the group (set_bounds). */
    if (sb->list == 0 && sb->used / HOLES_STEP >= 2) sb->group_lo = sb->used / HOLES_STEP;
}

void hl_heap_init(void)
{
    hl_heap_groups = (unsigned)hl_cfg.fullness_groups;
}

struct hl_heap *hl_heap_new(unsigned index, bool shared)
{
    unsigned n = hl_classes->count, lists = hl_heap_groups + 3;   /* hl_heap_sharded_sb too */
    size_t head = hl_align_up(sizeof(struct hl_heap) + n * sizeof(struct hl_heap_class),
                              sizeof(void *));
    struct hl_heap *h = hl_meta_alloc(head + (size_t)n * lists * sizeof(struct hl_sb *));
    struct hl_sb **heads = (struct hl_sb **)((char *)h + head);
    for (unsigned c = 0; c < n; c++) {
        h->cls[c].list = heads + (size_t)c * lists + 1;
        h->cls[c].acct = hl_cfg.accounting == HL_ACCOUNT_HEAP ? &h->total : &h->cls[c].own;
    }
    hl_lock_init(&h->lock);
    h->index = index;
    h->shared = shared;
    h->collect_in = 1;       /* its first malloc takes the general path, which starts the
                              * countdown to collecting remote frees (heappaths.c) */
    return h;
}

/* The accounts nobody charges stay 0, so the sums serve both kinds of accounting. */
size_t hl_heap_u(const struct hl_heap *h)
{
    size_t u = h->total.u;
    for (unsigned c = 0; c < hl_classes->count; c++) u += h->cls[c].own.u;
    return u;
}

size_t hl_heap_a(const struct hl_heap *h)
{
    size_t a = h->total.a;
    for (unsigned c = 0; c < hl_classes->count; c++) a += h->cls[c].own.a;
    return a;
}

void hl_heap_lock_slow(struct hl_heap *h)
{
    hl_lock_slow(&h->lock);
    HL_COUNT_AT(h->contended, 1);
}

/* ---- lists ------------------------------------------------------------------------------- */

/* The range of `used` that keeps sb in `list`: group g of the partly used ones holds
 * used * G / capacity == g, i.e. used in [ceil(g cap / G), ceil((g + 1) cap / G)). Kept in
 * sb so that the fast paths compare instead of dividing. The lowest group also keeps a
 * superblock that empties while it is alone there (the paper's lowest bin runs "to completely
 * empty"), so a lone superblock going 1 -> 0 -> 1 blocks in use stays put; beside others it
 * goes to the EMPTY list (hl_heap_must_regroup), so that malloc, taking the first of the
 * lowest group, never picks an empty superblock over a partly used one. take_empty and
 * hl_heap_emptiest find a lone emptied one through nempty. */
static void set_bounds(struct hl_sb *sb, unsigned list)
{
    uint64_t cap = sb->capacity, g = list, G = hl_heap_groups;
    if (list == HL_LIST_EMPTY) {
        sb->group_lo = 0, sb->group_hi = 1;
    } else if (list == HL_LIST_FULL) {
        sb->group_lo = sb->capacity, sb->group_hi = sb->capacity + 1;
    } else {
        uint64_t lo = (g * cap + G - 1) / G, hi = ((g + 1) * cap + G - 1) / G;
        sb->group_lo = (uint32_t)(lo <= 1 ? 0 : lo);
        sb->group_hi = (uint32_t)(hi > cap ? cap : hi);
    }
}

/* sb at the front of list, its bounds untouched. */
static void link_front(struct hl_heap *h, struct hl_sb *sb, unsigned list)
{
    struct hl_sb **head = &h->cls[sb->cls].list[list];
    sb->prev = NULL;
    sb->next = *head;
    if (*head) (*head)->prev = sb;
    *head = sb;
    sb->list = (uint8_t)list;
    if (list < hl_heap_groups) h->cls[sb->cls].groups |= 1ull << list;
}

void hl_heap_list_push(struct hl_heap *h, struct hl_sb *sb, unsigned list)
{
    link_front(h, sb, list);
    set_bounds(sb, list);
}

void hl_heap_list_unlink(struct hl_heap *h, struct hl_sb *sb)
{
    if (sb->prev) sb->prev->next = sb->next;
    else if (!(h->cls[sb->cls].list[sb->list] = sb->next) && sb->list < hl_heap_groups)
        h->cls[sb->cls].groups &= ~(1ull << sb->list);
    if (sb->next) sb->next->prev = sb->prev;
    sb->next = sb->prev = NULL;
    sb->list = HL_LIST_NONE;
}

void hl_heap_move_to_front(struct hl_heap *h, struct hl_sb *sb)
{
    unsigned list = sb->list;
    hl_heap_list_unlink(h, sb);
    link_front(h, sb, list);            /* same list: same bounds */
}

static HL_COLD void regroup_observed(struct hl_heap *h, struct hl_sb *sb, unsigned to)
{
    hl_heap_observer(h, sb, sb->list, to);
    hl_heap_list_unlink(h, sb);
    hl_heap_list_push(h, sb, to);
    if (hl_cfg.purge_holes) hl_heap_holes_bound(sb);
}

void hl_heap_regroup(struct hl_heap *h, struct hl_sb *sb)
{
    unsigned to = hl_heap_group_of(sb);
    if (hl_unlikely(hl_heap_observer)) {
        regroup_observed(h, sb, to);
        return;
    }
    hl_heap_list_unlink(h, sb);
    hl_heap_list_push(h, sb, to);
}

struct hl_heap *hl_heap_lock_owner(const struct hl_sb *sb)
{
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    for (;;) {
        hl_heap_lock(h);
        struct hl_heap *now = atomic_load_explicit(&sb->owner, memory_order_relaxed);
        if (hl_likely(now == h)) return h;
        hl_heap_unlock(h);
        h = now;
    }
}

/* ---- superblocks in and out ------------------------------------------------------------- */

void hl_heap_attach(struct hl_heap *h, struct hl_sb *sb)
{
    struct hl_heap_class *k = &h->cls[sb->cls];
    struct hl_account *ac = k->acct;
    ac->u += hl_sb_in_use(sb);
    ac->a += hl_sb_bytes(sb);
    if (hl_heap_floor) ac->u_floor = hl_heap_floor(h, ac->a);
    k->nsb++;
    h->nsb++;
    if (hl_sb_empty(sb)) h->nempty++;
    atomic_store_explicit(&sb->owner, h, memory_order_release);
    hl_heap_list_push(h, sb, hl_heap_group_of(sb));
    if (hl_unlikely(hl_heap_observer)) hl_heap_observer(h, sb, HL_LIST_NONE, sb->list);
}

void hl_heap_detach(struct hl_heap *h, struct hl_sb *sb)
{
    struct hl_heap_class *k = &h->cls[sb->cls];
    struct hl_account *ac = k->acct;
    if (hl_unlikely(hl_heap_observer)) hl_heap_observer(h, sb, sb->list, HL_LIST_NONE);
    hl_heap_list_unlink(h, sb);
    if (hl_unlikely(hl_sb_sharded)) {
        if (*hl_heap_sharded_sb(k) == sb) *hl_heap_sharded_sb(k) = NULL;
        /* whoever takes sb next pops its free list once (then sharded.c takes over): it
         * must hold a block if sb has a free one */
        if (!sb->free_head) hl_sb_swap_local(sb);
    }
    ac->u -= hl_sb_in_use(sb);
    ac->a -= hl_sb_bytes(sb);
    if (hl_heap_floor) ac->u_floor = hl_heap_floor(h, ac->a);
    k->nsb--;
    h->nsb--;
    if (hl_sb_empty(sb)) h->nempty--;
}

/* Any completely empty superblock of h, detached and formatted for class c. */
static struct hl_sb *take_empty(struct hl_heap *h, unsigned c)
{
    if (!h->nempty) return NULL;
    struct hl_sb *sb = h->cls[c].list[HL_LIST_EMPTY];
    for (unsigned k = 0; !sb && k < hl_classes->count; k++)
        sb = h->cls[k].list[HL_LIST_EMPTY];
    /* Superblocks that emptied in place (set_bounds): the slow search, rarely needed. */
    for (unsigned k = 0; !sb && k < hl_classes->count; k++)
        for (unsigned l = 0; !sb && l < hl_heap_groups; l++)
            for (struct hl_sb *s = h->cls[k].list[l]; s && !sb; s = s->next)
                if (hl_sb_empty(s)) sb = s;
    if (!sb) return NULL;
    hl_heap_detach(h, sb);
    if (sb->cls != c) hl_sb_format(sb, c);
    return sb;
}

void *hl_heap_alloc_empty(struct hl_heap *h, unsigned c)
{
    struct hl_sb *sb = h->cls[c].list[HL_LIST_EMPTY];
    if (!sb) {
        if (!(sb = take_empty(h, c))) return NULL;
        hl_heap_attach(h, sb);
    }
    return hl_heap_alloc_from(h, sb);
}

uint32_t hl_heap_alloc_chain(struct hl_heap *h, unsigned c, uint32_t want, void **head,
                             void **tail)
{
    struct hl_heap_class *k = &h->cls[c];
    if (!k->groups || !want) return 0;
    struct hl_sb *sb = k->list[63 - __builtin_clzll(k->groups)];
    uint32_t room = sb->capacity - sb->used, n = want < room ? want : room, got = 0;
    /* freed blocks first, as hl_sb_pop: the chain is the free list's first n (FIFO: free_tail
     * stays valid while free_head is), then blocks never handed out, linked here */
    void *first = sb->free_head, *last = NULL, *p = first;
    for (; got < n && p; got++) p = *(void **)(last = p);
    sb->free_head = p;
    if (got < n) {
        /* purge_holes: holes taken back before carving (a list they leave empty regroups
         * below: used reached group_hi, superblock.h) */
        while (hl_unlikely(sb->holes) && got < n) {
            void *q = hl_sb_unhole(sb);
            if (last) *(void **)last = q;
            else first = q;
            for (; got < n && q; got++) q = *(void **)(last = q);
            sb->free_head = q;
        }
    }
    if (got < n) {
        size_t size = sb->size;
        char *q = (char *)sb + HL_SB_HEADER + (size_t)sb->carved * size;
        if (last) *(void **)last = q;
        else first = q;
        sb->carved += n - got;
        /* counted, so that the unrolled loop tests once per four blocks: a store and an add
         * a block (a refill of a fresh superblock carves all 64) */
#pragma GCC unroll 4
        for (uint32_t k = n - got - 1; k > 0; k--, q += size) *(void **)q = q + size;
        last = q;
    }
    if (sb->used == 0) h->nempty--;
    sb->used += n;
    k->acct->u += (size_t)n * sb->size;
    if (sb->used >= sb->group_hi) hl_heap_regroup(h, sb);
    *head = first;
    *tail = last;
    return n;
}

struct hl_sb *hl_heap_take(struct hl_heap *h, unsigned c)
{
    struct hl_heap_class *k = &h->cls[c];
    for (unsigned g = hl_heap_groups; g-- > 0;)
        if (k->list[g]) {
            struct hl_sb *sb = k->list[g];
            hl_heap_detach(h, sb);
            return sb;
        }
    return take_empty(h, c);
}

struct hl_sb *hl_heap_emptiest(struct hl_heap *h, unsigned c, double f)
{
    struct hl_heap_class *k = &h->cls[c];
    if (k->list[HL_LIST_EMPTY]) return k->list[HL_LIST_EMPTY];
    /* One that emptied in place (set_bounds) — move-to-front keeps it near the front. Giving
     * away a completely empty superblock first keeps live blocks of this heap's threads out
     * of other heaps (no false sharing through the global heap). */
    for (unsigned g = 0; h->nempty && g < hl_heap_groups; g++)
        for (struct hl_sb *sb = k->list[g]; sb; sb = sb->next)
            if (hl_sb_empty(sb)) return sb;
    for (unsigned g = 0; g < hl_heap_groups; g++)
        for (struct hl_sb *sb = k->list[g]; sb; sb = sb->next)
            if ((double)hl_sb_in_use(sb) <= (1.0 - f) * (double)hl_sb_bytes(sb)) return sb;
    return NULL;
}

/* ---- checks ---------------------------------------------------------------------------- */

#define FAIL(...) do { hl_say("check failed: " __VA_ARGS__); abort(); } while (0)

/* Class c's lists and superblocks; their u and a are added to *u_sum and *a_sum, and checked
 * against the class's own account when it charges that one. */
static void check_class(const struct hl_heap *h, unsigned c, uint32_t *empties, size_t *u_sum,
                        size_t *a_sum)
{
    const struct hl_heap_class *k = &h->cls[c];
    size_t u = 0, a = 0;
    uint32_t n = 0;
    for (unsigned l = 0; l < hl_heap_groups + 2; l++) {
        const struct hl_sb *prev = NULL;
        if (l < hl_heap_groups && !k->list[l] != !(k->groups >> l & 1))
            FAIL("heap %u class %u: group bitmap %#llx disagrees with list %u", h->index, c,
                 (unsigned long long)k->groups, l);
        for (const struct hl_sb *sb = k->list[l]; sb; prev = sb, sb = sb->next) {
            if (sb->magic != HL_SB_MAGIC || sb->used > sb->carved || sb->carved > sb->capacity)
                FAIL("heap %u class %u: superblock %p has a damaged header", h->index, c,
                     (void *)sb);
            if (atomic_load_explicit(&sb->owner, memory_order_relaxed) != h)
                FAIL("heap %u class %u: superblock %p on its list %u is owned by another heap",
                     h->index, c, (void *)sb, l);
            if (sb->cls != c || sb->list != l || sb->prev != prev)
                FAIL("heap %u class %u list %u: superblock %p says class %u list %u, or its "
                     "back link is wrong", h->index, c, l, (void *)sb, sb->cls, sb->list);
            bool emptied = sb->used == 0 && sb->group_lo == 0 && l < hl_heap_groups;
            if ((hl_heap_group_of(sb) != l && !emptied) || sb->used < sb->group_lo ||
                sb->used >= sb->group_hi)
                FAIL("heap %u class %u: superblock %p with %u of %u blocks used sits in list "
                     "%u, belongs in %u", h->index, c, (void *)sb, sb->used, sb->capacity, l,
                     hl_heap_group_of(sb));
            u += hl_sb_in_use(sb);
            a += hl_sb_bytes(sb);
            if (hl_sb_empty(sb)) ++*empties;
            if (++n > (1u << 30)) FAIL("heap %u class %u: list %u has a cycle", h->index, c, l);
        }
    }
    bool own = k->acct == &k->own;      /* else the heap's account: hl_heap_check sums */
    if ((own && (u != k->own.u || a != k->own.a)) || n != k->nsb)
        FAIL("heap %u class %u: u %zu a %zu superblocks %u, but its superblocks hold u %zu "
             "a %zu and number %u", h->index, c, k->own.u, k->own.a, k->nsb, u, a, n);
    *u_sum += u;
    *a_sum += a;
}

void hl_heap_check(const struct hl_heap *h, int c)
{
    size_t u = 0, a = 0;
    if (c >= 0) {
        uint32_t empties = 0;
        check_class(h, (unsigned)c, &empties, &u, &a);
        if (empties > h->nempty)
            FAIL("heap %u: %u empty superblocks in class %d, %u in all", h->index, empties, c,
                 h->nempty);
        return;
    }
    uint32_t n = 0, empties = 0;
    for (unsigned k = 0; k < hl_classes->count; k++) {
        check_class(h, k, &empties, &u, &a);
        n += h->cls[k].nsb;
    }
    if (a != hl_heap_a(h) || n != h->nsb || empties != h->nempty || u != hl_heap_u(h))
        FAIL("heap %u: totals u %zu a %zu superblocks %u empty %u, but its classes sum to "
             "u %zu a %zu superblocks %u empty %u", h->index, hl_heap_u(h), hl_heap_a(h),
             h->nsb, h->nempty, u, a, n, empties);
}
