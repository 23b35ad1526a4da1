/* large.c — objects above large_threshold (Hoard §3: "If sz > S/2, allocate the superblock
 * from the OS"): one OS mapping each, whose pages the page map marks HL_OWNER_LARGE. A 16-byte
 * header just below the block records the mapping (size, and the block's offset in it).
 *
 * Freed mappings are kept in a cache for reuse, so a program that frees and allocates large
 * buffers, or a realloc-grown one, does not pay mmap, munmap and a page fault per page each time.
 * The key `large_reuse` chooses the policy (issue 24):
 *   - unmap: none; every freed mapping goes back to the OS at once (the paper's "mmap each").
 *   - fixed: at most `large_cache` bytes, oldest-freed unmapped first (0 disables it). A
 *     request of n pages takes a mapping of m pages with n <= m <= 2n (waste at most 2x, as
 *     realloc's in-place rule), the smallest bin first; in the request's own bin only the first
 *     8 entries are tried. A program holding a score of MiB-sized buffers of varied sizes gains
 *     little: 32 MiB holds a few of them, and most do not fit the next request.
 *   - follow (the default): the bound follows the program's large live set, max(large_cache,
 *     large_follow x bytes in live large mappings), so A <= (1 + large_follow) x live large
 *     bytes once they outgrow large_cache, and it shrinks back as they are freed (every free
 *     evicts down to the new bound). Any cached mapping may serve any request: the smallest of
 *     at least n pages, its tail cut off and kept in the cache as a mapping of its own (no
 *     system call, the pages stay resident), else the largest smaller one, grown with mremap
 *     (only the new pages fault in; calloc clears only the old ones). Each handed-out mapping
 *     is exactly the request's pages, so U and A stay close.
 *   Why follow, and not a jemalloc-style decay (keep freed pages, give them back some seconds
 *   later): largebuf replaces a buffer every few milliseconds, so any decay time long enough
 *   to help keeps all it frees, and A is then bounded by time, not by the live set, which is
 *   what the Hoard paper bounds (O(1) blowup); decay also needs a clock or a background
 *   thread. glibc's dynamic mmap threshold moves such buffers into its heap, which the
 *   superblock strategies do not have for blocks above S/2. Measured (docs/large.md): largebuf
 *   at 1 and 2 threads, follow's time is at glibc's and tcmalloc's, unmap's about 4x, fixed's
 *   in between with A/live about 1.5; follow's A/live about 1.2.
 *   Cached mappings stay counted in A (hl_os_bytes): memory held is memory held.
 *   - a cached mapping is marked HL_OWNER_NONE in the page map, as an unmapped one was, so a
 *     double free or a foreign pointer into it is still caught by free().
 *   - lookup takes no system call: one lock, bins by page count (exact below 16 pages, then
 *     four per power of two), newest first in each.
 *   - alignment: requests with align <= HL_PAGE are served from the cache (a mapping is page
 *     aligned, the block sits at offset align); larger alignments always map afresh.
 *   - a reused mapping is dirty: hl_large_alloc clears the block for calloc's sake,
 *     hl_large_alloc_dirty does not.
 *   - mremap keeps a mapping's NUMA policy, and the cache is placement-blind (one process, one
 *     policy), so the `numa` key still holds for every large block.
 *
 * realloc (under every policy): a block that still fits, wasting at most half, stays. Otherwise
 * a cached mapping of the new size (the 2x rule), if there is one, takes a copy: its pages are resident, a memcpy costs less than
 * faulting in fresh zeroed pages (realloc-churn with blocks up to 64 KiB .. 4 MiB ran 1.4x to
 * 2.2x faster than with mremap first), and the number of cached mappings stays steady. Without
 * one, shrinking cuts the tail off into the cache (no system call) and growing calls mremap,
 * which moves the pages without copying them and faults in only the new ones. A block that
 * moves gets malloc's alignment, no more (realloc promises no more), even if it had more. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "hl.h"
#include "large.h"

size_t hl_large_threshold;

struct large_header { size_t map_size, offset; };   /* offset: block - mapping start */

static struct large_header *header_of(const void *p) { return (struct large_header *)p - 1; }

/* ---- the cache of free mappings ----------------------------------------------------------- */

#define MAX_PAGES_LOG 24                /* 2^24 pages: 64 GiB, the largest large_cache */
#define NBINS         (16 + 4 * (MAX_PAGES_LOG - 4 + 1))
#define FIRST_BIN_SCAN 8

/* Written at the start of a free mapping: the cache needs no memory of its own. */
struct free_map {
    struct free_map *next, *prev;       /* in its bin, newest first */
    struct free_map *newer, *older;     /* in the whole cache, for evicting the oldest */
    size_t size;                        /* bytes, the whole mapping */
};

static struct {
    hl_lock lock;
    size_t bytes;                       /* in the cache, <= hl_cfg.large_cache */
    struct free_map *newest, *oldest;
    struct free_map *bin[NBINS];
} cache HL_CACHE_ALIGNED;

static unsigned bin_of(size_t pages)
{
    if (pages < 16) return (unsigned)pages;
    unsigned e = 63u - (unsigned)__builtin_clzll(pages);
    unsigned b = 16 + (e - 4) * 4 + (unsigned)((pages >> (e - 2)) & 3);
    return b < NBINS ? b : NBINS - 1;   /* only for lookups: nothing above the bound is kept */
}

static void unlink_map(struct free_map *m)
{
    if (m->prev) m->prev->next = m->next;
    else cache.bin[bin_of(m->size / HL_PAGE)] = m->next;
    if (m->next) m->next->prev = m->prev;
    if (m->newer) m->newer->older = m->older; else cache.newest = m->older;
    if (m->older) m->older->newer = m->newer; else cache.oldest = m->newer;
    cache.bytes -= m->size;
}

/* Bytes in live large mappings: what `follow`'s bound follows. */
static _Atomic size_t live_bytes;

size_t hl_large_live(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }

size_t hl_large_bound(size_t live)
{
    switch (hl_cfg.large_reuse) {
    case HL_LARGE_UNMAP: return 0;
    case HL_LARGE_FIXED: return hl_cfg.large_cache;
    default: {
        double f = hl_cfg.large_follow * (double)live;
        size_t follow = f >= (double)SIZE_MAX ? SIZE_MAX : (size_t)f;
        return follow > hl_cfg.large_cache ? follow : hl_cfg.large_cache;
    }
    }
}

static size_t bound_now(void) { return hl_large_bound(hl_large_live()); }

/* A cached mapping for *size bytes (the 2x fit rule above), or NULL; *size becomes its size. */
static char *cache_take(size_t *size)
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
    if (m) unlink_map(m);
    hl_lock_release(&cache.lock);
    if (m) *size = m->size;
    return (char *)m;
}

/* `follow`: the cached mapping closest to need bytes: the smallest of at least need (a bin's
 * newest; in need's own bin the first FIRST_BIN_SCAN), else the largest smaller one (to be
 * grown). NULL when the cache is empty; *size becomes its size. */
static char *cache_take_nearest(size_t *size)
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
    if (m) unlink_map(m);
    hl_lock_release(&cache.lock);
    if (m) *size = m->size;
    return (char *)m;
}

/* Keep a free mapping (already HL_OWNER_NONE in the page map), unmapping the oldest ones past
 * the bound after the lock is released. */
static void cache_put(char *base, size_t size)
{
    if (hl_cfg.large_reuse == HL_LARGE_UNMAP) { hl_os_free(base, size, HL_OS_HELD); return; }
    size_t bound = bound_now();
    struct free_map *m = (struct free_map *)base, *victims = NULL;
    m->size = size;
    hl_lock_acquire(&cache.lock);
    if (size > bound) {                 /* unmapped at once, and the bound may have fallen */
        m->next = NULL;
        victims = m;
    } else {
        m->prev = m->newer = NULL;
        struct free_map **head = &cache.bin[bin_of(size / HL_PAGE)];
        if ((m->next = *head)) m->next->prev = m;
        *head = m;
        if ((m->older = cache.newest)) m->older->newer = m; else cache.oldest = m;
        cache.newest = m;
        cache.bytes += size;
    }
    while (cache.bytes > bound) {
        struct free_map *o = cache.oldest;
        unlink_map(o);
        o->next = victims;
        victims = o;
    }
    hl_lock_release(&cache.lock);
    while (victims) {
        struct free_map *v = victims;
        victims = v->next;
        hl_os_free(v, v->size, HL_OS_HELD);
    }
}

void hl_large_flush(void)
{
    hl_lock_acquire(&cache.lock);
    struct free_map *all = cache.newest;
    cache.newest = cache.oldest = NULL;
    memset(cache.bin, 0, sizeof cache.bin);
    cache.bytes = 0;
    hl_lock_release(&cache.lock);
    while (all) {
        struct free_map *v = all;
        all = v->older;
        hl_os_free(v, v->size, HL_OS_HELD);
    }
}

size_t hl_large_cached(void)
{
    hl_lock_acquire(&cache.lock);
    size_t bytes = cache.bytes;
    hl_lock_release(&cache.lock);
    return bytes;
}

void hl_large_fork(int phase)
{
    if (phase == 0) hl_lock_acquire(&cache.lock);
    else if (phase == 1) hl_lock_release(&cache.lock);
    else hl_lock_init(&cache.lock);
}

/* ---- blocks ---------------------------------------------------------------------------------- */

static void *hand_out(char *base, size_t map_size, size_t offset)
{
    char *p = base + offset;
    atomic_fetch_add_explicit(&live_bytes, map_size, memory_order_relaxed);
    *header_of(p) = (struct large_header){ map_size, offset };
    hl_pagemap_set(base, map_size, HL_OWNER_LARGE);
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
    char *base = cache_take_nearest(&got);
    size_t dirty = size;                                  /* bytes of the block to clear */
    if (base && got < need) {
        char *to = mremap(base, got, need, MREMAP_MAYMOVE);
        if (to == MAP_FAILED) {               /* e.g. no address space: keep it, map anew */
            cache_put(base, got);
            base = NULL;
        } else {
            hl_os_account(HL_OS_HELD, (ptrdiff_t)(need - got));
            dirty = got - offset;                         /* the new pages come zeroed */
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
    if (got > need) cache_put(base + need, got - need);   /* the tail, HL_OWNER_NONE already */
    return p;
}

static void *alloc(size_t size, size_t align, bool zero)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    size_t offset = align;                       /* room for the header, keeping alignment */
    if (size > PTRDIFF_MAX - offset - HL_PAGE) { errno = ENOMEM; return NULL; }
    size_t map_size = hl_align_up(offset + size, HL_PAGE);
    if (align <= HL_PAGE && hl_cfg.large_reuse == HL_LARGE_FOLLOW) return follow(size, map_size, offset, zero);
    char *base = align <= HL_PAGE ? cache_take(&map_size) : NULL;
    if (base) {
        if (zero) memset(base + offset, 0, size);
    } else if (!(base = hl_os_alloc(map_size, align, HL_OS_HELD))) {
        return NULL;
    }
    return hand_out(base, map_size, offset);
}

void *hl_large_alloc(size_t size, size_t align) { return alloc(size, align, true); }
void *hl_large_alloc_dirty(size_t size, size_t align) { return alloc(size, align, false); }

void hl_large_free(void *p)
{
    struct large_header h = *header_of(p);
    char *base = (char *)p - h.offset;
    atomic_fetch_sub_explicit(&live_bytes, h.map_size, memory_order_relaxed);
    hl_pagemap_set(base, h.map_size, HL_OWNER_NONE);
    cache_put(base, h.map_size);
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
    char *to = cache_take(&got);
    if (to) {                                                /* a cached mapping and a copy */
        void *q = hand_out(to, got, HL_ALIGN);
        memcpy(q, p, size < old - offset ? size : old - offset);
        hl_large_free(p);
        return q;
    }
    if (need < old) {
        h->map_size = need;
        atomic_fetch_sub_explicit(&live_bytes, old - need, memory_order_relaxed);
        hl_pagemap_set(base + need, old - need, HL_OWNER_NONE);
        cache_put(base + need, old - need);                  /* a mapping of its own now */
        return p;
    }
    /* Clear the old pages first: once mremap has moved the block, another thread may map the
     * range and mark it as its own. */
    hl_pagemap_set(base, old, HL_OWNER_NONE);
    to = mremap(base, old, need, MREMAP_MAYMOVE);
    if (to == MAP_FAILED) {                      /* e.g. the range spans two mappings: copy */
        hl_pagemap_set(base, old, HL_OWNER_LARGE);
        return moved(p, size, old - offset);
    }
    hl_os_account(HL_OS_HELD, (ptrdiff_t)(need - old));
    atomic_fetch_add_explicit(&live_bytes, need - old, memory_order_relaxed);
    header_of(to + offset)->map_size = need;
    hl_pagemap_set(to, need, HL_OWNER_LARGE);
    return to + offset;
}
