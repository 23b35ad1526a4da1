/* large.c — objects above large_threshold (Hoard §3: "If sz > S/2, allocate the superblock
 * from the OS"): one OS mapping each, whose pages the page map marks HL_OWNER_LARGE. A 16-byte
 * header just below the block records the mapping (size, and the block's offset in it).
 *
 * Freed mappings are kept in a cache for reuse; the key `large_reuse` chooses the policy:
 *   - unmap: none; every freed mapping goes back to the OS at once (the paper's "mmap each").
 *   - fixed: at most `large_cache` bytes, oldest-freed unmapped first (0 disables it). A
 *     request of n pages takes a mapping of m pages, n <= m <= 2n, the smallest bin first;
 *     in the request's own bin only the first 8 entries are tried.
 *   - follow (the default): A = live + cached <= (1 + large_follow) x the live large bytes'
 *     recent peak (decaying towards the live bytes by 1/256 of the difference per free), at
 *     least large_cache; eviction takes only the excess, from the oldest mapping's tail,
 *     after every free and every allocation that took new pages. Any cached mapping may serve
 *     any request: the smallest of at least n pages, its tail cut off and cached, else the
 *     largest smaller one, grown with mremap and filled with other cached mappings' pages
 *     (fill_from_cache). A freed block merges with the cached mappings right before and after
 *     it (two address tables). Each handed-out mapping is exactly the request's pages.
 * Invariants:
 *   - Cached mappings stay counted in A (hl_os_bytes), and are marked HL_OWNER_NONE in the
 *     page map, so a double free or a foreign pointer into one is still caught by free().
 *   - Lookup takes no system call: one lock, bins by page count (exact below 16 pages, then
 *     four per power of two), newest first in each.
 *   - Requests with align <= HL_PAGE are served from the cache (the block at offset align);
 *     larger alignments map afresh. A reused mapping is dirty: hl_large_alloc clears the
 *     block for calloc, hl_large_alloc_dirty does not. mremap keeps a mapping's NUMA policy.
 *   - purge on (ranges.c): a cached mapping's pages after the first (where the cache writes
 *     its record) are parked as a range, and taken out (unparked) before the mapping is
 *     reused, merged or cut. What is parked is the part that may be resident (struct
 *     resident); a mapping re-entering the cache (merged, cut) is parked afresh. The cache's
 *     lock is taken before the parked lists' lock, never after (fork.c's order).
 * realloc (every policy): a block that still fits, wasting at most half, stays; else a cached
 * mapping of the new size (the 2x rule), if any, takes a copy (its pages are resident);
 * without one, shrinking cuts the tail off into the cache and growing calls mremap. A block
 * that moves gets malloc's alignment, no more (realloc promises no more).
 * docs/large.md ("large.c's notes, as they stood") has why each rule, and its measurements. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "mem.h"
#include "large.h"
#include "purge.h"

size_t hl_large_threshold;

struct large_header { size_t map_size, offset; };   /* offset: block - mapping start */

static struct large_header *header_of(const void *p) { return (struct large_header *)p - 1; }

/* ---- the cache of free mappings ----------------------------------------------------------- */

#define MAX_PAGES_LOG 24                /* 2^24 pages: 64 GiB, the largest large_cache; the
                                           last bin holds anything larger (follow) */
#define NBINS         (16 + 4 * (MAX_PAGES_LOG - 4 + 1))
#define FIRST_BIN_SCAN 8

/* Written at the start of a free mapping: the cache needs no memory of its own. */
struct free_map {
    struct free_map *next, *prev;       /* in its bin, newest first */
    struct free_map *newer, *older;     /* in the whole cache, for evicting the oldest */
    size_t size;                        /* bytes, the whole mapping */
    bool indexed;                       /* in the neighbour tables (follow) */
    struct hl_purge_range range;        /* purge on: its pages after this one, parked */
};

static struct {
    hl_lock lock;
    size_t bytes;                       /* in the cache, <= bound_now() after each call */
    struct free_map *newest, *oldest;
    struct free_map *bin[NBINS];
} cache HL_CACHE_ALIGNED;

static unsigned bin_of(size_t pages)
{
    if (pages < 16) return (unsigned)pages;
    unsigned e = 63u - (unsigned)__builtin_clzll(pages);
    unsigned b = 16 + (e - 4) * 4 + (unsigned)((pages >> (e - 2)) & 3);
    return b < NBINS ? b : NBINS - 1;
}

/* ---- neighbours (follow): cached mappings by start and by end address ---------------------
 * A freed block whose neighbour in the address space is cached merges with it, so the pieces
 * that trimming cuts off grow back into whole buffers instead of piling up as small ones that
 * every larger request has to grow. Two open-addressing tables (linear probing, deletion by
 * backward shift) of static memory, at most half full: a mapping that finds them so is
 * simply not indexed and never merges. Under the cache lock. */
#define NEIGH_LOG 12
#define NEIGH_CAP (1u << NEIGH_LOG)
#define NEIGH_MASK (NEIGH_CAP - 1)

static struct free_map *by_start[NEIGH_CAP], *by_end[NEIGH_CAP];
static unsigned indexed;

static uintptr_t start_of(const struct free_map *m) { return (uintptr_t)m; }
static uintptr_t end_of(const struct free_map *m) { return (uintptr_t)m + m->size; }

static unsigned home_of(uintptr_t a)
{
    return (unsigned)(((a >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - NEIGH_LOG));
}

static void tab_put(struct free_map **t, uintptr_t key, struct free_map *m)
{
    unsigned i = home_of(key);
    while (t[i]) i = (i + 1) & NEIGH_MASK;
    t[i] = m;
}

/* The slot of the mapping whose key (start_of or end_of) is a, or -1. */
static int tab_find(struct free_map *const *t, uintptr_t (*key)(const struct free_map *),
                    uintptr_t a)
{
    for (unsigned i = home_of(a); t[i]; i = (i + 1) & NEIGH_MASK)
        if (key(t[i]) == a) return (int)i;
    return -1;
}

static void tab_del(struct free_map **t, uintptr_t (*key)(const struct free_map *), unsigned i)
{
    t[i] = NULL;
    for (unsigned j = (i + 1) & NEIGH_MASK; t[j]; j = (j + 1) & NEIGH_MASK) {
        unsigned h = home_of(key(t[j]));
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);   /* h in (i, j] */
        if (!stays) { t[i] = t[j]; t[j] = NULL; i = j; }
    }
}

static void index_map(struct free_map *m)
{
    m->indexed = hl_cfg.large_reuse == HL_LARGE_FOLLOW && indexed < NEIGH_CAP / 2;
    if (!m->indexed) return;
    tab_put(by_start, start_of(m), m);
    tab_put(by_end, end_of(m), m);
    indexed++;
}

static void unindex_map(struct free_map *m)
{
    if (!m->indexed) return;
    tab_del(by_start, start_of, (unsigned)tab_find(by_start, start_of, start_of(m)));
    tab_del(by_end, end_of, (unsigned)tab_find(by_end, end_of, end_of(m)));
    indexed--;
    m->indexed = false;
}

/* The cache's bytes for the statistics (stats.h's hl_stats_large_cached), under cache.lock. */
static void publish_cached(void)
{
    atomic_store_explicit(&hl_stats_large_cached, cache.bytes, memory_order_relaxed);
}

/* purge on: the part of a mapping whose pages may be resident, [lo, hi); none when lo = hi =
 * NULL. Freed, a block's mapping is all resident; purged, none of it. It follows the pages as
 * mappings are merged (the hull of the parts') and cut (the part within each piece), so that
 * a purge gives back only what may still be held, and `retain` counts only that. */
struct resident { char *lo, *hi; };

static const struct resident NONE_RESIDENT = { NULL, NULL };

static struct resident all_resident(char *base, size_t size)
{
    return (struct resident){ base, base + size };
}

static struct resident within(struct resident r, const char *lo, const char *hi)
{
    if (r.lo < lo) r.lo = (char *)lo;
    if (r.hi > hi) r.hi = (char *)hi;
    return r.lo < r.hi ? r : NONE_RESIDENT;
}

static struct resident hull(struct resident a, struct resident b)
{
    if (!a.lo) return b;
    if (!b.lo) return a;
    return (struct resident){ a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi };
}

/* Out of the cache: what of it may be resident (purge.c may have purged it meanwhile). */
static struct resident unlink_map(struct free_map *m)
{
    unindex_map(m);
    if (m->prev) m->prev->next = m->next;
    else cache.bin[bin_of(m->size / HL_PAGE)] = m->next;
    if (m->next) m->next->prev = m->prev;
    if (m->newer) m->newer->older = m->older; else cache.newest = m->older;
    if (m->older) m->older->newer = m->newer; else cache.oldest = m->newer;
    cache.bytes -= m->size;
    publish_cached();
    if (hl_purge_unpark_range(&m->range)) return NONE_RESIDENT;
    return (struct resident){ m->range.from, m->range.from + m->range.len };
}

/* Bytes in live large mappings, and their recent peak: what `follow`'s bound follows. */
static _Atomic size_t live_bytes, live_peak;

size_t hl_large_live(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }
size_t hl_large_peak(void) { return atomic_load_explicit(&live_peak, memory_order_relaxed); }

/* A = live + cached <= (1 + large_follow) x peak: a free under the peak makes room in the cache
 * instead of evicting, so the live set's ups and downs do not unmap memory the next up faults
 * in again (with a bound on the cache alone, largebuf evicted, and faulted in, about 2x its
 * live set over a run). */
size_t hl_large_bound(size_t live, size_t peak)
{
    switch (hl_cfg.large_reuse) {
    case HL_LARGE_UNMAP: return 0;
    case HL_LARGE_FIXED: return hl_cfg.large_cache;
    default: {
        if (peak < live) peak = live;
        double f = (1.0 + hl_cfg.large_follow) * (double)peak - (double)live;
        size_t follow = f >= (double)SIZE_MAX ? SIZE_MAX : (size_t)f;
        return follow > hl_cfg.large_cache ? follow : hl_cfg.large_cache;
    }
    }
}

/* The recent peak after a free: it decays towards the live bytes by 1/256 of the difference
 * per free, so after the program's large live set shrank for good the bound comes down within
 * a few hundred frees: after 700, to under 8% of the difference. Slow enough that a live set
 * going up and down (largebuf's, between 70 and 118 MiB over a few dozen replacements) keeps
 * its peak: with 1/16 largebuf evicted and faulted in again 45k pages at 1 thread, with 1/64
 * 33k, 1/256 20k, 1/1024 18k (tcmalloc 16k), at A/live 1.37, 1.40, 1.39, 1.33. */
size_t hl_large_decay(size_t peak, size_t live)
{
    return peak <= live ? live : peak - (peak - live) / 256;
}

size_t hl_large_bound_now(void) { return hl_large_bound(hl_large_live(), hl_large_peak()); }
static size_t bound_now(void) { return hl_large_bound_now(); }

static void live_add(size_t bytes)
{
    size_t now = atomic_fetch_add_explicit(&live_bytes, bytes, memory_order_relaxed) + bytes;
    size_t seen = atomic_load_explicit(&live_peak, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak(&live_peak, &seen, now)) { }
}

static void live_sub(size_t bytes)
{
    size_t now = atomic_fetch_sub_explicit(&live_bytes, bytes, memory_order_relaxed) - bytes;
    size_t seen = atomic_load_explicit(&live_peak, memory_order_relaxed);
    atomic_compare_exchange_strong(&live_peak, &seen, hl_large_decay(seen, now));  /* or a
        concurrent rise won, which is as good */
}

/* Into the cache as its newest mapping (m->size set), the pages of res after its first parked
 * for the purge (purge.c: kept, aged, purged; cut_high: the pages freed last are at its low
 * end, so a purge of part of it starts at the high end). */
static void link_map(struct free_map *m, struct resident res, bool cut_high)
{
    m->prev = m->newer = NULL;
    struct free_map **head = &cache.bin[bin_of(m->size / HL_PAGE)];
    if ((m->next = *head)) m->next->prev = m;
    *head = m;
    if ((m->older = cache.newest)) m->older->newer = m; else cache.oldest = m;
    cache.newest = m;
    cache.bytes += m->size;
    publish_cached();
    index_map(m);
    res = within(res, (char *)m + HL_PAGE, (char *)m + m->size);
    hl_purge_park_range(&m->range, res.lo, (size_t)(res.hi - res.lo), cut_high);
}

/* A cached mapping for *size bytes (the 2x fit rule above), or NULL; *size becomes its size,
 * *res what of it may be resident. */
static char *cache_take(size_t *size, struct resident *res)
{
    size_t need = *size;
    if (need > bound_now()) return NULL;
    unsigned lo = bin_of(need / HL_PAGE), hi = bin_of(2 * need / HL_PAGE);
    struct free_map *m = NULL;
    hl_lock_acquire(&cache.lock);
    struct free_map *f = cache.bin[lo];
    for (unsigned n = 0; f && n < FIRST_BIN_SCAN; f = f->next, n++)
        if (f->size >= need) { m = f; break; }
    for (unsigned b = lo + 1; !m && b <= hi; b++)    /* bins between hold sizes in (need, 2 need) */
        if (cache.bin[b] && cache.bin[b]->size <= 2 * need) m = cache.bin[b];
    *res = m ? unlink_map(m) : NONE_RESIDENT;
    hl_lock_release(&cache.lock);
    if (m) *size = m->size;
    return (char *)m;
}

/* `follow`: the cached mapping closest to need bytes: the smallest of at least need (a bin's
 * newest; in need's own bin the first FIRST_BIN_SCAN), else the largest smaller one (to be
 * grown). NULL when the cache is empty; *size becomes its size, *res what of it may be
 * resident. */
static char *cache_take_nearest(size_t *size, struct resident *res)
{
    size_t need = *size;
    unsigned lo = bin_of(need / HL_PAGE);
    struct free_map *m = NULL, *below = NULL;
    hl_lock_acquire(&cache.lock);
    struct free_map *f = cache.bin[lo];
    for (unsigned n = 0; f && n < FIRST_BIN_SCAN; f = f->next, n++) {
        if (f->size >= need) { m = f; break; }
        if (!below || f->size > below->size) below = f;
    }
    for (unsigned b = lo + 1; !m && b < NBINS; b++)     /* bins above hold sizes > need */
        if (cache.bin[b]) m = cache.bin[b];
    for (unsigned b = lo; !m && !below && b-- > 0;)     /* bins below hold sizes < need */
        if (cache.bin[b]) below = cache.bin[b];
    if (!m) m = below;
    *res = m ? unlink_map(m) : NONE_RESIDENT;
    hl_lock_release(&cache.lock);
    if (m) *size = m->size;
    return (char *)m;
}

/* Under the lock: unlink the oldest mappings until the cache holds at most bound bytes; they
 * join the victims (linked by next) to be unmapped after the lock is released. */
static struct free_map *evict(size_t bound, struct free_map *victims)
{
    while (cache.bytes > bound) {
        struct free_map *o = cache.oldest;
        struct resident res = unlink_map(o);
        size_t cut = hl_align_up(cache.bytes + o->size - bound, HL_PAGE);
        if (hl_cfg.large_reuse == HL_LARGE_FOLLOW && cut < o->size) {
            /* follow: only the excess goes, from the oldest mapping's tail; the rest stays
             * (as the newest: it may be a whole buffer merged back from pieces) */
            struct free_map *t = (struct free_map *)((char *)o + o->size - cut);
            t->size = cut;
            t->next = victims;
            victims = t;
            o->size -= cut;
            link_map(o, res, false);          /* (within its rest) */
            break;
        }
        o->next = victims;
        victims = o;
    }
    return victims;
}

static void unmap_all(struct free_map *victims)
{
    while (victims) {
        struct free_map *v = victims;
        victims = v->next;
        hl_os_free(v, v->size, HL_OS_HELD);
    }
}

/* Keep a free mapping (already HL_OWNER_NONE in the page map), unmapping the oldest ones past
 * the bound after the lock is released. res: what of it may be resident (all of a freed
 * block's; of a piece of a mapping taken from the cache, its part of the mapping's). */
static void cache_put(char *base, size_t size, struct resident res)
{
    if (hl_cfg.large_reuse == HL_LARGE_UNMAP) { hl_os_free(base, size, HL_OS_HELD); return; }
    size_t bound = bound_now();
    struct free_map *m = (struct free_map *)base, *victims = NULL;
    m->size = size;
    bool cut_high = false;              /* the block is the merged mapping's low end */
    hl_lock_acquire(&cache.lock);
    if (hl_cfg.large_reuse == HL_LARGE_FOLLOW) {          /* merge with cached neighbours */
        /* ... whose pages that may be resident adjoin the block's (or which have none; a
         * neighbour's first page is always resident): else the merged mapping's would count
         * the purged pages between them, and be purged again (kept apart, parked anew). */
        int r = tab_find(by_start, start_of, (uintptr_t)base + size);
        if (r >= 0) {
            struct free_map *right = by_start[r];
            struct resident w = unlink_map(right);
            if (!w.lo || !res.lo || (w.lo <= (char *)right + HL_PAGE && res.hi == (char *)right)) {
                res = hull(res, w);
                size += right->size;
                cut_high = true;
            } else {
                link_map(right, w, false);
            }
        }
        int l = tab_find(by_end, end_of, (uintptr_t)base);
        if (l >= 0) {
            struct free_map *left = by_end[l];
            struct resident w = unlink_map(left);
            if (!w.lo || !res.lo || (w.hi == base && res.lo <= base + HL_PAGE)) {
                res = hull(res, w);
                size += left->size;
                base = (char *)left;
                m = left;
                cut_high = false;
            } else {
                link_map(left, w, false);
            }
        }
        m->size = size;
    }
    if (size > bound && hl_cfg.large_reuse != HL_LARGE_FOLLOW) {
        m->next = NULL;                 /* unmapped at once, and the bound may have fallen */
        victims = m;
    } else {
        link_map(m, res, cut_high);
    }
    victims = evict(bound, victims);
    hl_lock_release(&cache.lock);
    unmap_all(victims);
}

/* After an allocation that took new pages (a grown or a fresh mapping) the bound has fallen
 * by more than the cache: evict down to it again, so A <= (1 + large_follow) x peak holds
 * after every call, not only after frees. */
static void cache_fit_bound(void)
{
    size_t bound = bound_now();
    hl_lock_acquire(&cache.lock);
    struct free_map *victims = cache.bytes > bound ? evict(bound, NULL) : NULL;
    hl_lock_release(&cache.lock);
    unmap_all(victims);
}

void hl_large_flush(void)
{
    hl_lock_acquire(&cache.lock);
    for (struct free_map *m = cache.newest; m; m = m->older) hl_purge_unpark_range(&m->range);
    struct free_map *all = cache.newest;
    cache.newest = cache.oldest = NULL;
    memset(cache.bin, 0, sizeof cache.bin);
    memset(by_start, 0, sizeof by_start);
    memset(by_end, 0, sizeof by_end);
    indexed = 0;
    cache.bytes = 0;
    publish_cached();
    hl_lock_release(&cache.lock);
    while (all) {
        struct free_map *v = all;
        all = v->older;
        hl_os_free(v, v->size, HL_OS_HELD);
    }
}

size_t hl_large_cached(void)
{
    return atomic_load_explicit(&hl_stats_large_cached, memory_order_relaxed);
}

void hl_large_fork(int phase)
{
    if (phase == 0) hl_lock_acquire(&cache.lock);
    else if (phase == 1) hl_lock_release(&cache.lock);
    else hl_lock_init(&cache.lock);
}

/* ---- blocks ---------------------------------------------------------------------------------- */

/* mremap(MREMAP_MAYMOVE), and with dest MREMAP_FIXED there. ThreadSanitizer intercepts mmap
 * and munmap but not mremap: the range a move vacates keeps the shadow of the accesses made
 * there, and a block mapped at that address later is reported as racing with them (seen in
 * rel-tsan-stress). Under it mremap "fails", and every caller takes its path without it (a
 * fresh mapping, fresh pages, or a copy). */
static void *remap_to(void *base, size_t from, size_t to, void *dest)
{
#ifdef __SANITIZE_THREAD__
    (void)base, (void)from, (void)to, (void)dest;
    return MAP_FAILED;
#else
    return hl_os_mremap(base, from, to, dest);
#endif
}

/* A mapping grown by mremap. Under hugepages one of 2 MiB or more is placed and advised as
 * hl_os_alloc places and advises a fresh one: moved to a 2 MiB boundary (onto a range mapped
 * there for it) unless it starts at one, since the kernel backs only whole aligned 2 MiB
 * frames with huge pages, and advised, since mremap keeps its source's flags. */
static void *grow(void *base, size_t from, size_t to)
{
    char *dest = NULL;
    if (hl_os_huge(to) && (uintptr_t)base % HL_HUGE_REGION
        && !(dest = hl_os_map(to, HL_HUGE_REGION)))
        return MAP_FAILED;
    void *p = remap_to(base, from, to, dest);
    if (p == MAP_FAILED && dest) hl_os_munmap(dest, to);
    else if (p != MAP_FAILED) hl_os_advise_huge(p, to);
    return p;
}

/* `follow`: [dest, dest + len) of a mapping just grown, filled with cached pages instead of
 * fresh ones: the nearest cached mapping (a larger one cut, its rest kept cached), then the
 * next, each moved there by mremap, which moves page tables (no copy, no page fault; the
 * kernel unmaps the fresh pages it replaces). Stops when the cache is empty or a move fails
 * (a cached mapping merged from two kernel mappings cannot move as one). The bytes filled,
 * from dest on: dirty, and already counted in A, where dest's were counted again. */
static size_t fill_from_cache(char *dest, size_t len)
{
    size_t filled = 0;
    while (filled < len) {
        size_t got = len - filled;
        struct resident res;
        char *m = cache_take_nearest(&got, &res);
        if (!m) break;
        size_t take = got < len - filled ? got : len - filled;
        if (remap_to(m, take, take, dest + filled) == MAP_FAILED) {
            cache_put(m, got, res);
            break;
        }
        hl_os_account(HL_OS_HELD, -(ptrdiff_t)take);
        if (got > take) cache_put(m + take, got - take, within(res, m + take, m + got));
        filled += take;
    }
    return filled;
}

/* The block at offset of the mapping at base, or NULL (errno ENOMEM) when the page map could
 * not be extended to it: the caller gives the mapping back (cache_put, as a free would). */
static void *hand_out(char *base, size_t map_size, size_t offset)
{
    if (!hl_pagemap_set(base, map_size, HL_OWNER_LARGE)) { errno = ENOMEM; return NULL; }
    char *p = base + offset;
    live_add(map_size);
    *header_of(p) = (struct large_header){ map_size, offset };
    HL_COUNT(large_allocs, 1);
    return p;
}

/* `follow`: a block of size bytes at offset (<= HL_PAGE) of a mapping of exactly need bytes, made
 * from the nearest cached mapping: a larger one is trimmed (its tail stays in the cache as a
 * mapping of its own: no system call), a smaller one grown with mremap (only the new pages
 * fault in; the old ones keep their contents, so zeroing clears only those). */
static void *follow(size_t size, size_t need, size_t offset, bool zero)
{
    size_t got = need;
    struct resident res;
    char *base = cache_take_nearest(&got, &res);
    size_t dirty = size;                                  /* bytes of the block to clear */
    bool new_pages = true;                                /* grown or fresh: A rose */
    if (base && got >= need) new_pages = false;
    if (base && got < need && got < HL_HUGE_REGION && hl_os_huge(need)) {
        cache_put(base, got, res);    /* its pages would keep the first 2 MiB frame off huge */
        base = NULL;                  /* pages: a fresh mapping instead, wholly huge */
    }
    if (base && got < need) {
        char *to = grow(base, got, need);
        if (to == MAP_FAILED) {               /* e.g. no address space: keep it, map anew */
            cache_put(base, got, res);
            base = NULL;
        } else {
            hl_os_account(HL_OS_HELD, (ptrdiff_t)(need - got));
            size_t filled = fill_from_cache(to + got, need - got);
            if (filled) hl_os_advise_huge(to, need);      /* the pieces moved in kept theirs */
            dirty = got + filled - offset;                /* the fresh pages come zeroed */
            new_pages = got + filled < need;
            base = to;
            got = need;
        }
    }
    if (!base) {
        if (!(base = hl_os_alloc(need, HL_PAGE, HL_OS_HELD))) return NULL;
        got = need;
        zero = false;
    }
    if (zero) memset(base + offset, 0, dirty < size ? dirty : size);
    void *p = hand_out(base, need, offset);
    if (!p) { cache_put(base, got, all_resident(base, got)); return NULL; }
    if (got > need)                                       /* the tail, HL_OWNER_NONE already */
        cache_put(base + need, got - need, within(res, base + need, base + got));
    else if (new_pages) cache_fit_bound();
    return p;
}

static void *alloc(size_t size, size_t align, bool zero)
{
    hl_ticker_poll();                            /* a malloc slow path: the ticker may start */
    if (align < HL_ALIGN) align = HL_ALIGN;
    size_t offset = align;                       /* room for the header, keeping alignment */
    if (size > PTRDIFF_MAX - offset - HL_PAGE) { errno = ENOMEM; return NULL; }
    size_t map_size = hl_align_up(offset + size, HL_PAGE);
    /* filler (issue 50): a mapping of 2 MiB or more is whole huge pages, its last one too
     * (os.c places it at a 2 MiB boundary); the tail's slack is counted in A, as Temeraire's
     * is until it fills it with small objects, which this testbed does not do */
    if (map_size >= HL_HUGE_REGION && hl_arena_huge_mode() == HL_HUGE_FILLER)
        map_size = hl_align_up(map_size, HL_HUGE_REGION);
    if (align <= HL_PAGE && hl_cfg.large_reuse == HL_LARGE_FOLLOW) return follow(size, map_size, offset, zero);
    struct resident res;
    char *base = align <= HL_PAGE ? cache_take(&map_size, &res) : NULL;
    if (base) {
        if (zero) memset(base + offset, 0, size);
    } else if (!(base = hl_os_alloc(map_size, align, HL_OS_HELD))) {
        return NULL;
    } else if (hl_cfg.large_reuse == HL_LARGE_FOLLOW) {  /* an alignment above a page */
        void *p = hand_out(base, map_size, offset);
        if (!p) cache_put(base, map_size, all_resident(base, map_size));
        else cache_fit_bound();
        return p;
    }
    void *p = hand_out(base, map_size, offset);
    if (!p) cache_put(base, map_size, all_resident(base, map_size));   /* (it may be) */
    return p;
}

void *hl_large_alloc(size_t size, size_t align) { return alloc(size, align, true); }
void *hl_large_alloc_dirty(size_t size, size_t align) { return alloc(size, align, false); }

void hl_large_free(void *p)
{
    struct large_header h = *header_of(p);
    char *base = (char *)p - h.offset;
    live_sub(h.map_size);
    hl_pagemap_set(base, h.map_size, HL_OWNER_NONE);
    cache_put(base, h.map_size, all_resident(base, h.map_size));
}

size_t hl_large_usable(const void *p)
{
    const struct large_header *h = header_of(p);
    return h->map_size - h->offset;
}

static void *moved(void *p, size_t size, size_t usable)
{
    void *q = alloc(size, HL_ALIGN, false);
    if (!q) return NULL;
    memcpy(q, p, size < usable ? size : usable);
    hl_large_free(p);
    return q;
}

void *hl_large_realloc(void *p, size_t size)
{
    struct large_header *h = header_of(p);
    size_t old = h->map_size, offset = h->offset;
    if (size > PTRDIFF_MAX - offset - HL_PAGE) { errno = ENOMEM; return NULL; }
    size_t need = hl_align_up(offset + size, HL_PAGE);
    char *base = (char *)p - offset;
    if (need <= old && need >= old / 2) return p;          /* fits, wastes at most half */
    size_t got = hl_align_up(HL_ALIGN + size, HL_PAGE);
    struct resident res;
    char *to = cache_take(&got, &res);
    if (to) {                                                /* a cached mapping and a copy */
        void *q = hand_out(to, got, HL_ALIGN);
        if (!q) { cache_put(to, got, res); return NULL; }    /* p stays as it was */
        memcpy(q, p, size < old - offset ? size : old - offset);
        hl_large_free(p);
        return q;
    }
    if (need < old) {
        h->map_size = need;
        live_sub(old - need);
        hl_pagemap_set(base + need, old - need, HL_OWNER_NONE);
        cache_put(base + need, old - need, all_resident(base + need, old - need));  /* a
                                                                     mapping of its own now */
        return p;
    }
    /* Once mremap has moved the block, the page map must take its new range: p is gone, so
     * the page map's memory is mapped ahead, while failing is still failing realloc. */
    if (!hl_pagemap_prepare(need)) return moved(p, size, old - offset);
    /* Clear the old pages first: once mremap has moved the block, another thread may map the
     * range and mark it as its own. */
    hl_pagemap_set(base, old, HL_OWNER_NONE);
    to = grow(base, old, need);
    if (to == MAP_FAILED) {                      /* e.g. the range spans two mappings: copy */
        hl_pagemap_set(base, old, HL_OWNER_LARGE);
        return moved(p, size, old - offset);
    }
    hl_os_account(HL_OS_HELD, (ptrdiff_t)(need - old));
    live_add(need - old);
    header_of(to + offset)->map_size = need;
    /* Fails only if other threads took the spares meanwhile and the OS refuses more. */
    if (!hl_pagemap_set(to, need, HL_OWNER_LARGE)) hl_die("out of memory for the page map");
    if (hl_cfg.large_reuse == HL_LARGE_FOLLOW) cache_fit_bound();
    return to + offset;
}
