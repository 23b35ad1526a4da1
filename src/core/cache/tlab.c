/* tlab.c — the thread-local allocation buffers' paths, built once for every row from tlab.h's
 * fast halves (the front of cache = thread: fronts.c), and their slow halves: setting a
 * thread's bins up, refilling a bin from the heap, giving a batch back to the blocks' owners,
 * the flush at thread exit, the gauge and fork.
 *
 * The later Hoard's TLAB elements, each a key (docs/hoard2026.md):
 *   tlab_foreign   home: a block whose superblock the TLAB's heap does not own never enters
 *                  the TLAB; it goes to its owner heap (the row's own free, or remote.h). adopt:
 *                  the freeing thread's TLAB keeps it (the bin's batch goes back to each
 *                  block's owner when it overflows: give_back).
 *   tlab_adaptive  the thread's budget per class starts at tlab_budget and doubles after
 *                  every 16 refills (not overflows: note_slow), up to 16 MiB; a bin's limit
 *                  follows it at the bin's own refills, while the whole TLAB's limits stay
 *                  within 16 MiB beyond their start (Hoard's cap is per TLAB: fit), and
 *                  drops back toward its start at each overflow (shrink).
 *   tlab_refill    blocks per refill: half the bin's limit (half), or limit / 8 =
 *                  budget / (8 x class size) (batch); at least 1, at most 64.
 *   tlab_flush     blocks an overflowing bin gives back: half its limit (half), or as many
 *                  as it holds (batch); at least 1, at most 64. */
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "purge.h"
#include "tlab.h"

/* Threads without bins of their own point here: heap NULL, no blocks, limit 0, so both fast
 * paths leave at once. Never written. */
static struct {
    struct hl_tlab t;
    struct hl_tlab_bin bin[HL_MAX_CLASSES + 1];          /* + the bypass bin */
} none_tlab;
#define none (none_tlab.bin)
struct hl_tlab_bin *const hl_tlab_none = none;
const uint16_t *hl_tlab_slot16;

static uint32_t limit[HL_MAX_CLASSES];   /* tlab_budget / class size */
static size_t limit_bytes;               /* what those limits hold in all, in bytes */
#define ADAPT_EVERY 16                   /* tlab_adaptive: slow paths per doubling */
#define ADAPT_MAX ((size_t)16 << 20)     /* tlab_adaptive: the largest budget */
/* A leaf lock: nothing else is taken while it is held (hl_meta_alloc runs outside it). */
static hl_lock reg_lock = HL_LOCK_INIT;
static struct hl_tlab *live, *pool;
/* The fast paths leave U to the bins' room (tlab.h's Accounting): counting = on and
 * stats_batch > 0. */
static bool u_by_bins;
/* remote_free = list | queue | batch and tlab_foreign = home: a free of another heap's block
 * goes straight to remote.h (hl_tlab_free_slow) */
static bool remote_direct;
/* remote_free = list (without free_lists = sharded, whose lists are walked) or batch: a
 * collection returns runs for the bins to take (hl_tlab_collect); queue returns none. */
static bool runs_come_back;
/* The row behind the TLAB (cache.h): its refill, its policy after a free, its own paths. */
static struct hl_cache_row row;

static uint32_t limit_of(size_t budget, unsigned c)
{
    size_t n = budget / hl_class_size(c);
    return n > INT32_MAX ? INT32_MAX : (uint32_t)n;          /* room is signed */
}

static hl_tlab_free_fn free_other_batch, free_other_sbc;
static hl_tlab_free_fn *free_other_uncached;     /* hl_tlab_free_other without the cache */

/* After the heaps, with tlab = on: the limits from tlab_budget; true when the fast paths
 * leave U to the bins. */
static bool init(void)
{
    long ways = hl_cfg.tlab_sb_cache;
    if (ways && !hl_is_pow2((size_t)ways))
        hl_die("tlab_sb_cache = %ld: not a power of two; valid: 0 (off), 1, 2, 4, 8, 16, 32, 64",
               ways);
    hl_tlab_sbc_mask = ways ? ((uintptr_t)ways - 1) * sizeof(struct hl_tlab_sbc) : 0;
    hl_tlab_sbc_shift = (unsigned)__builtin_ctzl(hl_sb_size) - 4;
    limit_bytes = 0;
    for (unsigned c = 0; c < hl_classes->count; c++) {
        limit[c] = limit_of(hl_cfg.tlab_budget, c);
        limit_bytes += (size_t)limit[c] * hl_class_size(c);
    }
    uint16_t *slot16 = hl_meta_alloc(hl_classes->granules * sizeof *slot16);
    for (size_t g = 0; g < hl_classes->granules; g++)
        slot16[g] = (uint16_t)hl_cache_slot(hl_classes->of16[g]);
    hl_tlab_slot16 = slot16;
    runs_come_back = (hl_remote_mode == HL_REMOTE_LIST && !hl_sb_sharded) ||
                     hl_remote_mode == HL_REMOTE_BATCH;
    remote_direct = hl_remote_mode && hl_cfg.tlab_foreign != HL_FOREIGN_ADOPT;
    hl_tlab_free_other = remote_direct && hl_remote_mode == HL_REMOTE_BATCH ? free_other_batch
                                                                             : hl_tlab_free_slow;
    if (ways) {
        free_other_uncached = hl_tlab_free_other;
        hl_tlab_free_other = free_other_sbc;
    }
#ifdef HL_STATS
    u_by_bins = hl_cfg.counting && hl_cfg.stats_batch > 0;
#endif
    if (u_by_bins) hl_stats_unseen_fn = hl_tlab_unseen;
    return u_by_bins;
}

unsigned hl_tlab_sbc_shift;
uintptr_t hl_tlab_sbc_mask;

/* The superblock cache's entries dropped (the generation seen is gen now): a TLAB taken
 * from the pool, whose heap changed, or whose free found hl_sb_generation moved. */
static void sbc_reset(struct hl_tlab *t, uint64_t gen)
{
    for (uintptr_t i = 0; i <= hl_tlab_sbc_mask / sizeof t->sbc[0]; i++) t->sbc[i].sb = 0;
    t->sbc_gen = gen;
}

static struct hl_tlab *mine(void) { return hl_tlab_of(hl_me.tlab_bins); }
/* The calling thread has bins of its own (NULL: before its first slow call, interpose.c's ready). */
static bool own_bins(void) { return hl_me.tlab_bins && hl_me.tlab_bins != none; }

/* ---- scavenging: the owner's side (tlab.h) --------------------------------------------------
 * tlab_scavenge_ms > 0 and membarrier registered: the fast paths are the guarded ones, and the
 * slow halves that touch the bins hold the TLAB's guard, taken once however deep they nest (a
 * slow half that starts the purge thread mallocs again inside it: pthread_create). setup()
 * takes the guard of bins it sets up before another thread can find them. */
static bool scavenging;
static HL_TLS unsigned guard_depth;
static HL_TLS struct hl_tlab *guarded;   /* whose guard the calling thread holds */

static void guard_enter(void)
{
    if (scavenging && guard_depth++ == 0 && own_bins()) {
        guarded = mine();
        hl_lock_take(&guarded->guard);
    }
}
static void guard_leave(void)
{
    if (scavenging && --guard_depth == 0 && guarded) {
        hl_lock_release(&guarded->guard);
        guarded = NULL;
    }
}

/* The superblock cache (tlab.h): sb's entry in t. */
static struct hl_tlab_sbc *sbc_entry(struct hl_tlab *t, const struct hl_sb *sb)
{
    return (struct hl_tlab_sbc *)((char *)t->sbc +
                                  (((uintptr_t)sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask));
}
/* The entries are good if the generation has not moved since they were filed; else they are
 * dropped (and filed under the new one). The acquire: a slot read after it is no older. */
static bool sbc_current(struct hl_tlab *t)
{
    uint64_t gen = atomic_load_explicit(&hl_sb_generation, memory_order_acquire);
    if (hl_likely(t->sbc_gen == gen)) return true;
    sbc_reset(t, gen);
    return false;
}
/* A refill or a flush of the calling thread's bins used sb, which the TLAB's heap owned: its
 * entry now (tlab_sb_cache > 0). Filed under the generation read before the slot, so a
 * change after it drops the entry at its next use. */
static void sbc_fill(struct hl_sb *sb)
{
    struct hl_tlab *t = mine();
    sbc_current(t);
    struct hl_tlab_sbc *e = sbc_entry(t, sb);
    if (e->sb == (uintptr_t)sb) return;
    e->sb = (uintptr_t)sb;
    e->slot = HL_WORD_LOAD(sb->tlab_slot);
    HL_COUNT(tlab_sb_fills, 1);
}

/* What a bin's slow paths keep out of the fast paths' way, one per class, after the bins
 * (tlab_spares):
 * - a second chain (head, n): the runs taken whole from the heap's remote frees (list: a
 *   superblock's collected list; batch: a run of one superblock's blocks in a message), in
 *   front of one another, so oldest first. Its n blocks count in the bin's room; the bin's
 *   slow paths use it first: an empty bin takes it as its chain without a lock
 *   (spare_to_bin), free gives it back before flushing;
 * - seen: the bin's room when U last counted it (u_by_bins; tlab.h's Accounting). The
 *   slow paths change both together (move): a refill, a give-back, a collected list or a new
 *   limit is no block of the program's, and the block a slow path hands out or takes back
 *   it counts itself. */
struct tlab_spare { void *head; uint32_t n; int32_t seen; };
static struct tlab_spare *tlab_spares(struct hl_tlab_bin *bins)
{
    return (struct tlab_spare *)(bins + hl_classes->count + 1);
}

/* What the program did with bin c since U last saw it (the fast paths' malloc and free, each
 * a block of room), in bytes; the bin is marked seen. */
static int64_t take_unseen(struct hl_tlab_bin *bins, unsigned c)
{
    int32_t *seen = &tlab_spares(bins)[c].seen, was = *seen;
    HL_OWN_SET(*seen, bins[c].room);
    return (int64_t)(bins[c].room - was) * (int64_t)hl_class_size(c);
}
/* U counts it at the start of the bin's slow paths (marked seen before the shift, which may
 * publish, and publishing counts the thread's unseen bins: hl_tlab_unseen). */
static void see(struct hl_tlab_bin *bins, unsigned c)
{
    if (u_by_bins) hl_stats_shift(take_unseen(bins, c));
}
/* The slow paths' change of bin c's room by n blocks, which U does not count (above). */
static void move(struct hl_tlab_bin *bins, unsigned c, int32_t n)
{
    HL_OWN_ADD(bins[c].room, n);
    HL_OWN_ADD(tlab_spares(bins)[c].seen, n);
}

/* hl_tlab_free_other with tlab_sb_cache: p, a block of sb, whose owner is not the TLAB's heap,
 * into its bin if sb's entry e is good and the bin has room (the slow half's count); false:
 * the free goes on as without the cache. */
static __attribute__((noinline)) bool sbc_push(void *p, struct hl_sb *sb, struct hl_tlab_sbc *e)
{
    if (!own_bins() || !sbc_current(mine())) return false;
    struct hl_tlab_bin *bins = hl_me.tlab_bins, *b = hl_tlab_bin_at(bins, e->slot);
    if (b->room <= 0) return false;      /* full, or the bypass bin: the slow half decides */
    unsigned c = (unsigned)(b - bins);
    see(bins, c);
    *(void **)p = b->head;
    b->head = p;
    move(bins, c, -1);
    HL_COUNT(tlab_sb_hits, 1);
    hl_stats_free(sb->size);
    return true;
}
/* The lookup first, before any test of the thread's bins: the shared array's entries are all
 * empty (never written), and a miss, the common case of a block of another heap, costs the
 * remote free no more than the lookup (tools/hoardlab cost's remote column). */
static void free_other_sbc(void *p, struct hl_sb *sb)
{
    struct hl_tlab_sbc *e = sbc_entry(mine(), sb);
    if (hl_unlikely(e->sb == (uintptr_t)sb) && sbc_push(p, sb, e)) return;
    free_other_uncached(p, sb);
}

/* An empty bin takes its spare chain as its own (its blocks are in the bin's room already). */
static bool spare_to_bin(struct hl_tlab_bin *b, struct tlab_spare *spare)
{
    if (b->head || !spare->head) return false;
    b->head = spare->head;
    spare->head = NULL;
    return true;
}

/* The runs of a chain (remote.h) that h's inbox returned (a superblock's collected list, or
 * a run of one superblock's blocks in a batch message) into the calling thread's bins, when
 * its TLAB fills from h: the owner's way back (issue 51), snmalloc's "a message's blocks
 * straight into the slab the owner allocates from next". A run whose bin has room for it and
 * for one free more goes in whole and unwalked (its blocks are read when handed out) in front
 * of the bin's spare chain, which the bin takes as its chain once empty. Runs come newest
 * first and a sender builds each in the order it freed (sender.h), so the blocks go out again
 * in the order they were freed: a consumer that frees a batch in the order it received it
 * gives its producer the same neighbouring blocks again. (Before, the first run became the
 * chain of an empty bin, the second its spare and the rest went in front of the first, and
 * sender built runs newest first: on xfree's shape a batch's blocks of one class came back as
 * a permutation of the superblock's, 0.07 of them one block from the next by address against
 * snmalloc's 1.00, and touched 33 pages a batch against its 10; now 0.90 and 14.)
 * A longer run is cut where the bin is full (its first blocks walked, rest = run_cut):
 * the first part into the bin, the rest a run of its own; an interior superblock's slot is
 * the bypass bin, with no room. The blocks stay counted in their superblock and h, as every
 * block in a TLAB is, and leave remote_pending (once for the chain). Writes the bins only (so
 * no lock is needed). Returns the runs (and rests) the bins did not take, linked as they
 * came, for hl_remote_settle under h's lock. */
static void *take_runs(struct hl_heap *h, void *runs)
{
    struct hl_tlab_bin *bins = hl_me.tlab_bins;
    if (!runs || !own_bins() || hl_tlab_of(bins)->heap != h) return runs;
    void *rest = NULL, **rest_link = &rest;
    struct tlab_spare *spares = tlab_spares(bins);       /* (read once: the stores below */
    uint64_t taken = 0;                                   /* may alias hl_classes) */
    while (runs) {
        uintptr_t meta = ((uintptr_t *)runs)[1];
        void *last = HL_RUN_LAST(meta), *next = *(void **)last, *tail = last;
        uint32_t n = HL_RUN_N(meta);
        struct hl_sb *sb = hl_sb_of(runs);
        struct hl_tlab_bin *b = hl_tlab_bin_at(bins, HL_WORD_LOAD(sb->tlab_slot));
        int32_t fit = b->room - 1;                          /* (a free then still fits) */
        if (fit <= 0) {                                     /* full, or the bypass bin */
            *rest_link = runs;
            rest_link = (void **)last;
            runs = next;
            continue;
        }
        if ((uint32_t)fit < n) {                            /* cut: the rest waits */
            tail = runs;
            for (int32_t i = 1; i < fit; i++) tail = *(void **)tail;
            void *cut = *(void **)tail;
            hl_run_mark(cut, last, n - (uint32_t)fit);
            *rest_link = cut;
            rest_link = (void **)last;
            n = (uint32_t)fit;
        }
        taken += (uint64_t)n * sb->size;
        struct tlab_spare *spare = &spares[b - bins];
        *(void **)tail = spare->head;                       /* in front of the spare chain */
        spare->n = (spare->head ? spare->n : 0) + n;
        spare->head = runs;
        HL_OWN_ADD(b->room, -(int32_t)n);                 /* move(), with spares read once */
        HL_OWN_ADD(spare->seen, -(int32_t)n);
        runs = next;
    }
    *rest_link = NULL;
    HL_COUNT(remote_pending, (uint64_t)0 - taken);
    return rest;
}

void hl_tlab_collect(struct hl_heap *h)
{
    if (!runs_come_back) {
        hl_remote_collect(h);
        return;
    }
    void *rest = take_runs(h, hl_remote_collect_runs(h));
    if (rest) hl_remote_settle(h, rest);
}

static struct hl_tlab_bin *bins_of(struct hl_tlab *t) { return (struct hl_tlab_bin *)(t + 1); }

/* The heap to refill from and give back to: the thread's (cpu selection: re-read now). */
static struct hl_heap *heap_now(void)
{
    hl_heap_recheck_cpu();
    struct hl_heap *h = hl_heap_mine();
    if (hl_cfg.tlab_sb_cache && mine()->heap != h)      /* the entries were the old heap's */
        sbc_reset(mine(), mine()->sbc_gen);
    mine()->heap = h;
    return h;
}


/* tlab_adaptive: a refill of class c (note_slow); every ADAPT_EVERY-th doubles the budget.
 * An overflow does not count: a thread that frees more than it allocates (a consumer, a
 * thread draining a burst) would only grow a TLAB that holds free blocks for nobody (issue
 * 36: a main thread freeing its workers' blocks held 239 MiB so). Bin c's limit follows the
 * budget at its refills and at its first malloc while bypassed (fit; the room with it, and
 * limit is read by hl_tlab_bytes in other threads) as far as the TLAB's cap allows: its
 * limits may hold ADAPT_MAX bytes beyond those it started with, all classes together, so one
 * class can reach the largest budget but a TLAB never holds 16 MiB of every class. Hoard's
 * ceiling (16 MiB, MAX_MEMORY_PER_TLAB) is the TLAB's; with it per class, an idle thread kept
 * up to 16 MiB of free blocks of each class it had freed into (issue 36: 178 MiB after a
 * 200 MiB burst of 12 classes). Classes catch up at their own refills, so the busy ones
 * take the cap; an overflow lowers the limit again (shrink). */
static void fit(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    uint32_t want = limit_of(t->budget, c);
    if (want <= bin[c].limit) return;
    size_t size = hl_class_size(c), left = limit_bytes + ADAPT_MAX - t->limit_bytes;
    uint32_t more = want - bin[c].limit;
    if ((size_t)more * size > left) more = (uint32_t)(left / size);
    if (!more) return;
    t->limit_bytes += (size_t)more * size;
    move(bin, c, (int32_t)more);
    __atomic_store_n(&bin[c].limit, bin[c].limit + more, __ATOMIC_RELAXED);
}
/* tlab_adaptive: bin c overflowed and gave a batch back (its room is that batch now); its limit
 * drops by the batch less the one block p takes, to no less than where it started. Only
 * refills grow a limit (fit), so in a thread that stops allocating the class and frees into it
 * (a drain) the bin, once full, overflows at every free and gives a batch back, until it is
 * at its start (tlab_budget): drained by a little more than its grown limit, a bin holds no
 * more than a fresh thread's. Without it the bins stayed as full as their grown limits (issue
 * 36: phased's two threads, idle after a 2 x 100 MiB burst, kept up to the 16 MiB cap each).
 * TCMalloc's thread caches shrink a list's max_length on overflows likewise (by a batch every
 * third). A phase that frees no more than the bin's limit never overflows (threadtest's rounds
 * keep their blocks in the TLAB), and a class allocated again grows back at its refills. */
static void shrink(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    if (bin[c].limit <= limit[c] || bin[c].room <= 1) return;
    uint32_t cut = (uint32_t)bin[c].room - 1;
    if (cut > bin[c].limit - limit[c]) cut = bin[c].limit - limit[c];
    t->limit_bytes -= (size_t)cut * hl_class_size(c);
    move(bin, c, -(int32_t)cut);
    __atomic_store_n(&bin[c].limit, bin[c].limit - cut, __ATOMIC_RELAXED);
}
static void note_slow(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    if (!hl_cfg.tlab_adaptive) return;
    if (++t->slow % ADAPT_EVERY == 0 && t->budget < ADAPT_MAX)
        t->budget = t->budget * 2 > ADAPT_MAX ? ADAPT_MAX : t->budget * 2;
    fit(bin, c);
}

/* The calling thread's bins, if it may have them (a live registered thread): set up, out of
 * line, so that the common call, which finds them, saves no register (a remote free's slow
 * half calls it every time). */
static __attribute__((noinline)) bool set_up_bins(void)
{
    if (hl_me.state != 1) return false;
    hl_lock_acquire(&reg_lock);
    struct hl_tlab *t = pool;
    if (t) pool = t->next;
    hl_lock_release(&reg_lock);
    if (!t) t = hl_meta_alloc(sizeof *t + (hl_classes->count + 1) * sizeof(struct hl_tlab_bin)
                              + hl_classes->count * sizeof(struct tlab_spare));
    struct hl_tlab_bin *bin = bins_of(t);
    memset(tlab_spares(bin), 0, hl_classes->count * sizeof(struct tlab_spare));
    for (unsigned c = 0; c <= hl_classes->count; c++) {     /* the bypass bin's limit is 0 */
        bin[c].head = NULL;
        bin[c].limit = c < hl_classes->count ? limit[c] : 0;
        HL_OWN_SET(bin[c].room, (int32_t)bin[c].limit);
        if (c < hl_classes->count) HL_OWN_SET(tlab_spares(bin)[c].seen, bin[c].room);
    }
    t->budget = hl_cfg.tlab_budget;
    t->limit_bytes = limit_bytes;
    t->slow = 0;
    t->heap = hl_heap_mine();
    if (hl_cfg.tlab_sb_cache) sbc_reset(t, 0);    /* a pooled TLAB's are old */
    if (scavenging) {
        t->in = &hl_me.tlab_in;
        t->seen_rooms = 0;
        if (!guarded) {                  /* (inside a slow half: released by its guard_leave) */
            hl_lock_take(&t->guard);
            guarded = t;
        }
    }
    hl_lock_acquire(&reg_lock);
    t->prev = NULL;
    t->next = live;
    if (live) live->prev = t;
    live = t;
    hl_lock_release(&reg_lock);
    hl_me.tlab_bins = bin;
    return true;
}
static bool setup(void) { return own_bins() || set_up_bins(); }

/* A chain of blocks back to their superblocks: cache.h's hl_cache_give_back, one copy out of
 * line for this file's slow halves, with the row's policy after a free. */
static void give_back(struct hl_heap *h, void *chain)
{
    hl_cache_give_back(h, chain);
}

/* The slow halves (tlab.h). A row calls the TLAB's paths only with cache = thread (fronts.c
 * installs them then), so neither tests the key. Never inlined into this file's fast paths,
 * which stay as they were built in the rows' files before (tools/hoardlab cost). */
__attribute__((noinline)) void *hl_tlab_malloc_slow(size_t size)
{
    unsigned c = hl_class_of(size);
    if (!setup()) return row.malloc(size);
    if (!hl_me.tlab_bins[c].limit) {     /* bypassed: joins once the budget holds a block */
        if (hl_cfg.tlab_adaptive) fit(hl_me.tlab_bins, c);
        if (!hl_me.tlab_bins[c].limit) return row.malloc(size);
    }
    see(hl_me.tlab_bins, c);
    note_slow(hl_me.tlab_bins, c);
    struct hl_tlab_bin *b = &hl_me.tlab_bins[c];
    struct tlab_spare *spare = &tlab_spares(hl_me.tlab_bins)[c];
    void *first;
    if (spare_to_bin(b, spare)) {        /* no lock */
        first = b->head;
        b->head = *(void **)first;
        move(hl_me.tlab_bins, c, 1);
        if (hl_cfg.tlab_sb_cache) sbc_fill(hl_sb_of(first));
        return hl_stats_malloc(first, hl_class_size(c));
    }
    if (hl_remote_mode >= HL_REMOTE_QUEUE) hl_remote_flush();  /* the sender's slow path */
    struct hl_heap *h = heap_now();
    uint32_t want = hl_cache_refill_n(b->limit), n = 0;
    /* batch: the owner drains its inbox without the lock and takes the runs its bins hold,
     * the lock only for runs that go back into their superblocks and for a refill
     * (inbox.c's hl_remote_drain) */
    void *rest = hl_remote_mode == HL_REMOTE_BATCH && hl_remote_pending(h)
                 ? take_runs(h, hl_remote_drain(h)) : NULL;
    spare_to_bin(b, spare);
    bool locked = rest || !b->head;
    if (locked) {
        hl_heap_lock(h);
        if (rest) hl_remote_settle(h, rest);
        if (hl_remote_pending(h)) hl_tlab_collect(h);   /* the owner's slow path collects */
        spare_to_bin(b, spare);
        if (!b->head)                    /* else a collected list came into the bin */
            n = hl_unlikely(hl_sb_sharded) ? hl_cache_take(h, c, &b->head, want, true)
                                           : hl_cache_take(h, c, &b->head, want, false);
        if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
        hl_heap_unlock(h);
        hl_purge_poll();                 /* no lock held: the purge thread may start */
    }
    if (!(first = b->head)) return NULL;
    b->head = *(void **)first;           /* the caller's block: room + 1 below */
    move(hl_me.tlab_bins, c, -((int32_t)n - 1));
    if (hl_cfg.tlab_sb_cache) sbc_fill(hl_sb_of(first));
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
    if (!setup() || (owner != mine()->heap && !adopt) ||
        atomic_load_explicit(&sb->interior, memory_order_relaxed) ||
        !hl_me.tlab_bins[sb->cls].limit) {
        row.free(p);
        return;
    }
    struct hl_tlab_bin *b = &hl_me.tlab_bins[sb->cls];
    see(hl_me.tlab_bins, sb->cls);
    struct tlab_spare *spare = &tlab_spares(hl_me.tlab_bins)[sb->cls];
    if (b->room <= 0 && spare->head) {   /* full: the spare goes back first */
        void *chain = spare->head;
        spare->head = NULL;
        move(hl_me.tlab_bins, sb->cls, (int32_t)spare->n);
        give_back(heap_now(), chain);             /* (may fill the spare again) */
    }
    if (b->room <= 0) {                  /* full: the newest blocks go back, p stays */
        uint32_t on_head = b->limit - (uint32_t)b->room - (spare->head ? spare->n : 0);
        uint32_t k = hl_cache_flush_n(b->limit) < on_head ? hl_cache_flush_n(b->limit) : on_head;
        void *chain = b->head, *last = chain;
        for (uint32_t i = 1; i < k; i++) last = *(void **)last;
        b->head = *(void **)last;
        *(void **)last = NULL;
        move(hl_me.tlab_bins, sb->cls, (int32_t)k);
        if (hl_cfg.tlab_adaptive) shrink(hl_me.tlab_bins, sb->cls);
        give_back(heap_now(), chain);
        if (hl_cfg.tlab_sb_cache && owner == mine()->heap) sbc_fill(sb);
    }
    *(void **)p = b->head;
    b->head = p;
    move(hl_me.tlab_bins, sb->cls, -1);
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
 * hl_tlab_free_slow would pass it on to hl_remote_free (issue 34: the remote pair's free
 * 72 -> 49 instructions, tools/hoardlab cost); anything else (the thread's own heap
 * that is not its TLAB's, a thread without a heap, a memalign'd inner pointer) as there. */
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
hl_tlab_free_fn *hl_tlab_free_other = hl_tlab_free_slow;

/* The slow halves the guarded fast paths call (scavenging): the same, holding the guard. A
 * free of another heap's block too, whose path may put it into the bins (tlab_sb_cache,
 * tlab_foreign = adopt). */
static hl_tlab_free_fn *free_other_unguarded;
__attribute__((noinline)) void *hl_tlab_malloc_slow_guarded(size_t size)
{
    guard_enter();
    void *p = hl_tlab_malloc_slow(size);
    guard_leave();
    return p;
}
__attribute__((noinline)) void hl_tlab_free_slow_guarded(void *p, struct hl_sb *sb)
{
    guard_enter();
    hl_tlab_free_slow(p, sb);
    guard_leave();
}
static void free_other_guarded(void *p, struct hl_sb *sb)
{
    guard_enter();
    free_other_unguarded(p, sb);
    guard_leave();
}

/* What the bins hold beyond `keep` blocks of each class back to h (their blocks to their
 * superblocks' current owners, and the row's hl_heap_after_free): the spare chain whole, the
 * head chain after its first `keep` (0: all). The owner (mine) has U see each bin first; the
 * purge thread's take moves room and seen together, so what U has not seen stays so. */
static void give_back_beyond(struct hl_tlab_bin *bin, struct hl_heap *h, bool floor, bool mine)
{
    struct tlab_spare *spare = tlab_spares(bin);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        if (mine) see(bin, c);
        uint32_t held = bin[c].limit - (uint32_t)bin[c].room, keep = floor ? limit[c] / 16 : 0;
        void *more = spare[c].head;
        if (more) {
            spare[c].head = NULL;
            held -= spare[c].n;
            move(bin, c, (int32_t)spare[c].n);
            give_back(h, more);
        }
        if (held <= keep) continue;
        void *chain = bin[c].head;
        if (keep) {
            void *last = chain;
            for (uint32_t i = 1; i < keep; i++) last = *(void **)last;
            chain = *(void **)last;
            *(void **)last = NULL;
        } else {
            bin[c].head = NULL;
        }
        move(bin, c, (int32_t)(held - keep));
        give_back(h, chain);
    }
}

/* The TLAB leaves the live list; then, its guard released (scavenging: the purge thread
 * finds TLABs in the live list only, holding reg_lock), it is pooled for the next thread. */
void hl_tlab_thread_exit(void)
{
    if (!own_bins()) return;
    guard_enter();
    struct hl_tlab *t = mine();
    struct hl_tlab_bin *bin = hl_me.tlab_bins;
    struct hl_heap *h = heap_now();
    hl_me.tlab_bins = none;                 /* from here on, this thread bypasses the TLAB */
    give_back_beyond(bin, h, false, true);
    hl_lock_acquire(&reg_lock);
    if (t->prev) t->prev->next = t->next;
    else live = t->next;
    if (t->next) t->next->prev = t->prev;
    if (scavenging) {
        hl_lock_release(&reg_lock);
        guard_leave();
        hl_lock_acquire(&reg_lock);
    }
    t->prev = NULL;
    t->next = pool;
    pool = t;
    hl_lock_release(&reg_lock);
}

/* hoardlab_collect: the calling thread's bins given back as at its exit, but kept (its next
 * malloc refills), each limit back at its start (tlab_adaptive's growth undone). */
void hl_tlab_flush(void)
{
    if (!own_bins()) return;
    guard_enter();
    struct hl_tlab *t = mine();
    struct hl_tlab_bin *bin = hl_me.tlab_bins;
    give_back_beyond(bin, heap_now(), false, true);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        HL_OWN_SET(bin[c].room, (int32_t)limit[c]);
        __atomic_store_n(&bin[c].limit, limit[c], __ATOMIC_RELAXED);
        HL_OWN_SET(tlab_spares(bin)[c].seen, bin[c].room);
    }
    t->budget = hl_cfg.tlab_budget;
    t->limit_bytes = limit_bytes;
    t->slow = 0;
    guard_leave();
}

/* ---- scavenging: the purge thread's side (tlab.h) ------------------------------------------
 * Every tlab_scavenge_ms: the live TLABs whose bins' room (folded) is what it was a sweep ago
 * and that hold more than a sixteenth of some class's starting limit, whose guard is free
 * (by trylock, under reg_lock: the leaf lock is not waited on with a guard held, nor a guard
 * with it), up to SCAVENGE_MAX of them; their stop set, one membarrier, and each whose owner
 * is outside its fast paths given back down to that floor. A TLAB is taken within one to two
 * periods of rest; one whose room returns to the same value between sweeps (a thread that
 * mallocs and frees one block in a loop) may be taken while busy: it refills at its next
 * malloc, as after a flush. */
enum { SCAVENGE_MAX = 64 };

static uint64_t rooms_of(struct hl_tlab_bin *bin)
{
    uint64_t h = 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        h = (h ^ (uint32_t)__atomic_load_n(&bin[c].room, __ATOMIC_RELAXED)) *
            0x9e3779b97f4a7c15ull;
    return h;
}

static bool beyond_floor(struct hl_tlab_bin *bin)
{
    for (unsigned c = 0; c < hl_classes->count; c++)
        if ((int64_t)__atomic_load_n(&bin[c].limit, __ATOMIC_RELAXED) -
            __atomic_load_n(&bin[c].room, __ATOMIC_RELAXED) > (int64_t)(limit[c] / 16))
            return true;
    return false;
}

static void scavenge_sweep(void)
{
    struct hl_tlab *took[SCAVENGE_MAX];
    unsigned n = 0;
    hl_lock_acquire(&reg_lock);
    for (struct hl_tlab *t = live; t && n < SCAVENGE_MAX; t = t->next) {
        uint64_t rooms = rooms_of(bins_of(t));
        bool rested = rooms == t->seen_rooms;
        t->seen_rooms = rooms;
        if (rested && beyond_floor(bins_of(t)) && hl_trylock(&t->guard)) took[n++] = t;
    }
    hl_lock_release(&reg_lock);
    if (!n) return;
    for (unsigned i = 0; i < n; i++) __atomic_store_n(&took[i]->stop, 1, __ATOMIC_RELAXED);
    /* (refused, though registered: no fence was run, so no owner's tlab_in can be trusted) */
    bool fenced = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    for (unsigned i = 0; i < n; i++) {
        struct hl_tlab *t = took[i];
        if (fenced && !__atomic_load_n(t->in, __ATOMIC_ACQUIRE))
            give_back_beyond(bins_of(t), t->heap, true, false);
        t->seen_rooms = rooms_of(bins_of(t));
        __atomic_store_n(&t->stop, 0, __ATOMIC_RELEASE);
        hl_lock_release(&t->guard);
    }
}

/* Scavenging asked for: membarrier's expedited command registered for the process (once,
 * before any guarded path runs), else said once and left off. */
static bool scavenge_on(void)
{
    if (!hl_cfg.tlab_scavenge_ms) return false;
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
        hl_say("tlab_scavenge_ms = %ld: membarrier refused (errno %d): idle threads' TLABs are "
               "not scavenged", hl_cfg.tlab_scavenge_ms, errno);
        return false;
    }
    return true;
}

size_t hl_tlab_bytes(void)
{
    size_t bytes = 0;
    hl_lock_acquire(&reg_lock);
    for (struct hl_tlab *t = live; t; t = t->next) {
        struct hl_tlab_bin *bin = bins_of(t);
        for (unsigned c = 0; c < hl_classes->count; c++) {
            /* limit and room are two loads: between an owner's two stores (a shrink lowers
             * both) they may give a negative count, which the gauge must not wrap */
            int64_t held = (int64_t)__atomic_load_n(&bin[c].limit, __ATOMIC_RELAXED) -
                           __atomic_load_n(&bin[c].room, __ATOMIC_RELAXED);
            if (held > 0)
                bytes += (size_t)held * hl_class_size(c);
        }
    }
    hl_lock_release(&reg_lock);
    return bytes;
}

int64_t hl_tlab_unseen(bool mine)
{
    int64_t bytes = 0;
    if (mine) {                          /* the thread's own: no lock, marked seen */
        if (!own_bins()) return 0;
        /* Scavenging: outside the slow halves (a publication under a heap's lock, which the
         * purge thread takes holding the guard), the guard by trylock; held, the purge thread
         * is taking the bins, and U sees them at a later publication. */
        struct hl_tlab *held = scavenging && !guard_depth ? hl_tlab_of(hl_me.tlab_bins) : NULL;
        if (held && !hl_trylock(&held->guard)) return 0;
        struct hl_tlab_bin *bin = hl_me.tlab_bins;
        struct tlab_spare *side = tlab_spares(bin);
        /* at every publication of U: most bins have not moved since (a compare each) */
        for (unsigned c = 0, n = hl_classes->count; c < n; c++)
            if (bin[c].room != side[c].seen) bytes += take_unseen(bin, c);
        if (held) hl_lock_release(&held->guard);
        return bytes;
    }
    hl_lock_acquire(&reg_lock);
    for (struct hl_tlab *t = live; t; t = t->next) {
        struct hl_tlab_bin *bin = bins_of(t);
        struct tlab_spare *side = tlab_spares(bin);
        for (unsigned c = 0; c < hl_classes->count; c++)
            bytes += (int64_t)(__atomic_load_n(&bin[c].room, __ATOMIC_RELAXED) -
                               __atomic_load_n(&side[c].seen, __ATOMIC_RELAXED))
                     * (int64_t)hl_class_size(c);
    }
    hl_lock_release(&reg_lock);
    return bytes;
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

/* tlab_prefetch's PREFETCHW (hl.h) is an instruction of its own on x86-64 (CPUID PRFCHW: AMD
 * since the K8, Intel since Broadwell); on a CPU without it malloc does not prefetch, said once
 * at start-up, rather than run an instruction that CPU may not have. valgrind's emulated CPU
 * runs it but does not report it (os.c). */
static bool prefetch_on(void)
{
    if (!hl_cfg.tlab_prefetch) return false;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!hl_os_valgrind() && (!__get_cpuid(0x80000001u, &a, &b, &c, &d) || !(c & bit_PRFCHW))) {
        hl_say("tlab_prefetch = on: this CPU has no PREFETCHW (CPUID PRFCHW): malloc does not "
               "prefetch");
        return false;
    }
#endif
    return true;
}

const struct hl_paths *hl_tlab_start(const struct hl_cache_row *behind)
{
    row = *behind;
    bool u_by_bins = init();
    scavenging = scavenge_on();
    if (scavenging) {
        free_other_unguarded = hl_tlab_free_other;
        hl_tlab_free_other = free_other_guarded;
        hl_purge_every(scavenge_sweep, hl_cfg.tlab_scavenge_ms);
    }
    return &paths[prefetch_on()][scavenging][!hl_cfg.counting ? 0 : u_by_bins ? 1 : 2];
}

/* Scavenging: the forking thread's guard, before the heaps' locks are taken (the purge thread
 * may hold it while it waits for one) and after they are released; the child has no purge
 * thread, and the lock held is made free again. */
void hl_tlab_fork_guard(int phase)
{
    if (!scavenging || !own_bins()) return;
    if (phase == HL_FORK_PREPARE) hl_lock_take(&mine()->guard);
    else if (phase == HL_FORK_PARENT) hl_lock_release(&mine()->guard);
    else hl_lock_init(&mine()->guard);
}

/* Fork: in the child only the forking thread lives on; its TLAB stays registered, the other
 * threads' are dropped (their blocks stay counted in use in their heaps: tlab.h). */
void hl_tlab_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        hl_lock_acquire(&reg_lock);
        return;
    }
    if (phase == HL_FORK_PARENT) {
        hl_lock_release(&reg_lock);
        return;
    }
    hl_lock_init(&reg_lock);
    live = NULL;
    if (own_bins()) {
        live = mine();
        live->next = live->prev = NULL;
    }
}
