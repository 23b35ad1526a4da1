/* test_hugepages.c — the `hugepages` key (issue 50, src/core/mem/arena.c), run under
 * HOARD_HUGEPAGES=madvise and =filler (meson.build): the arena's range is 2 MiB-aligned and
 * advised MADV_HUGEPAGE (VmFlags "hg" in /proc/self/smaps); a large working set touched through
 * hl_malloc is on huge pages (huge_regions > 0) unless the kernel's THP is `never`, where
 * huge_regions is 0; and under filler, a freed piece's pages stay (in A) until its whole 2 MiB
 * region is free, then the region leaves A whole, and a request takes the fullest region's
 * kept piece first. A large object of 2 MiB or more is mapped at a 2 MiB boundary, and under
 * filler its mapping is whole 2 MiB regions (its usable size reaches the last one's end); one
 * that mremap grows past 2 MiB is advised as well. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "large.h"

#define REGION HL_HUGE_REGION

static bool thp_never(void)
{
    char buf[128] = { 0 };
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, "[never]") != NULL;
}

/* The VmFlags line of the VMA holding p in /proc/self/smaps, into flags. */
static bool vma_flags(const void *p, char *flags, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool inside = false, found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= a && (uintptr_t)p < b;
        else if (inside && !strncmp(line, "VmFlags:", 8)) {
            strncpy(flags, line + 8, len - 1);
            flags[len - 1] = 0;
            found = true;
            break;
        }
    }
    fclose(f);
    return found;
}

static void arena_is_aligned_and_advised(void **state)
{
    (void)state;
    assert_int_equal(hl_arena_huge_mode(), hl_cfg.hugepages);
    assert_int_not_equal(hl_cfg.hugepages, HL_HUGE_OFF);
    assert_true(hl_arena_huge_aligned());
    assert_int_equal(hl_arena_base % REGION, 0);
    void *p = hl_malloc(64);
    assert_true(hl_arena_owns(p));
    char flags[512];
    assert_true(vma_flags(p, flags, sizeof flags));
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0)
        if (!strstr(flags, " hg")) fail_msg("arena VMA not advised MADV_HUGEPAGE: %s", flags);
    hl_free(p);
}

static void touched_working_set_is_on_huge_pages(void **state)
{
    (void)state;
    enum { N = 400000 };                            /* 64-byte blocks: ~25 MiB */
    char **v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < N; i++) {
        v[i] = hl_malloc(64);
        assert_non_null(v[i]);
        memset(v[i], i, 64);
    }
    long regions = hl_arena_huge_regions();
    if (thp_never()) assert_int_equal(regions, 0);
    else if (regions < 1) fail_msg("no arena region on huge pages after touching 25 MiB");
    for (int i = 0; i < N; i++) hl_free(v[i]);
    free(v);
}

static bool advised(const void *p)
{
    char flags[256];
    assert_true(vma_flags(p, flags, sizeof flags));
    return strstr(flags, " hg") != NULL;
}

/* A large mapping that mremap grows past 2 MiB is advised and placed as a fresh one is: mremap
 * keeps its source's flags, and a source under 2 MiB had none (`hoard`'s chase array sat on
 * 4 KiB pages, grown from a 36 KiB mapping). Realloc grows such a block; follow leaves a cached
 * mapping under 2 MiB in the cache and maps the block fresh, since the small one's pages would
 * keep the first 2 MiB frame off huge pages. The large cache is emptied before and after, so
 * it holds only what the test puts there (and the other tests find it as they would alone). */
static void grown_large_mapping_is_advised(void **state)
{
    (void)state;
    size_t small = 40 * 1024, big = 7 * ((size_t)1 << 20);
    hl_large_flush();
    char *a = hl_large_alloc(small, 0);
    assert_non_null(a);
    assert_false(advised(a));
    char *b = hl_large_realloc(a, big);
    assert_non_null(b);
    memset(b, 1, big);
    if (!advised(b)) fail_msg("realloc grew a %zu-byte block to %zu: not advised", small, big);
    uintptr_t page = (uintptr_t)b & ~(uintptr_t)(HL_PAGE - 1);
    if (page % REGION) fail_msg("realloc grew a %zu-byte block to %zu: %zu bytes past a 2 MiB "
                                "boundary", small, big, (size_t)(page % REGION));
    hl_large_free(hl_large_alloc(small, 0));           /* the cache's only mapping: 40 KiB */
    size_t cached = hl_large_cached();
    assert_true(cached >= small);
    char *c = hl_large_alloc(big, 0);
    assert_non_null(c);
    assert_true(advised(c));
    if (hl_cfg.large_reuse == HL_LARGE_FOLLOW && hl_large_cached() != cached)
        fail_msg("follow took the cached %zu-byte mapping for a %zu-byte block", small, big);
    hl_large_free(b);
    hl_large_free(c);
    hl_large_flush();
}

static void large_mapping_is_whole_huge_pages(void **state)
{
    (void)state;
    size_t size = 7 * ((size_t)1 << 20) + 4096;           /* the chase's pointer array, about */
    char *p = hl_malloc(size);
    assert_non_null(p);
    uintptr_t base = (uintptr_t)p & ~(uintptr_t)(HL_PAGE - 1);   /* the header's page */
    if (base % REGION) fail_msg("a %zu-byte block's mapping starts %zu bytes past a 2 MiB "
                                "boundary", size, (size_t)(base % REGION));
    size_t end = (size_t)((uintptr_t)p - base) + hl_malloc_usable_size(p);
    if (hl_cfg.hugepages == HL_HUGE_FILLER) assert_int_equal(end, 8 * ((size_t)1 << 20));
    else assert_true(end < 8 * ((size_t)1 << 20));
    memset(p, 1, size);
    hl_free(p);
}

/* filler only: pieces of 64 KiB straight from the arena. */
static void filler_gives_back_whole_regions_fullest_first(void **state)
{
    (void)state;
    if (hl_cfg.hugepages != HL_HUGE_FILLER) skip();
    enum { PIECE = 64 << 10, PER = REGION / PIECE, N = 3 * PER };
    char *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = hl_arena_alloc(PIECE, PIECE, HL_OS_HELD);
        assert_non_null(p[i]);
        memset(p[i], 1, PIECE);
        /* a piece below a region never straddles one */
        assert_int_equal((uintptr_t)p[i] / REGION, ((uintptr_t)p[i] + PIECE - 1) / REGION);
    }
    /* two regions wholly ours: the ones holding p[PER .. 3 PER) when the run started on a
     * boundary; find them as the regions with PER of our pieces */
    uintptr_t full[2];
    int nfull = 0;
    for (int i = 0; i < N && nfull < 2; i++) {
        uintptr_t r = (uintptr_t)p[i] / REGION;
        int count = 0;
        for (int j = 0; j < N; j++) count += (uintptr_t)p[j] / REGION == r;
        if (count == PER && (nfull == 0 || full[0] != r)) full[nfull++] = r;
    }
    assert_int_equal(nfull, 2);
    int inx[PER], iny[PER], nx = 0, ny = 0;
    for (int j = 0; j < N; j++) {
        if ((uintptr_t)p[j] / REGION == full[0]) inx[nx++] = j;
        if ((uintptr_t)p[j] / REGION == full[1]) iny[ny++] = j;
    }
    size_t held = hl_os_held();
    hl_arena_free(p[inx[0]], PIECE, HL_OS_HELD);       /* X: one piece free */
    for (int k = 0; k < 5; k++) hl_arena_free(p[iny[k]], PIECE, HL_OS_HELD);  /* Y: five */
    assert_int_equal(hl_os_held(), held);              /* their pages stay, and in A */
    void *again = hl_arena_alloc(PIECE, PIECE, HL_OS_HELD);
    assert_ptr_equal(again, p[inx[0]]);                /* the fullest region's piece */
    assert_int_equal(hl_os_held(), held);              /* it was still counted */
    for (int k = 5; k < PER; k++) hl_arena_free(p[iny[k]], PIECE, HL_OS_HELD);
    assert_int_equal(hl_os_held(), held - REGION);     /* Y went back whole */
    void *fresh = hl_arena_alloc(PIECE, PIECE, HL_OS_HELD);   /* Y's pieces come back zeroed */
    assert_non_null(fresh);
    assert_int_equal(hl_os_held(), held - REGION + PIECE);
    hl_arena_free(fresh, PIECE, HL_OS_HELD);
    for (int j = 0; j < N; j++)
        if ((uintptr_t)p[j] / REGION != full[1]) hl_arena_free(p[j], PIECE, HL_OS_HELD);
}

int main(void)
{
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grown_large_mapping_is_advised),
        cmocka_unit_test(arena_is_aligned_and_advised),
        cmocka_unit_test(touched_working_set_is_on_huge_pages),
        cmocka_unit_test(large_mapping_is_whole_huge_pages),
        cmocka_unit_test(filler_gives_back_whole_regions_fullest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
