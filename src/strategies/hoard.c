/* hoard — private heaps with thresholds (Hoard, ASPLOS 2000, Figure 2): per-processor heaps
 * plus the global heap 0. A freed block goes back to its superblock in the owner heap, as in
 * `ownership`; what Hoard adds is the emptiness threshold: when a per-processor heap holds
 * too much free memory, it gives a mostly-empty superblock to the global heap, and a heap that
 * runs out takes superblocks from the global heap before it asks the OS. That bounds blowup
 * to O(1) (§4.1) where ownership's is O(P).
 *
 * u and a are kept per size class (heap.h says why); the threshold applies to the class of
 * the block just freed, as the paper's single-class exposition does for its one class. With
 * accounting = heap they are the heap's, over all classes, as in the paper's u_i and a_i:
 * the threshold then applies to the heap, and the superblock given away may be of any class.
 * Figure 2 locks the superblock and then its owner heap; here the owner heap's lock guards
 * its superblocks too, and free re-reads the owner after locking (hl_heap_lock_owner), which
 * gives the same exclusion with one lock fewer. Lock order: a per-processor heap, then the
 * global heap; never the reverse.
 *
 * The 2026 Hoard's knobs (docs/hoard2026.md), each usable alone:
 *   tlab            a thread-local buffer per size class in front of the heap (core tlab.c,
 *                   one of the fronts of core fronts.c: cache = thread);
 *   global_shards   the global heap as n heaps, each with its lock (core globalheap.c);
 *   heap_select=cpu the heap of the CPU the thread runs on (core heapselect.c).
 * And mimalloc's free-list sharding (free_lists = sharded: core sharded.h), the threshold kept.
 * `hoard2026` (hoard2026.c) is this code with those on by default. */
#include <stdlib.h>
#include "hoard.h"

static double f;                 /* empty fraction */
static bool per_heap;            /* accounting = heap */
static size_t k_bytes;           /* K * S: free memory a heap may hold regardless of f */
static size_t check_k_bytes;     /* what the checker allows, see hoard_check */

/* The emptiness threshold (§3.1; Figure 2, free, line 9): a per-processor heap has crossed
 * it when more than the fraction f of its memory is free, u < (1 - f) a, and more than K
 * superblocks' worth is free, u < a - K S. Crossing it moves a superblock to the global
 * heap; never having crossed it after a free is Hoard's invariant
 *     (u >= a - K S) or (u >= (1 - f) a),
 * which bounds each heap's free memory and so blowup (Theorem 1). */
bool hl_hoard_crosses_threshold(size_t u, size_t a, double f_, size_t k_s)
{
    return u + k_s < a && (double)u < (1.0 - f_) * (double)a;
}

/* The threshold as the heap keeps it (hl_heap_floor): the least u that does not cross it for
 * this a, so free compares u with it instead of doing the arithmetic above. Crossing is
 * monotone in u, so start from the closed form and settle on the exact boundary. */
static size_t u_floor(const struct hl_heap *h, size_t a)
{
    if (hl_heap_is_shard(h) || a <= k_bytes) return 0;
    size_t fl = a - k_bytes, by_f = (size_t)((1.0 - f) * (double)a);
    if (by_f < fl) fl = by_f;
    while (fl > 0 && !hl_hoard_crosses_threshold(fl - 1, a, f, k_bytes)) fl--;
    while (hl_hoard_crosses_threshold(fl, a, f, k_bytes)) fl++;
    return fl;
}

/* Checks build: h's lists and counts (hl_heap_check), and Hoard's invariant in the account
 * of class c of a per-processor heap; c = -1: every class. With accounting = heap the
 * invariant holds after a free only (a malloc that takes a superblock for a class with none
 * free may leave the heap's free memory, in other classes, above the bound until the next
 * free: heap.h), so `freed` says whether to test it. */
static void hoard_check(struct hl_heap *h, int c, bool freed)
{
    hl_heap_check(h, c);
    if (hl_heap_is_shard(h) || (per_heap && !freed)) return;
    unsigned first = c < 0 ? 0 : (unsigned)c, end = c < 0 ? hl_classes->count : first + 1;
    for (unsigned k = first; k < end; k++) {
        const struct hl_account *ac = h->cls[k].acct;
        if (hl_hoard_crosses_threshold(ac->u, ac->a, f, check_k_bytes)) {
            hl_say("check failed: hoard invariant broken in heap %u, %s %u (%zu bytes): "
                   "u %zu < a %zu - K*S %zu and u < (1 - f %.3f) * a", h->index,
                   per_heap ? "accounting = heap, at class" : "class", k, hl_class_size(k),
                   ac->u, ac->a, check_k_bytes, f);
            abort();
        }
    }
}

/* The rest of Figure 2's malloc, lines 5-14: heap i has no room for class c. Take a
 * superblock from the global heap (globalheap.c), and only if there is none, a new one from
 * the OS. (cpu selection: the thread re-reads its CPU here, for its next call.) */
static void *refill(struct hl_heap *h, unsigned c)
{
    hl_heap_recheck_cpu();
    hl_purge_tick();                                     /* purge = decay, purge_delay */
    struct hl_sb *sb = hl_global_get(h, c);
    if (!sb) {
        if (!(sb = hl_sb_new(c))) return NULL;
        hl_heap_attach(h, sb);
    }
    void *p = hl_heap_alloc_from(h, sb);
    if (HL_INVARIANT_CHECKS) hoard_check(h, -1, false);
    return p;
}

/* Figure 2, free, lines 10-12: move a superblock of class c (accounting = heap: preferably c,
 * else any class) that is at least f empty from h to the global heap (or, with
 * release_empty, a completely empty one to the OS). One always exists while the threshold is
 * crossed: if every superblock of the account were less than f empty, its u would be at
 * least (1 - f) a. */
static bool give_to_global(struct hl_heap *h, unsigned c)
{
    struct hl_sb *s1 = hl_heap_emptiest(h, c, f);
    for (unsigned k = 0; !s1 && per_heap && k < hl_classes->count; k++)
        s1 = hl_heap_emptiest(h, k, f);
    if (!s1) return false;
    hl_global_put(h, s1);
    return true;
}

/* Figure 2's malloc in heap h: lines 3-4 (a block of the fullest superblock of h), else
 * lines 5-14 (refill). Used by tests on chosen heaps; the row's malloc (heappaths.h) is the
 * same, with the calling thread's heap and its fast path. */
void *hl_hoard_malloc_in(struct hl_heap *h, size_t size)
{
    unsigned c = hl_class_of(size);
    hl_heap_lock(h);
    void *p = hl_heap_alloc_sb(h, c);
    if (!p) p = refill(h, c);
    if (HL_INVARIANT_CHECKS) hoard_check(h, -1, false);
    hl_heap_unlock(h);
    return p;
}

/* Figure 2's free, lines 8-12, after the block went back into its superblock (lines 3-7,
 * heap.h): the policy that makes Hoard Hoard. */
static void after_free(struct hl_heap *h, struct hl_sb *sb)
{
    unsigned c = sb->cls;
    if (HL_INVARIANT_CHECKS) hl_sb_check(sb);
    if (hl_heap_is_shard(h)) {                           /* line 8 */
        if (hl_cfg.release_empty && hl_sb_empty(sb)) {
            hl_heap_detach(h, sb);
            hl_sb_release(sb);
        } else if (hl_sb_empty(sb)) {
            hl_purge_park(sb);                           /* purge, retain (purge.c) */
        }
    } else {
        /* Line 9. Figure 2 moves one superblock; when the one moved was barely f empty, the
         * heap can still be a block short of the invariant, so move until it holds. */
        struct hl_account *ac = h->cls[c].acct;
        while (ac->u < ac->u_floor && give_to_global(h, c)) {}
        /* purge on: an empty superblock goes to the global heap at once, where purge.c keeps
         * it (retain) or gives its pages back. A heap never purges, so one kept under the K
         * allowance held its pages for good: 2 threads' home heaps kept 24 MiB of empty
         * superblocks after a burst (issue 36, the heaps_empty_bytes statistic). The owner
         * first: line 9 may have moved sb to the global heap, whose lock we do not hold. */
        if (hl_cfg.purge != HL_PURGE_OFF &&
            atomic_load_explicit(&sb->owner, memory_order_relaxed) == h && hl_sb_empty(sb))
            hl_global_put(h, sb);
    }
    if (HL_INVARIANT_CHECKS) hoard_check(h, (int)c, true);
}

/* What Hoard adds to the heap paths of heappaths.c (and their sharded ones, sharded.c) and
 * the fronts of fronts.c: Figure 2's refill and after-free, the threshold as a floor, and
 * the global heap. */
static const struct hl_heap_policy hoard_policy = {
    .refill = refill, .after_free = after_free, .floor = u_floor, .global_heap = true,
};

int hl_hoard_init(void)
{
    f = hl_cfg.empty_fraction;
    per_heap = hl_cfg.accounting == HL_ACCOUNT_HEAP;
    k_bytes = (size_t)hl_cfg.release_threshold * hl_cfg.superblock_size;
    /* With K = 0, Figure 2's malloc itself leaves a heap one superblock short of the
     * invariant whenever it adds a superblock to a class whose superblocks are all full
     * (u = a - S + sz); the next free in that class restores it. With K >= 1 malloc keeps
     * it. So the checker allows max(K, 1) superblocks. */
    check_k_bytes = (hl_cfg.release_threshold ? (size_t)hl_cfg.release_threshold : 1)
                    * hl_cfg.superblock_size;
    hl_fronts_start(&hoard_policy);
    return 0;
}

const struct hl_strategy hl_strategy_hoard = {
    .name = "hoard",
    .summary = "Hoard: per-processor heaps with an emptiness threshold and a global heap",
    .init = hl_hoard_init,
    HL_ROW_PATHS(hl_heap_row_malloc, hl_heap_row_free),
    /* HL_FRONTS_HEAP_ROW: hl_heaps_memalign, hl_heaps_usable_size, hl_fronts_thread_exit,
     * hl_fronts_fork, hl_fronts_stats */
    HL_FRONTS_HEAP_ROW,
};
