/* test_large.c — large objects (large.c): the cache of freed mappings (reuse, its bound, the
 * waste rule, calloc of a reused mapping, double free still caught), hl_large_realloc growing
 * and shrinking 4 KiB .. 64 MiB blocks with their contents, alignment and usable sizes, and
 * each large_reuse policy: `follow` trimming a larger and growing a smaller cached mapping,
 * merging neighbours, its bound following the live large bytes and shrinking back, `unmap` never caching;
 * under a purge policy (issue 36), a cached mapping's pages given back. Meson
 * runs it under every large_reuse value, with large_cache at its default and 0, and with
 * HOARD_CHECKS=on; the checks that need a cache skip when there is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "large.h"
#include "purge.h"

#define MiB ((size_t)1 << 20)
#define SLACK MiB                       /* page-map leaves (256 KiB each) mapped meanwhile */

/* A byte of block `seed` at offset i; the page number is mixed in, so moved pages show. */
static inline unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char)(seed + i * 131 + (i >> 12));
}

static void fill(unsigned char *p, size_t from, size_t to, unsigned seed)
{
    for (size_t i = from; i < to; i++) p[i] = pat(seed, i);
}

static int intact(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(seed, i)) return 0;
    return 1;
}

/* The smallest large request, and the mapping bytes a live large block holds. */
static size_t big(size_t n) { return n > hl_large_threshold ? n : hl_large_threshold + 1; }
static size_t held(const void *p) { return hl_large_usable(p) + HL_ALIGN; }

static bool following(void) { return hl_cfg.large_reuse == HL_LARGE_FOLLOW; }
/* Whether a freed large mapping may be kept at all. */
static bool caching(void)
{
    return hl_cfg.large_reuse == HL_LARGE_FOLLOW ||
           (hl_cfg.large_reuse == HL_LARGE_FIXED && hl_cfg.large_cache);
}
/* A mapping's bytes for an n-byte block at the default alignment. */
static size_t mapping(size_t n) { return hl_align_up(n + HL_ALIGN, HL_PAGE); }

static void freed_mapping_is_reused(void **state)
{
    (void)state;
    if (!caching()) skip();
    size_t sizes[] = { big(0), 5000, 8192, 100000, MiB, 10 * MiB };
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = big(sizes[i]);
        void *p = hl_malloc(n);
        size_t a = hl_os_bytes();
        hl_free(p);
        assert_int_equal(hl_pagemap_get(p), HL_OWNER_NONE);   /* cached, yet not ours */
        if (hl_large_bound_now() < mapping(n)) continue;   /* follow, large_cache 0 */
        assert_int_equal(hl_os_bytes(), a);                   /* still held: A unchanged */
        void *q = hl_malloc(n);
        assert_ptr_equal(q, p);
        assert_int_equal(hl_pagemap_get(q), HL_OWNER_LARGE);
        assert_int_equal(hl_os_bytes(), a);
        hl_free(q);
    }
    /* fixed: within 2x a smaller request takes the mapping; a request 5x smaller does not.
     * follow: both take it, trimmed to their size. */
    hl_large_flush();
    void *p = hl_malloc(MiB);
    hl_free(p);
    if (hl_large_cached() < mapping(MiB)) return;         /* follow, large_cache 0: no room */
    void *q = hl_malloc(MiB * 2 / 3);
    assert_ptr_equal(q, p);
    hl_free(q);
    void *r = hl_malloc(MiB / 5);
    if (following()) assert_true((char *)r >= (char *)p && (char *)r < (char *)p + MiB);
    else assert_ptr_not_equal(r, p);
    assert_true(hl_large_usable(r) < MiB / 2);
    hl_free(r);
}

/* The pure bound of each policy and the peak's decay (large.c, hl_large_bound, _decay). */
static void bound_of_each_policy(void **state)
{
    (void)state;
    struct hl_config saved = hl_cfg;
    hl_cfg.large_cache = 32 * MiB;
    hl_cfg.large_follow = 0.5;
    hl_cfg.large_reuse = HL_LARGE_UNMAP;
    assert_int_equal(hl_large_bound(0, 0), 0);
    assert_int_equal(hl_large_bound(1000 * MiB, 1000 * MiB), 0);
    hl_cfg.large_reuse = HL_LARGE_FIXED;
    assert_int_equal(hl_large_bound(0, 0), 32 * MiB);
    assert_int_equal(hl_large_bound(1000 * MiB, 2000 * MiB), 32 * MiB);
    hl_cfg.large_reuse = HL_LARGE_FOLLOW;
    assert_int_equal(hl_large_bound(0, 0), 32 * MiB);               /* the floor */
    assert_int_equal(hl_large_bound(40 * MiB, 40 * MiB), 32 * MiB);
    assert_int_equal(hl_large_bound(1000 * MiB, 1000 * MiB), 500 * MiB);
    assert_int_equal(hl_large_bound(800 * MiB, 1000 * MiB), 700 * MiB); /* A <= 1.5 x peak */
    assert_int_equal(hl_large_bound(1000 * MiB, 0), 500 * MiB);     /* peak below live: live */
    hl_cfg.large_cache = 0;
    assert_int_equal(hl_large_bound(0, 0), 0);
    assert_int_equal(hl_large_bound(8 * MiB, 8 * MiB), 4 * MiB);
    hl_cfg = saved;
    assert_int_equal(hl_large_decay(100 * MiB, 200 * MiB), 200 * MiB);
    assert_int_equal(hl_large_decay(256 * MiB, 0), 255 * MiB);
    size_t peak = 256 * MiB;
    for (int i = 0; i < 700; i++) peak = hl_large_decay(peak, 0);
    assert_true(peak < 256 * MiB / 12);                               /* (255/256)^700 < 8% */
    assert_true(peak > 256 * MiB / 32);                               /* > 3%: not faster */
}

/* follow: a request smaller than the only cached mapping takes its head; the tail stays
 * cached as a mapping of its own, and A does not change. calloc's block reads zero. */
static void follow_trims_a_larger_mapping(void **state)
{
    (void)state;
    if (!following()) skip();
    hl_large_flush();
    unsigned char *p = hl_malloc(4 * MiB);
    memset(p, 0xAB, hl_large_usable(p));
    size_t a = hl_os_bytes(), live = hl_large_live();
    hl_free(p);
    assert_int_equal(hl_large_live(), live - mapping(4 * MiB));
    if (hl_large_bound_now() < mapping(4 * MiB)) skip();   /* large_cache 0 */
    assert_int_equal(hl_large_cached(), mapping(4 * MiB));
    unsigned char *q = hl_calloc(1, MiB);
    assert_ptr_equal(q, p);
    assert_int_equal(hl_large_usable(q), mapping(MiB) - HL_ALIGN);
    assert_int_equal(hl_large_cached(), mapping(4 * MiB) - mapping(MiB));
    assert_int_equal(hl_os_bytes(), a);
    assert_int_equal(hl_pagemap_get(q + mapping(MiB) - HL_ALIGN), HL_OWNER_NONE);  /* the tail */
    for (size_t i = 0; i < MiB; i++)
        if (q[i]) fail_msg("calloc of a trimmed mapping: byte %zu is %d", i, q[i]);
    /* The tail serves the next request that fits in it. */
    unsigned char *r = hl_malloc(2 * MiB);
    assert_ptr_equal(r, q + mapping(MiB));
    assert_int_equal(hl_large_cached(), mapping(4 * MiB) - mapping(MiB) - mapping(2 * MiB));
    hl_free(q);
    hl_free(r);
    hl_large_flush();
}

/* follow: a request larger than every cached mapping grows the largest with mremap and fills
 * the new part with the others' pages (fill_from_cache), so A grows by what the cache could
 * not fill only; calloc's block reads zero, the old and the moved pages included. */
static void follow_grows_a_smaller_mapping(void **state)
{
    (void)state;
    if (!following()) skip();
    hl_large_flush();
    unsigned char *p = hl_malloc(MiB), *gap = hl_malloc(MiB), *s = hl_malloc(MiB / 2);
    memset(p, 0xCD, hl_large_usable(p));
    memset(s, 0xCD, hl_large_usable(s));
    hl_free(s);
    hl_free(p);
    if (hl_large_cached() != mapping(MiB) + mapping(MiB / 2)) skip();    /* no room to cache */
    /* (The kernel may have placed s right next to p, gap in some hole: then they merged, and
     * the one mapping grows.) Either way the whole cache goes into the new block. */
    size_t a = hl_os_bytes();
    unsigned char *q = hl_calloc(1, 3 * MiB);
    assert_non_null(q);
    assert_int_equal(hl_large_usable(q), mapping(3 * MiB) - HL_ALIGN);
    assert_int_equal(hl_large_cached(), 0);
    assert_int_equal(hl_os_bytes(), a + mapping(3 * MiB) - mapping(MiB) - mapping(MiB / 2));
    assert_int_equal(hl_pagemap_get(q), HL_OWNER_LARGE);
    assert_int_equal(hl_pagemap_get(q + 3 * MiB - 1), HL_OWNER_LARGE);
    for (size_t i = 0; i < 3 * MiB; i++)
        if (q[i]) fail_msg("calloc of a grown mapping: byte %zu is %d", i, q[i]);
    memset(q, 0x11, 3 * MiB);
    hl_free(q);
    /* malloc of a grown mapping: usable to its end. */
    unsigned char *r = hl_malloc(6 * MiB);
    assert_non_null(r);
    memset(r, 0x22, hl_large_usable(r));
    hl_free(r);
    hl_free(gap);
    hl_large_flush();
}

/* follow: a freed block merges with the cached mappings on either side of it, so the three
 * pieces of one mapping come back as one that serves a request of the whole. */
static void follow_merges_neighbours(void **state)
{
    (void)state;
    if (!following()) skip();
    hl_large_flush();
    char *p = hl_malloc(6 * MiB);
    hl_free(p);
    if (hl_large_cached() != mapping(6 * MiB)) skip();                  /* no room to cache */
    char *a = hl_malloc(MiB), *b = hl_malloc(MiB), *c = hl_malloc(MiB);  /* cut from it */
    assert_ptr_equal(a, p);
    assert_ptr_equal(b, a + mapping(MiB));
    assert_ptr_equal(c, b + mapping(MiB));
    hl_free(a);
    hl_free(c);                                       /* merges with the tail after it */
    assert_int_equal(hl_large_cached(), mapping(6 * MiB) - mapping(MiB));
    hl_free(b);                                       /* joins both */
    assert_int_equal(hl_large_cached(), mapping(6 * MiB));
    size_t a0 = hl_os_bytes();
    char *q = hl_malloc(6 * MiB);
    assert_ptr_equal(q, p);
    assert_int_equal(hl_large_cached(), 0);
    assert_int_equal(hl_os_bytes(), a0);
    hl_free(q);
    hl_large_flush();
}

/* The cache never holds more than the bound for the live large bytes now; under follow with
 * large_cache 0 it holds something while large blocks live and nothing once they are all
 * gone. */
static void bound_follows_the_live_set(void **state)
{
    (void)state;
    enum { N = 40 };
    hl_large_flush();
    void *b[N];
    size_t a0 = hl_os_bytes(), live0 = hl_large_live();
    for (int i = 0; i < N; i++) b[i] = hl_malloc(MiB + (size_t)i * 100000);
    for (int i = 0; i < N; i += 2) {                 /* every other one: no two neighbours */
        hl_free(b[i]);
        assert_true(hl_large_cached() <= hl_large_bound_now());
    }
    if (following()) assert_true(hl_large_cached() > 0);
    if (!caching()) assert_int_equal(hl_large_cached(), 0);
    for (int i = 1; i < N; i += 2) {
        hl_free(b[i]);
        assert_true(hl_large_cached() <= hl_large_bound_now());
    }
    assert_int_equal(hl_large_live(), live0);
    assert_true(hl_large_cached() <= hl_large_bound_now());
    /* Frees of small large blocks bring the peak down to the live bytes, and the cache with
     * it to what the live bytes alone allow. */
    for (int i = 0; i < 1500; i++) hl_free(hl_malloc(big(0)));
    assert_true(hl_large_peak() <= live0 + MiB);
    size_t floor = hl_large_bound(live0, live0 + MiB);
    assert_true(hl_large_cached() <= floor);
    assert_true(hl_os_bytes() <= a0 + floor + SLACK);
    hl_large_flush();
}

/* unmap: the paper's policy, every freed mapping goes back at once; A falls by the block. */
static void unmap_never_caches(void **state)
{
    (void)state;
    if (hl_cfg.large_reuse != HL_LARGE_UNMAP) skip();
    for (size_t n = big(0); n < 16 * MiB; n = n * 3 + 1) {
        void *p = hl_malloc(n);
        size_t a = hl_os_bytes();
        hl_free(p);
        assert_int_equal(hl_large_cached(), 0);
        assert_int_equal(hl_os_bytes(), a - mapping(n));
        void *q = hl_realloc(hl_malloc(n), n / 2 > big(0) ? n / 2 : big(0));   /* a cut tail */
        assert_int_equal(hl_large_cached(), 0);
        hl_free(q);
    }
}

/* Pages of [from, from + pages x HL_PAGE) resident (mincore); -1 if any is unmapped. */
static size_t resident_pages(const char *from, size_t pages)
{
    static unsigned char vec[4096];
    if (pages > sizeof vec || mincore((void *)from, pages * HL_PAGE, vec)) return (size_t)-1;
    size_t n = 0;
    for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
    return n;
}

/* LazyFree of this process (MADV_FREE pages not yet taken by the kernel), KiB. */
static long lazyfree_kb(void)
{
    char buf[4096];
    int fd = open("/proc/self/smaps_rollup", O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *l = strstr(buf, "\nLazyFree:");
    return l ? strtol(l + 10, NULL, 10) : -1;
}

/* purge on (large.c's purge_freed, issue 36): a mapping freed into the cache beyond `retain`
 * keeps its address range, not its pages after the first: none of them resident under
 * dontneed, all LazyFree (or already taken by the kernel) under free; without a purge, or
 * within `retain`, all stay resident. The mapping is reused as any cached one, its contents
 * the program's to write. */
static void purge_gives_back_cached_pages(void **state)
{
    (void)state;
    if (!caching()) skip();
    struct hl_config saved = hl_cfg;
    const int policy[] = { HL_PURGE_OFF, HL_PURGE_DONTNEED, HL_PURGE_FREE, HL_PURGE_DONTNEED };
    const size_t retain[] = { 0, 0, 0, 64 * MiB };       /* the last: within the budget */
    size_t n = 4 * MiB, pages = mapping(n) / HL_PAGE - 1;
    for (int k = 0; k < 4; k++) {
        hl_cfg.purge = policy[k];
        hl_cfg.retain = retain[k];
        hl_large_flush();
        unsigned char *p = hl_malloc(n);
        fill(p, 0, n, 7);
        const char *base = (const char *)((uintptr_t)p & ~(uintptr_t)(HL_PAGE - 1));
        long lazy = lazyfree_kb();
        hl_free(p);
        bool cached = hl_large_cached() >= mapping(n);   /* follow, large_cache 0: maybe not */
        size_t res = cached ? resident_pages(base + HL_PAGE, pages) : 0;
        long lazy_pages = (lazyfree_kb() - lazy) / (long)(HL_PAGE >> 10);
        if (cached && (policy[k] == HL_PURGE_OFF || retain[k])) assert_int_equal(res, pages);
        if (cached && policy[k] == HL_PURGE_DONTNEED && !retain[k]) assert_int_equal(res, 0);
        if (cached && policy[k] == HL_PURGE_FREE && lazy >= 0)
            assert_true(lazy_pages + (long)(pages - res) >= (long)pages / 2);
        unsigned char *q = hl_malloc(n);
        if (cached) assert_ptr_equal(q, p);
        fill(q, 0, n, 9);
        assert_true(intact(q, n, 9));
        hl_free(q);
    }
    hl_cfg = saved;
}

/* Untimed (purge_delay = 0) with a budget, a cached mapping's pages wait half a second
 * (HL_PURGE_RANGE_AGE_MS) before they may be purged: past that, a slow path's tick purges
 * them (here called directly: this test's process has no purge thread, since `purge` was off
 * when its first malloc decided). Waits, never times anything. */
static void age_ranges(void)
{
    usleep((HL_PURGE_RANGE_AGE_MS + 100) * 1000);
    hl_purge_tick_slow();
}

/* purge = dontneed, purge_delay = 0, retain > 0 (issue 51): the excess over `retain` is
 * purged once aged (never as the cache takes a mapping), the oldest cached mapping's pages
 * first, so the one freed last, which the next request of its size takes, keeps its pages.
 * At first the mapping freed beyond the budget was purged at once (none of its pages
 * resident), and the next malloc of its size faulted them in again; then the oldest went at
 * once, and largebuf still ran at 0.82-0.86 of hoard2026's speed under hoard202607. */
static void purge_takes_the_oldest_first(void **state)
{
    (void)state;
    if (!caching()) skip();
    struct hl_config saved = hl_cfg;
    size_t n = 4 * MiB, pages = mapping(n) / HL_PAGE - 1;
    hl_cfg.purge = HL_PURGE_DONTNEED;
    hl_cfg.purge_delay = 0;
    hl_cfg.retain = mapping(n) - HL_PAGE;                 /* one cached mapping's pages */
    hl_large_flush();
    unsigned char *a = hl_malloc(n), *spacer = hl_malloc(n), *b = hl_malloc(n);
    fill(a, 0, n, 3);
    fill(b, 0, n, 4);
    const char *abase = (const char *)a - HL_ALIGN, *bbase = (const char *)b - HL_ALIGN;
    hl_free(a);                                           /* cached, within retain: kept */
    if (hl_large_cached() < mapping(n)) goto out;         /* follow, large_cache 0: maybe */
    assert_int_equal(resident_pages(abase + HL_PAGE, pages), pages);
    hl_free(b);                                           /* beyond retain: a goes, not b */
    if (hl_large_cached() < 2 * mapping(n)) goto out;
    assert_int_equal(resident_pages(abase + HL_PAGE, pages), pages);     /* not yet */
    age_ranges();
    assert_int_equal(resident_pages(bbase + HL_PAGE, pages), pages);
    assert_int_equal(resident_pages(abase + HL_PAGE, pages), 0);
    unsigned char *q = hl_malloc(n);                      /* the same size: b, resident */
    assert_ptr_equal(q, b);
    for (size_t i = HL_PAGE; i < n; i++)                  /* (the first: the cache's record) */
        if (q[i] != pat(4, i)) fail_msg("byte %zu of the reused block lost", i);
    hl_free(q);
out:
    hl_free(spacer);
    hl_large_flush();
    hl_cfg = saved;
}

static void calloc_clears_a_reused_mapping(void **state)
{
    (void)state;
    for (size_t n = big(0); n < 8 * MiB; n = n * 3 + 4321) {
        unsigned char *d = hl_malloc(n);
        memset(d, 0xAB, hl_malloc_usable_size(d));
        hl_free(d);
        unsigned char *z = hl_calloc(1, n);
        if (caching() && hl_large_bound_now() >= mapping(n)) assert_ptr_equal(z, d);
        for (size_t i = 0; i < n; i++)
            if (z[i]) fail_msg("calloc(%zu) byte %zu is %d", n, i, z[i]);
        hl_free(z);
    }
}

/* At every step A stays within what the live blocks hold plus large_cache. */
static void cache_is_bounded(void **state)
{
    (void)state;
    enum { N = 64 };
    void *live[N] = { 0 };
    size_t live_bytes = 0, a0 = hl_os_bytes() - hl_large_cached();
    unsigned seed = 1;
    for (int step = 0; step < 4000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned i = (seed >> 8) % N;
        if (live[i]) {
            live_bytes -= held(live[i]);
            hl_free(live[i]);
            live[i] = NULL;
        } else {
            size_t n = big(((size_t)4096 << ((seed >> 20) % 11)) + (seed >> 4) % 4096);
            live[i] = hl_malloc(n);          /* 4 KiB .. 4 MiB */
            assert_non_null(live[i]);
            live_bytes += held(live[i]);
        }
        size_t bound = hl_large_bound_now();
        assert_true(hl_large_cached() <= bound);
        assert_true(hl_os_bytes() <= a0 + live_bytes + bound + SLACK);
    }
    for (unsigned i = 0; i < N; i++) hl_free(live[i]);
    assert_true(hl_os_bytes() <= a0 + hl_large_bound_now() + SLACK);
    if (!caching()) assert_int_equal(hl_large_cached(), 0);
}

/* Grow one block 4 KiB -> 64 MiB and shrink it back, calling hl_large_realloc directly. */
static void realloc_keeps_contents_and_accounts(void **state)
{
    (void)state;
    size_t n = big(4096);
    unsigned char *p = hl_malloc(n);
    fill(p, 0, n, 7);
    size_t other = hl_os_bytes() - hl_large_cached() - held(p);  /* A not in p or the cache */
    size_t sizes[64], k = 0;
    for (size_t s = n; s < 64 * MiB; s = s * 17 / 10 + 1) sizes[k++] = s;
    sizes[k++] = 64 * MiB;
    for (size_t j = k - 1; j-- > 0;) sizes[k++] = sizes[j] + 333;   /* and back down */
    for (size_t j = 1; j < k; j++) {
        size_t m = sizes[j];
        unsigned char *q = hl_large_realloc(p, m);
        assert_non_null(q);
        assert_int_equal((uintptr_t)q % HL_ALIGN, 0);
        assert_int_equal(hl_pagemap_get(q), HL_OWNER_LARGE);
        assert_int_equal(hl_pagemap_get(q + m - 1), HL_OWNER_LARGE);
        if (q != p) assert_int_equal(hl_pagemap_get(p), HL_OWNER_NONE);
        assert_true(hl_large_usable(q) >= m);
        size_t keep = n < m ? n : m;
        if (!intact(q, keep, 7)) fail_msg("realloc %zu -> %zu lost the contents", n, m);
        fill(q, keep, m, 7);
        size_t a = hl_os_bytes() - hl_large_cached() - held(q);
        assert_true(a >= other && a <= other + SLACK);
        p = q;
        n = m;
    }
    hl_free(p);
}

static void realloc_of_an_aligned_block(void **state)
{
    (void)state;
    for (size_t align = 32; align <= 4 * MiB; align *= 8) {
        size_t n = big(100000);
        unsigned char *p = hl_aligned_alloc(align, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % align, 0);
        assert_int_equal(hl_pagemap_get(p), HL_OWNER_LARGE);
        fill(p, 0, n, 3);
        unsigned char *q = hl_large_realloc(p, 3 * MiB);
        assert_non_null(q);
        assert_true(intact(q, n, 3));
        fill(q, n, 3 * MiB, 3);
        unsigned char *r = hl_large_realloc(q, big(10000));
        assert_non_null(r);
        assert_true(intact(r, big(10000), 3));
        hl_free(r);
    }
}

static void realloc_failure_leaves_the_block(void **state)
{
    (void)state;
    size_t n = big(50000);
    unsigned char *p = hl_malloc(n);
    fill(p, 0, n, 9);
    size_t a = hl_os_bytes();
    size_t huge[] = { (size_t)PTRDIFF_MAX, (size_t)1 << 47 };   /* overflow; no address space */
    for (unsigned i = 0; i < 2; i++) {
        errno = 0;
        assert_null(hl_large_realloc(p, huge[i]));
        assert_int_equal(errno, ENOMEM);
        assert_int_equal(hl_pagemap_get(p), HL_OWNER_LARGE);
        assert_true(intact(p, n, 9));
        assert_int_equal(hl_os_bytes(), a);
    }
    hl_free(p);
}

static void alignment_requests(void **state)
{
    (void)state;
    size_t sizes[] = { big(0), 100000, 3 * MiB };
    for (size_t align = 32; align <= 8 * MiB; align *= 2)
        for (unsigned i = 0; i < 3; i++)
            for (int round = 0; round < 2; round++) {    /* the second may come from the cache */
                unsigned char *p = hl_aligned_alloc(align, sizes[i]);
                assert_non_null(p);
                assert_int_equal((uintptr_t)p % align, 0);
                size_t u = hl_malloc_usable_size(p);
                assert_true(u >= sizes[i]);
                memset(p, 0x5A, u);
                hl_free(p);
            }
}

/* Usable sizes cover the request, waste at most 2x, and are writable to the end; run after
 * the cache is warm, so reused mappings are measured too. */
static void usable_size_is_right(void **state)
{
    (void)state;
    void *warm[32];
    for (unsigned i = 0; i < 32; i++) warm[i] = hl_malloc(big((size_t)(i + 1) * 97 * 1024));
    for (unsigned i = 0; i < 32; i++) hl_free(warm[i]);
    for (size_t n = big(0); n < 16 * MiB; n = n * 5 / 4 + 1) {
        unsigned char *p = hl_malloc(n);
        size_t u = hl_malloc_usable_size(p);
        assert_int_equal(u, hl_large_usable(p));
        assert_true(u >= n);
        assert_true(u + HL_ALIGN <= 2 * hl_align_up(n + HL_ALIGN, HL_PAGE));
        p[u - 1] = 1;
        p[0] = 1;
        hl_free(p);
    }
}

/* A double free of a cached block is still caught: free() sees a page no one owns. */
static void double_free_aborts(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);             /* the abort message */
        if (null < 0 || dup2(null, STDERR_FILENO) < 0) _exit(3);
        void *p = hl_malloc(MiB);
        if (getenv("TEST_LARGE_TRIMMED")) {         /* follow: a block trimmed from a larger */
            hl_free(hl_malloc(4 * MiB));
            p = hl_malloc(MiB);
        }
        hl_free(p);
        hl_free(p);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

static void double_free_of_a_trimmed_block_aborts(void **state)
{
    setenv("TEST_LARGE_TRIMMED", "1", 1);
    double_free_aborts(state);
    unsetenv("TEST_LARGE_TRIMMED");
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char *buf[8] = { 0 };
    size_t len[8] = { 0 };
    for (int step = 0; step < 3000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned i = (seed >> 8) % 8, tag = (unsigned)(uintptr_t)arg + i;
        if (buf[i] && !intact(buf[i], len[i], tag)) return "contents lost";
        if (buf[i] && (seed >> 16) % 4 == 0) {
            hl_free(buf[i]);
            buf[i] = NULL;
            continue;
        }
        size_t n = big((size_t)1024 << ((seed >> 20) % 10));   /* 1 KiB .. 512 KiB */
        unsigned char *q = buf[i] ? hl_large_realloc(buf[i], n) : hl_malloc(n);
        if (!q) return "out of memory";
        if (buf[i] && !intact(q, len[i] < n ? len[i] : n, tag)) return "realloc lost contents";
        fill(q, 0, n, tag);
        buf[i] = q;
        len[i] = n;
    }
    for (unsigned i = 0; i < 8; i++) hl_free(buf[i]);
    return NULL;
}

static void threads_share_the_cache(void **state)
{
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, (void *)(i * 1000 + 1));
    for (int i = 0; i < 4; i++) {
        void *err;
        pthread_join(t[i], &err);
        if (err) fail_msg("thread %d: %s", i, (const char *)err);
    }
    assert_true(hl_large_cached() <= hl_large_bound_now());
}

int main(void)
{
    hl_init();
    hl_free(hl_malloc(1));               /* registers this thread */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(freed_mapping_is_reused),
        cmocka_unit_test(calloc_clears_a_reused_mapping),
        cmocka_unit_test(cache_is_bounded),
        cmocka_unit_test(realloc_keeps_contents_and_accounts),
        cmocka_unit_test(realloc_of_an_aligned_block),
        cmocka_unit_test(realloc_failure_leaves_the_block),
        cmocka_unit_test(alignment_requests),
        cmocka_unit_test(usable_size_is_right),
        cmocka_unit_test(double_free_aborts),
        cmocka_unit_test(double_free_of_a_trimmed_block_aborts),
        cmocka_unit_test(bound_of_each_policy),
        cmocka_unit_test(follow_trims_a_larger_mapping),
        cmocka_unit_test(follow_grows_a_smaller_mapping),
        cmocka_unit_test(follow_merges_neighbours),
        cmocka_unit_test(bound_follows_the_live_set),
        cmocka_unit_test(unmap_never_caches),
        cmocka_unit_test(threads_share_the_cache),
        cmocka_unit_test(purge_gives_back_cached_pages),
        cmocka_unit_test(purge_takes_the_oldest_first),
    };
    /* With HOARD_CHECKS=on only the tests that go through the malloc API (the others call
     * hl_large_realloc directly, behind the checks' back). */
    const struct CMUnitTest checked[] = {
        cmocka_unit_test(freed_mapping_is_reused),
        cmocka_unit_test(calloc_clears_a_reused_mapping),
        cmocka_unit_test(cache_is_bounded),
        cmocka_unit_test(alignment_requests),
        cmocka_unit_test(usable_size_is_right),
        cmocka_unit_test(double_free_aborts),
        cmocka_unit_test(double_free_of_a_trimmed_block_aborts),
        cmocka_unit_test(follow_trims_a_larger_mapping),
        cmocka_unit_test(follow_grows_a_smaller_mapping),
        cmocka_unit_test(follow_merges_neighbours),
        cmocka_unit_test(bound_follows_the_live_set),
        cmocka_unit_test(unmap_never_caches),
        cmocka_unit_test(purge_gives_back_cached_pages),
        cmocka_unit_test(purge_takes_the_oldest_first),
    };
    if (hl_cfg.checks) return cmocka_run_group_tests(checked, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
