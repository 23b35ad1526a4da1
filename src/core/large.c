/* large.c — objects above large_threshold (Hoard §3: "If sz > S/2, allocate the superblock
 * from the OS"): one OS mapping each, whose pages the page map marks HL_OWNER_LARGE. A 16-byte
 * header just below the block records the mapping (size, and the block's offset in it).
 *
 * Freed mappings are kept in a cache for reuse, so a program that frees and allocates large
 * buffers, or a realloc-grown one, does not pay mmap, munmap and a page fault per page each time:
 *   - bound: at most `large_cache` bytes, oldest-freed mappings unmapped first; 0 disables it.
 *     Cached mappings stay counted in A (hl_os_bytes): memory held is memory held.
 *   - a cached mapping is marked HL_OWNER_NONE in the page map, as an unmapped one was, so a
 *     double free or a foreign pointer into it is still caught by free().
 *   - lookup takes no system call: one lock, bins by page count (exact below 16 pages, then
 *     four per power of two), newest first in each. A request of n pages takes a mapping of
 *     m pages with n <= m <= 2n (waste at most 2x, as realloc's in-place rule), the smallest
 *     bin first; in the request's own bin only the first 8 entries are tried.
 *   - alignment: requests with align <= HL_PAGE are served from the cache (a mapping is page
 *     aligned, the block sits at offset align); larger alignments always map afresh.
 *   - a reused mapping is dirty: hl_large_alloc clears the block for calloc's sake,
 *     hl_large_alloc_dirty does not.
 *   - mremap keeps a mapping's NUMA policy, and the cache is placement-blind (one process, one
 *     policy), so the `numa` key still holds for every large block.
 *
 * realloc: a block that still fits, wasting at most half, stays. Otherwise a cached mapping of
 * the new size, if there is one, takes a copy: its pages are resident, a memcpy costs less than
 * faulting in fresh zeroed pages (realloc-churn with blocks up to 64 KiB .. 4 MiB ran 1.4x to
 * 2.2x faster than with mremap first), and the number of cached mappings stays steady. Without
 * one, shrinking cuts the tail off into the cache (no system call) and growing calls mremap,
 * which moves the pages without copying them and faults in only the new ones. A block that
 * moves gets malloc's alignment, no more (realloc promises no more), even if it had more. */
#include <errno.h>
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

/* A cached mapping for *size bytes (see the fit rule above), or NULL; *size becomes its size. */
static char *cache_take(size_t *size)
{
    size_t need = *size;
    if (need > hl_cfg.large_cache) return NULL;
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

/* Keep a free mapping (already HL_OWNER_NONE in the page map), unmapping the oldest ones past
 * the bound after the lock is released. */
static void cache_put(char *base, size_t size)
{
    if (size > hl_cfg.large_cache) { hl_os_free(base, size, HL_OS_HELD); return; }
    struct free_map *m = (struct free_map *)base, *victims = NULL;
    m->size = size;
    m->prev = m->newer = NULL;
    hl_lock_acquire(&cache.lock);
    struct free_map **head = &cache.bin[bin_of(size / HL_PAGE)];
    if ((m->next = *head)) m->next->prev = m;
    *head = m;
    if ((m->older = cache.newest)) m->older->newer = m; else cache.oldest = m;
    cache.newest = m;
    cache.bytes += size;
    while (cache.bytes > hl_cfg.large_cache) {
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
    *header_of(p) = (struct large_header){ map_size, offset };
    hl_pagemap_set(base, map_size, HL_OWNER_LARGE);
    HL_COUNT(large_allocs, 1);
    return p;
}

static void *alloc(size_t size, size_t align, bool zero)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    size_t offset = align;                       /* room for the header, keeping alignment */
    if (size > PTRDIFF_MAX - offset - HL_PAGE) { errno = ENOMEM; return NULL; }
    size_t map_size = hl_align_up(offset + size, HL_PAGE);
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
    header_of(to + offset)->map_size = need;
    hl_pagemap_set(to, need, HL_OWNER_LARGE);
    return to + offset;
}
