/* tlab.c — the thread-local allocation buffers (tlab.h), the front of cache = thread
 * (fronts.c's table: hl_tlab_front): their paths, built once for every row from tlab.h's fast
 * halves, and their slow halves: setting a thread's bins up, refilling a bin (refill.h),
 * giving a batch back to the blocks' owners, the flush at thread exit and at
 * hoardlab_collect, the gauge, U's unseen part, fork and start. Each later Hoard key has its
 * file (docs/hoard2026.md): tlab_sb_cache.c, tlab_scavenge.c, tlab_adaptive.h,
 * tlab_prefetch.c, and tlab_remote.c for the runs of remote frees; tlab_bins.c is the layout
 * and state they share, below them all (each has its section of tlab.h). Two keys act here:
 *   tlab_foreign   home: a block whose superblock the TLAB's heap does not own never enters
 *                  the TLAB; it goes to its owner heap (the row's own free, or remote.h).
 *                  adopt: the freeing thread's TLAB keeps it (the bin's batch goes back to
 *                  each block's owner when it overflows).
 *   tlab_refill, tlab_flush   blocks per refill and per overflow (cache.h's
 *                  hl_cache_refill_n, hl_cache_flush_n).
 * Invariants: tlab_bins.c's (who writes a bin; room and seen move together on the slow
 * paths); the registry's lock is a leaf; a TLAB leaves the live list before it is pooled. */
#include <string.h>
#include "refill.h"
#include "tlab_adaptive.h"

#define none (hl_tlab_none_tlab.bin)
const uint16_t *hl_tlab_slot16;
static struct hl_tlab *pool;
/* remote_free = list | queue | batch and tlab_foreign = home: a free of another heap's block
 * goes straight to remote.h (hl_tlab_free_slow). */
static bool remote_direct;
static hl_tlab_free_fn free_other_batch;
/* The row behind the TLAB (cache.h): its refill, its policy after a free, its own paths. */
static struct hl_cache_row row;

/* After the heaps, with cache = thread: the limits from tlab_budget, the class table of bin
 * offsets, and each key's start. */
static void init(void)
{
    hl_tlab_limit_bytes = 0;
    for (unsigned c = 0; c < hl_classes->count; c++) {
        hl_tlab_limit[c] = hl_tlab_limit_of(hl_cfg.tlab_budget, c);
        hl_tlab_limit_bytes += (size_t)hl_tlab_limit[c] * hl_class_size(c);
    }
    uint16_t *slot16 = hl_meta_alloc(hl_classes->granules * sizeof *slot16);
    for (size_t g = 0; g < hl_classes->granules; g++)
        slot16[g] = (uint16_t)hl_cache_slot(hl_classes->of16[g]);
    hl_tlab_slot16 = slot16;
    hl_tlab_remote_start();
    remote_direct = hl_remote_mode && hl_cfg.tlab_foreign != HL_FOREIGN_ADOPT;
    hl_tlab_free_other = remote_direct && hl_remote_mode == HL_REMOTE_BATCH ? free_other_batch
                                                                             : hl_tlab_free_slow;
    hl_tlab_sb_cache_start();            /* its lookup in front of hl_tlab_free_other */
    hl_tlab_u_by_bins = hl_cache_u_left();
}

/* The heap to refill from and give back to: the thread's (cpu selection: re-read now). */
static struct hl_heap *heap_now(void)
{
    hl_heap_recheck_cpu();
    struct hl_heap *h = hl_heap_mine();
    struct hl_tlab *t = hl_tlab_mine();
    if (hl_cfg.tlab_sb_cache && t->heap != h)      /* the entries were the old heap's */
        hl_tlab_sb_cache_reset(t->sbc, &t->sbc_gen, t->sbc_gen);
    t->heap = h;
    return h;
}

/* An empty bin takes its spare chain as its own (its blocks are in the bin's room already). */
static bool spare_to_bin(struct hl_tlab_bin *b, struct hl_tlab_spare *spare)
{
    if (b->head || !spare->head) return false;
    b->head = spare->head;
    spare->head = NULL;
    return true;
}

/* The calling thread's bins, if it may have them (a live registered thread): set up, out of
 * line, so that the common call, which finds them, saves no register (a remote free's slow
 * half calls it every time). */
static __attribute__((noinline)) bool set_up_bins(void)
{
    if (hl_me.state != 1) return false;
    hl_lock_acquire(&hl_tlab_reg_lock);
    struct hl_tlab *t = pool;
    if (t) pool = t->next;
    hl_lock_release(&hl_tlab_reg_lock);
    if (!t) t = hl_meta_alloc(sizeof *t + (hl_classes->count + 1) * sizeof(struct hl_tlab_bin)
                              + hl_classes->count * sizeof(struct hl_tlab_spare));
    struct hl_tlab_bin *bin = hl_tlab_bins_of(t);
    memset(hl_tlab_spares(bin), 0, hl_classes->count * sizeof(struct hl_tlab_spare));
    for (unsigned c = 0; c <= hl_classes->count; c++) {     /* the bypass bin's limit is 0 */
        bin[c].head = NULL;
        bin[c].limit = c < hl_classes->count ? hl_tlab_limit[c] : 0;
        HL_OWN_SET(bin[c].room, (int32_t)bin[c].limit);
        if (c < hl_classes->count) HL_OWN_SET(hl_tlab_spares(bin)[c].seen, bin[c].room);
    }
    t->budget = hl_cfg.tlab_budget;
    t->limit_bytes = hl_tlab_limit_bytes;
    t->slow = 0;
    t->heap = hl_heap_mine();
    if (hl_cfg.tlab_sb_cache) hl_tlab_sb_cache_reset(t->sbc, &t->sbc_gen, 0);   /* pooled: old */
    if (hl_tlab_scavenging) {
        t->in = &hl_me.tlab_in;
        t->seen_rooms = 0;
        if (!hl_tlab_guarded) {          /* (inside a slow half: released by its leave) */
            hl_lock_take(&t->guard);
            hl_tlab_guarded = t;
        }
    }
    hl_lock_acquire(&hl_tlab_reg_lock);
    t->prev = NULL;
    t->next = hl_tlab_live;
    if (hl_tlab_live) hl_tlab_live->prev = t;
    hl_tlab_live = t;
    hl_lock_release(&hl_tlab_reg_lock);
    hl_me.tlab_bins = bin;
    return true;
}
static bool setup(void) { return hl_tlab_own_bins() || set_up_bins(); }

/* A chain of blocks back to their superblocks: cache.h's hl_cache_give_back, one copy out of
 * line for this file's slow halves, with the row's policy after a free. */
static void give_back(struct hl_heap *h, void *chain)
{
    hl_cache_give_back(h, chain);
}

/* refill.h's steps for a bin of class c: the runs a drain returned into the bins
 * (tlab_remote.c), then the spare chain into an empty bin; and the collection of h's pending
 * remote frees, whose runs the bins take likewise. */
static void *keep_runs(struct hl_heap *h, void *runs, unsigned c)
{
    void *rest = runs ? hl_tlab_remote_take_runs(h, runs) : NULL;
    spare_to_bin(&hl_me.tlab_bins[c], &hl_tlab_spares(hl_me.tlab_bins)[c]);
    return rest;
}
static void collect_runs(struct hl_heap *h, unsigned c)
{
    hl_tlab_remote_collect(h);
    spare_to_bin(&hl_me.tlab_bins[c], &hl_tlab_spares(hl_me.tlab_bins)[c]);
}

/* The slow halves (tlab.h). A row calls the TLAB's paths only with cache = thread (fronts.c
 * installs them then), so neither tests the key. Never inlined into this file's fast paths,
 * which stay as they were built in the rows' files before (tools/hoardlab cost). */
__attribute__((noinline)) void *hl_tlab_malloc_slow(size_t size)
{
    unsigned c = hl_class_of(size);
    if (!setup()) return row.malloc(size);
    if (!hl_me.tlab_bins[c].limit) {     /* bypassed: joins once the budget holds a block */
        if (hl_cfg.tlab_adaptive) hl_tlab_adaptive_fit(hl_me.tlab_bins, c);
        if (!hl_me.tlab_bins[c].limit) return row.malloc(size);
    }
    hl_tlab_publish_unseen(hl_me.tlab_bins, c);
    hl_tlab_adaptive_refilled(hl_me.tlab_bins, c);
    struct hl_tlab_bin *b = &hl_me.tlab_bins[c];
    struct hl_tlab_spare *spare = &hl_tlab_spares(hl_me.tlab_bins)[c];
    struct hl_tlab *t = hl_tlab_mine();
    void *first;
    if (spare_to_bin(b, spare)) {        /* no lock */
        first = b->head;
        b->head = *(void **)first;
        hl_tlab_move_uncounted(hl_me.tlab_bins, c, 1);
        if (hl_cfg.tlab_sb_cache) hl_tlab_sb_cache_fill(t->sbc, &t->sbc_gen, hl_sb_of(first));
        return hl_stats_malloc(first, hl_class_size(c));
    }
    uint32_t n = hl_cache_refill(c, &b->head, b->limit, heap_now, keep_runs, collect_runs);
    if (!(first = b->head)) return NULL;
    b->head = *(void **)first;           /* the caller's block: room + 1 below */
    hl_tlab_move_uncounted(hl_me.tlab_bins, c, -((int32_t)n - 1));
    if (hl_cfg.tlab_sb_cache) hl_tlab_sb_cache_fill(t->sbc, &t->sbc_gen, hl_sb_of(first));
    return hl_stats_malloc(first, hl_class_size(c));
}

/* The slow half but for remote frees (hl_tlab_free_slow), out of line so that those save no
 * register. */
static __attribute__((noinline)) void free_slow(void *p)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_heap *owner = atomic_load_explicit(&sb->owner, memory_order_relaxed);
    bool adopt = hl_cfg.tlab_foreign == HL_FOREIGN_ADOPT;
    /* A thread's first free may come before its first malloc: set up, then test the owner. */
    if (!setup() || (owner != hl_tlab_mine()->heap && !adopt) ||
        atomic_load_explicit(&sb->interior, memory_order_relaxed) ||
        !hl_me.tlab_bins[sb->cls].limit) {
        row.free(p);
        return;
    }
    struct hl_tlab_bin *b = &hl_me.tlab_bins[sb->cls];
    hl_tlab_publish_unseen(hl_me.tlab_bins, sb->cls);
    struct hl_tlab_spare *spare = &hl_tlab_spares(hl_me.tlab_bins)[sb->cls];
    if (b->room <= 0 && spare->head) {   /* full: the spare goes back first */
        void *chain = spare->head;
        spare->head = NULL;
        hl_tlab_move_uncounted(hl_me.tlab_bins, sb->cls, (int32_t)spare->n);
        give_back(heap_now(), chain);             /* (may fill the spare again) */
    }
    if (b->room <= 0) {                  /* full: the newest blocks go back, p stays */
        uint32_t on_head = b->limit - (uint32_t)b->room - (spare->head ? spare->n : 0);
        uint32_t k = hl_cache_flush_n(b->limit) < on_head ? hl_cache_flush_n(b->limit) : on_head;
        void *chain = b->head, *last = chain;
        for (uint32_t i = 1; i < k; i++) last = *(void **)last;
        b->head = *(void **)last;
        *(void **)last = NULL;
        hl_tlab_move_uncounted(hl_me.tlab_bins, sb->cls, (int32_t)k);
        if (hl_cfg.tlab_adaptive) hl_tlab_adaptive_shrink(hl_me.tlab_bins, sb->cls);
        give_back(heap_now(), chain);
        struct hl_tlab *t = hl_tlab_mine();
        if (hl_cfg.tlab_sb_cache && owner == t->heap)
            hl_tlab_sb_cache_fill(t->sbc, &t->sbc_gen, sb);
    }
    *(void **)p = b->head;
    b->head = p;
    hl_tlab_move_uncounted(hl_me.tlab_bins, sb->cls, -1);
    hl_stats_free(sb->size);
}

__attribute__((noinline)) void hl_tlab_free_slow(void *p, struct hl_sb *sb)
{
    struct hl_heap *owner = atomic_load_explicit(&sb->owner, memory_order_relaxed);
    /* remote_free = list | queue | batch: a block of another thread's heap goes straight to
     * remote.h, as the row's own free would send it (heappaths.h), without the calls between. */
    if (remote_direct && owner != hl_me.heap && hl_me.heap) {
        hl_remote_free(sb, hl_sb_block(sb, p));
        return;
    }
    free_slow(p);
}

/* hl_tlab_free_other under remote_free = batch: a block of another thread's heap straight
 * into the calling thread's remote cache, remote.h's common free inline, where
 * hl_tlab_free_slow would pass it on to hl_remote_free (docs/hoard2026.md: the remote pair's
 * free 72 -> 49 instructions); anything else (the thread's own heap that is not its TLAB's, a
 * thread without a heap, a memalign'd inner pointer) as there. */
static void free_other_batch(void *p, struct hl_sb *sb)
{
    struct hl_heap *owner = atomic_load_explicit(&sb->owner, memory_order_relaxed);
    struct hl_heap *h = hl_me.heap;
    if (hl_likely(owner != h && h && !atomic_load_explicit(&sb->interior, memory_order_relaxed))) {
        hl_remote_batch_free(sb, owner, p);
        return;
    }
    hl_tlab_free_slow(p, sb);
}

/* The slow halves the guarded fast paths call (tlab_scavenge.c): the same, holding the guard.
 * A free of another heap's block too, whose path may put it into the bins (tlab_sb_cache,
 * tlab_foreign = adopt). */
static hl_tlab_free_fn *free_other_unguarded;
__attribute__((noinline)) void *hl_tlab_malloc_slow_guarded(size_t size)
{
    hl_tlab_scavenge_enter();
    void *p = hl_tlab_malloc_slow(size);
    hl_tlab_scavenge_leave();
    return p;
}
__attribute__((noinline)) void hl_tlab_free_slow_guarded(void *p, struct hl_sb *sb)
{
    hl_tlab_scavenge_enter();
    hl_tlab_free_slow(p, sb);
    hl_tlab_scavenge_leave();
}
static void free_other_guarded(void *p, struct hl_sb *sb)
{
    hl_tlab_scavenge_enter();
    free_other_unguarded(p, sb);
    hl_tlab_scavenge_leave();
}

/* The TLAB leaves the live list; then, its guard released (scavenging: the purge thread
 * finds TLABs in the live list only, holding the registry's lock), it is pooled. */
void hl_tlab_thread_exit(void)
{
    if (!hl_tlab_own_bins()) return;
    hl_tlab_scavenge_enter();
    struct hl_tlab *t = hl_tlab_mine();
    struct hl_tlab_bin *bin = hl_me.tlab_bins;
    struct hl_heap *h = heap_now();
    hl_me.tlab_bins = none;                 /* from here on, this thread bypasses the TLAB */
    hl_tlab_give_back_beyond(bin, h, false, true);
    hl_lock_acquire(&hl_tlab_reg_lock);
    if (t->prev) t->prev->next = t->next;
    else hl_tlab_live = t->next;
    if (t->next) t->next->prev = t->prev;
    if (hl_tlab_scavenging) {
        hl_lock_release(&hl_tlab_reg_lock);
        hl_tlab_scavenge_leave();
        hl_lock_acquire(&hl_tlab_reg_lock);
    }
    t->prev = NULL;
    t->next = pool;
    pool = t;
    hl_lock_release(&hl_tlab_reg_lock);
}

/* hoardlab_collect: the calling thread's bins given back as at its exit, but kept (its next
 * malloc refills), each limit back at its start (tlab_adaptive's growth undone). */
void hl_tlab_flush(void)
{
    if (!hl_tlab_own_bins()) return;
    hl_tlab_scavenge_enter();
    struct hl_tlab *t = hl_tlab_mine();
    struct hl_tlab_bin *bin = hl_me.tlab_bins;
    hl_tlab_give_back_beyond(bin, heap_now(), false, true);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        HL_OWN_SET(bin[c].room, (int32_t)hl_tlab_limit[c]);
        __atomic_store_n(&bin[c].limit, hl_tlab_limit[c], __ATOMIC_RELAXED);
        HL_OWN_SET(hl_tlab_spares(bin)[c].seen, bin[c].room);
    }
    t->budget = hl_cfg.tlab_budget;
    t->limit_bytes = hl_tlab_limit_bytes;
    t->slow = 0;
    hl_tlab_scavenge_leave();
}

size_t hl_tlab_bytes(void)
{
    size_t bytes = 0;
    hl_lock_acquire(&hl_tlab_reg_lock);
    for (struct hl_tlab *t = hl_tlab_live; t; t = t->next) {
        struct hl_tlab_bin *bin = hl_tlab_bins_of(t);
        for (unsigned c = 0; c < hl_classes->count; c++) {
            /* limit and room are two loads: between an owner's two stores (a shrink lowers
             * both) they may give a negative count, which the gauge must not wrap */
            int64_t held = (int64_t)__atomic_load_n(&bin[c].limit, __ATOMIC_RELAXED) -
                           __atomic_load_n(&bin[c].room, __ATOMIC_RELAXED);
            if (held > 0)
                bytes += (size_t)held * hl_class_size(c);
        }
    }
    hl_lock_release(&hl_tlab_reg_lock);
    return bytes;
}

int64_t hl_tlab_unseen(bool mine)
{
    int64_t bytes = 0;
    if (mine) {                          /* the thread's own: no lock, marked seen */
        if (!hl_tlab_own_bins()) return 0;
        /* Scavenging: outside the slow halves (a publication under a heap's lock, which the
         * purge thread takes holding the guard), the guard by trylock; held, the purge thread
         * is taking the bins, and U sees them at a later publication. */
        struct hl_tlab *held = hl_tlab_scavenging && !hl_tlab_guard_depth
                               ? hl_tlab_of(hl_me.tlab_bins) : NULL;
        if (held && !hl_trylock(&held->guard)) return 0;
        struct hl_tlab_bin *bin = hl_me.tlab_bins;
        struct hl_tlab_spare *side = hl_tlab_spares(bin);
        /* at every publication of U: most bins have not moved since (a compare each) */
        for (unsigned c = 0, n = hl_classes->count; c < n; c++)
            if (bin[c].room != side[c].seen) bytes += hl_tlab_take_unseen(bin, c);
        if (held) hl_lock_release(&held->guard);
        return bytes;
    }
    hl_lock_acquire(&hl_tlab_reg_lock);
    for (struct hl_tlab *t = hl_tlab_live; t; t = t->next) {
        struct hl_tlab_bin *bin = hl_tlab_bins_of(t);
        struct hl_tlab_spare *side = hl_tlab_spares(bin);
        for (unsigned c = 0; c < hl_classes->count; c++)
            bytes += (int64_t)(__atomic_load_n(&bin[c].room, __ATOMIC_RELAXED) -
                               __atomic_load_n(&side[c].seen, __ATOMIC_RELAXED))
                     * (int64_t)hl_class_size(c);
    }
    hl_lock_release(&hl_tlab_reg_lock);
    return bytes;
}

/* Fork: in the child only the forking thread lives on; its TLAB stays registered, the other
 * threads' are dropped (their blocks stay counted in use in their heaps: tlab.h). */
void hl_tlab_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        hl_lock_acquire(&hl_tlab_reg_lock);
        return;
    }
    if (phase == HL_FORK_PARENT) {
        hl_lock_release(&hl_tlab_reg_lock);
        return;
    }
    hl_lock_init(&hl_tlab_reg_lock);
    hl_tlab_live = NULL;
    if (hl_tlab_own_bins()) {
        hl_tlab_live = hl_tlab_mine();
        hl_tlab_live->next = hl_tlab_live->prev = NULL;
    }
}

/* The TLAB's fast paths, built once for every row (stats.h's pairs over tlab.h's inline
 * halves): uncounted, counted with U left to the bins, and exact (every call counts U:
 * stats_batch = 0); each again guarded (tlab_scavenge_ms), and each malloc again with
 * tlab_prefetch's prefetch (the frees are the same); tlab_sb_cache does not change them (its
 * work is on the slow halves). TLAB_MALLOCS(m, ...) defines m, m_uncounted and m_exact, each
 * with its _entry; TLAB_FREES(f, ...) likewise; TLAB_ROW(m, f) is their three paths.
 * They define tlab_malloc, tlab_malloc_entry, tlab_malloc_uncounted,
 * tlab_malloc_uncounted_entry, tlab_malloc_exact, tlab_malloc_exact_entry,
 * tlab_malloc_prefetch, tlab_malloc_prefetch_entry, tlab_malloc_prefetch_uncounted,
 * tlab_malloc_prefetch_uncounted_entry, tlab_malloc_prefetch_exact,
 * tlab_malloc_prefetch_exact_entry, tlab_malloc_guarded, tlab_malloc_guarded_entry,
 * tlab_malloc_guarded_uncounted, tlab_malloc_guarded_uncounted_entry,
 * tlab_malloc_guarded_exact, tlab_malloc_guarded_exact_entry, tlab_malloc_prefetch_guarded,
 * tlab_malloc_prefetch_guarded_entry, tlab_malloc_prefetch_guarded_uncounted,
 * tlab_malloc_prefetch_guarded_uncounted_entry, tlab_malloc_prefetch_guarded_exact,
 * tlab_malloc_prefetch_guarded_exact_entry, tlab_free, tlab_free_entry, tlab_free_uncounted,
 * tlab_free_uncounted_entry, tlab_free_exact, tlab_free_exact_entry, tlab_free_guarded,
 * tlab_free_guarded_entry, tlab_free_guarded_uncounted, tlab_free_guarded_uncounted_entry,
 * tlab_free_guarded_exact and tlab_free_guarded_exact_entry. */
#define TLAB_MALLOCS(m, prefetch, guarded)                                                     \
    HL_MALLOC_PAIR(static, m, hl_tlab_malloc, false, prefetch, guarded)                        \
    HL_MALLOC_BUILD(static, m##_exact, hl_tlab_malloc, true, true, prefetch, guarded)
#define TLAB_FREES(f, guarded)                                                                 \
    HL_FREE_PAIR(static, f, hl_tlab_free, false, guarded)                                      \
    HL_FREE_BUILD(static, f##_exact, hl_tlab_free, true, true, guarded)
#define TLAB_ROW(m, f)                                                                         \
    {HL_PATHS(m##_uncounted, f##_uncounted), HL_PATHS(m, f), HL_PATHS(m##_exact, f##_exact)}
TLAB_MALLOCS(tlab_malloc, false, false)
TLAB_MALLOCS(tlab_malloc_prefetch, true, false)
TLAB_MALLOCS(tlab_malloc_guarded, false, true)
TLAB_MALLOCS(tlab_malloc_prefetch_guarded, true, true)
TLAB_FREES(tlab_free, false)
TLAB_FREES(tlab_free_guarded, true)
static const struct hl_paths paths[2][2][3] = {        /* [prefetch][guarded][counting] */
    {TLAB_ROW(tlab_malloc, tlab_free), TLAB_ROW(tlab_malloc_guarded, tlab_free_guarded)},
    {TLAB_ROW(tlab_malloc_prefetch, tlab_free),
     TLAB_ROW(tlab_malloc_prefetch_guarded, tlab_free_guarded)},
};

static const struct hl_paths *start(const struct hl_cache_row *behind)
{
    row = *behind;
    init();
    bool guarded = hl_tlab_scavenge_start();
    if (guarded) {
        free_other_unguarded = hl_tlab_free_other;
        hl_tlab_free_other = free_other_guarded;
    }
    return &paths[hl_tlab_prefetch_on()][guarded]
                 [!hl_cfg.counting ? 0 : hl_tlab_u_by_bins ? 1 : 2];
}

/* The TLAB's line of fronts.c's table. Each member does nothing for a thread without bins, so
 * fronts.c calls them whichever front the key chose. */
const struct hl_front hl_tlab_front = {
    .cache = HL_CACHE_THREAD,
    .start = start,
    .refill = hl_tlab_malloc_slow,
    .thread_exit = hl_tlab_thread_exit,
    .fork_outer = hl_tlab_scavenge_fork,
    .fork = hl_tlab_fork,
    .flush = hl_tlab_flush,
    .bytes = hl_tlab_bytes,
    .unseen = hl_tlab_unseen,
};
