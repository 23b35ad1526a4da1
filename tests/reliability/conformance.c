/* conformance.c — the malloc family's contract, beyond the foundation's API test: alignments up
 * to 1 MiB, valloc/pvalloc, usable size writable to its end without touching a neighbour,
 * calloc zeroed after dirty reuse, realloc across small/large/huge, failures that leave the
 * old block intact, and 100,000 live mixed-size blocks that never overlap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sys/resource.h>
#include "rel.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REL_SANITIZED 1
#endif
#endif

static size_t usable_checked(void *p, size_t n)
{
    size_t u = r_usable(p);
    if (u < n) fail_msg("usable size %zu of %p < request %zu", u, p, n);
    return u;
}

static void assert_aligned(void *p, size_t a, const char *what, size_t n)
{
    if (!p) fail_msg("%s(align %zu, size %zu) returned NULL", what, a, n);
    if ((uintptr_t)p % a) fail_msg("%s(align %zu, size %zu) = %p, misaligned", what, a, n, p);
}

/* Every alignment up to 1 MiB, through each of the three calls, with several blocks of each
 * live together and written to their usable end: none may damage another. */
static void alignments_up_to_1mib(void **state)
{
    (void)state;
    enum { K = 3 * 6 };
    for (size_t a = 8; a <= ((size_t)1 << 20); a <<= 1) {
        size_t sizes[] = { 1, a / 2 + 1, a, a + 1, 3000, 70000 };
        void *p[K];
        size_t len[K];
        unsigned k = 0;
        for (unsigned s = 0; s < 6; s++) {
            size_t n = sizes[s];
            assert_int_equal(r_posix_memalign(&p[k], a, n), 0);
            assert_aligned(p[k], a, "posix_memalign", n);
            k++;
            p[k] = r_aligned_alloc(a, n);
            assert_aligned(p[k], a, "aligned_alloc", n);
            k++;
            p[k] = r_memalign(a, n);
            assert_aligned(p[k], a, "memalign", n);
            k++;
            for (unsigned j = k - 3; j < k; j++) {
                len[j] = usable_checked(p[j], n);
                rel_stamp(p[j], len[j], a * 100 + j);
            }
        }
        for (unsigned j = 0; j < K; j++) {
            long bad = rel_damaged(p[j], len[j], a * 100 + j);
            if (bad >= 0) fail_msg("align %zu: block %u (%p) damaged at %ld", a, j, p[j], bad);
            r_free(p[j]);
        }
    }
    /* memalign rounds an alignment that is not a power of two up, as glibc does. */
    void *q = r_memalign(REL_OPAQUE((size_t)24), 100);
    assert_aligned(q, 32, "memalign", 100);
    r_free(q);
    q = r_memalign(REL_OPAQUE((size_t)0), 100);       /* 0: no particular alignment */
    assert_aligned(q, 16, "memalign", 100);
    r_free(q);
    /* posix_memalign's rules: a power of two and a multiple of sizeof(void *). */
    q = (void *)&q;
    assert_int_equal(r_posix_memalign(&q, REL_OPAQUE((size_t)0), 10), EINVAL);
    assert_int_equal(r_posix_memalign(&q, REL_OPAQUE((size_t)12), 10), EINVAL);
    assert_true(q == (void *)&q);
    assert_int_equal(r_posix_memalign(&q, 64, 0), 0);   /* size 0: a unique, freeable block */
    assert_non_null(q);
    r_free(q);
}

static void valloc_and_pvalloc(void **state)
{
    (void)state;
    void *v[40], *pv[40];
    size_t vn[40], pn[40];
    for (unsigned i = 0; i < 40; i++) {
        vn[i] = 1 + (size_t)i * i * 97;
        pn[i] = (size_t)i * i * 113;                     /* 0 included: one page */
        v[i] = r_valloc(vn[i]);
        pv[i] = r_pvalloc(pn[i]);
        assert_aligned(v[i], 4096, "valloc", vn[i]);
        assert_aligned(pv[i], 4096, "pvalloc", pn[i]);
        vn[i] = usable_checked(v[i], vn[i]);
        size_t want = pn[i] ? (pn[i] + 4095) / 4096 * 4096 : 4096;
        pn[i] = usable_checked(pv[i], want);           /* pvalloc: whole pages */
        rel_stamp(v[i], vn[i], i);
        rel_stamp(pv[i], pn[i], 1000 + i);
    }
    for (unsigned i = 0; i < 40; i++) {
        assert_true(rel_damaged(v[i], vn[i], i) < 0);
        assert_true(rel_damaged(pv[i], pn[i], 1000 + i) < 0);
        r_free(v[i]);
        r_free(pv[i]);
    }
}

/* Neighbours of one size (adjacent in a superblock), each written to its usable end. */
static void usable_size_is_writable_to_its_end(void **state)
{
    (void)state;
    enum { N = 24 };
    for (size_t n = 0; n < 600000; n = n < 300 ? n + 1 : n * 5 / 4) {
        void *p[N];
        size_t u[N];
        for (unsigned i = 0; i < N; i++) {
            p[i] = r_malloc(n);
            assert_non_null(p[i]);
            u[i] = usable_checked(p[i], n);
            rel_stamp(p[i], u[i], n * N + i);
        }
        for (unsigned i = 0; i < N; i++) {
            long bad = rel_damaged(p[i], u[i], n * N + i);
            if (bad >= 0)
                fail_msg("malloc(%zu) block %p (usable %zu) damaged at %ld", n, p[i], u[i], bad);
            r_free(p[i]);
        }
    }
}

static void calloc_is_zeroed_after_dirty_reuse(void **state)
{
    (void)state;
    enum { N = 64 };
    for (size_t n = 1; n < 3000000; n = n < 64 ? n + 1 : n * 3 / 2) {
        unsigned count = n > 100000 ? 4 : N;
        void *p[N];
        for (unsigned i = 0; i < count; i++) {
            p[i] = r_malloc(n);
            assert_non_null(p[i]);
            memset(p[i], 0xA5, r_usable(p[i]));         /* dirty to the usable end */
        }
        for (unsigned i = 0; i < count; i++) r_free(p[i]);
        for (unsigned i = 0; i < count; i++) {
            unsigned char *z = r_calloc(1, n);
            assert_non_null(z);
            for (size_t b = 0; b < n; b++)
                if (z[b]) fail_msg("calloc(1, %zu) = %p: byte %zu is %#x", n, (void *)z, b, z[b]);
            p[i] = z;
            memset(z, 0x5A, n);
        }
        for (unsigned i = 0; i < count; i++) r_free(p[i]);
    }
    /* calloc's multiplication: n x size, in every order. */
    unsigned char *z = r_calloc(1000, 24);
    for (size_t b = 0; b < 24000; b++) assert_int_equal(z[b], 0);
    r_free(z);
}

/* Grow and shrink one block through every regime, contents kept up to the smaller size;
 * then the same starting from aligned blocks. */
static void realloc_across_small_large_huge(void **state)
{
    (void)state;
    static const size_t ladder[] = {
        1, 8, 15, 16, 17, 100, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193,
        16385, 32767, 32769, 65537, 131073, 262145, 524289, 1048577, 4194304, 33554433,
        1048576, 65536, 8192, 4096, 4000, 2048, 100, 1, 524288, 16, 64 << 20, 3 };
    for (unsigned start = 0; start < 3; start++) {
        void *p;
        if (start == 0) p = r_realloc(NULL, 5);
        else if (start == 1) p = r_memalign(4096, 5);
        else p = r_aligned_alloc(1 << 16, 5);
        assert_non_null(p);
        size_t have = 5;
        uint64_t seed = 77 + start;
        rel_stamp(p, have, seed);
        for (unsigned i = 0; i < sizeof ladder / sizeof ladder[0]; i++) {
            size_t n = ladder[i];
            void *q = r_realloc(p, n);
            if (!q) fail_msg("realloc(%p, %zu) failed", p, n);
            assert_true((uintptr_t)q % 16 == 0);
            size_t keep = have < n ? have : n;
            long bad = rel_damaged(q, keep, seed);
            if (bad >= 0)
                fail_msg("realloc %zu -> %zu lost the contents at byte %ld", have, n, bad);
            usable_checked(q, n);
            rel_stamp(q, n, ++seed);
            p = q;
            have = n;
        }
        r_free(p);
    }
}

/* Every way of failing returns NULL (or an error code) and leaves the old block as it was. */
static void failures_leave_old_blocks_intact(void **state)
{
    (void)state;
    size_t sizes[] = { 40, 3000, 200000 };
    for (unsigned s = 0; s < 3; s++) {
        size_t n = sizes[s];
        void *p = r_malloc(n);
        assert_non_null(p);
        rel_stamp(p, n, n);
        errno = 0;
        assert_null(r_realloc(REL_OPAQUE(p), REL_OPAQUE(SIZE_MAX - 4096)));
        assert_int_equal(errno, ENOMEM);
        errno = 0;
        assert_null(r_realloc(REL_OPAQUE(p), REL_OPAQUE((size_t)PTRDIFF_MAX + 1)));
        assert_int_equal(errno, ENOMEM);
        errno = 0;
        assert_null(r_reallocarray(REL_OPAQUE(p), REL_OPAQUE(SIZE_MAX / 2), 3));
        assert_int_equal(errno, ENOMEM);
        assert_true(rel_damaged(p, n, n) < 0);
        void *q = &q;
        assert_int_equal(r_posix_memalign(&q, 4096, REL_OPAQUE(SIZE_MAX - 100)), ENOMEM);
        assert_true(q == (void *)&q);                    /* untouched on failure */
        errno = 0;
        assert_null(r_aligned_alloc(1 << 20, REL_OPAQUE(SIZE_MAX - 10)));
        assert_int_equal(errno, ENOMEM);
        errno = 0;
        assert_null(r_memalign(REL_OPAQUE((SIZE_MAX >> 1) + 2), 10));
        assert_int_equal(errno, EINVAL);
        errno = 0;
        assert_null(r_calloc(REL_OPAQUE(SIZE_MAX / 16), 17));
        assert_int_equal(errno, ENOMEM);
        errno = 0;
        assert_null(r_pvalloc(REL_OPAQUE(SIZE_MAX - 10)));
        assert_int_equal(errno, ENOMEM);
        errno = 0;
        assert_null(r_valloc(REL_OPAQUE(SIZE_MAX - 10)));
        assert_int_equal(errno, ENOMEM);
        assert_true(rel_damaged(p, n, n) < 0);
        void *g = r_realloc(p, n * 2);                   /* still a valid block */
        assert_non_null(g);
        assert_true(rel_damaged(g, n, n) < 0);
        r_free(g);
    }
#ifndef REL_SANITIZED
    /* A real failure from the OS (not an overflow check): address space limited, then a
     * request well beyond it. The block must survive, and the allocator keep working. */
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    void *p = r_malloc(5000);
    rel_stamp(p, 5000, 9);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    assert_int_equal(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    struct rlimit lim = old;
    lim.rlim_cur = (rlim_t)pages * 4096 + (256u << 20);
    if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > lim.rlim_cur) {
        assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
        errno = 0;
        void *q = r_realloc(REL_OPAQUE(p), REL_OPAQUE((size_t)1 << 30));
        int e = errno;
        void *big = r_malloc((size_t)1 << 30), *al = r_aligned_alloc(1 << 20, (size_t)1 << 30);
        assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
        assert_null(q);
        assert_int_equal(e, ENOMEM);
        assert_null(big);
        assert_null(al);
        assert_true(rel_damaged(p, 5000, 9) < 0);
    }
    r_free(p);
    p = r_malloc(1 << 22);                               /* and works again */
    assert_non_null(p);
    r_free(p);
#endif
}

struct live { uintptr_t at; size_t len; };

static int by_address(const void *a, const void *b)
{
    const struct live *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* 100,000 live blocks of mixed sizes from every call: sorted by address, no two usable ranges
 * overlap, and every stamp survives. */
static void hundred_thousand_live_blocks_never_overlap(void **state)
{
    (void)state;
    enum { N = 100000 };
    struct live *b = calloc(N, sizeof *b);
    void **p = calloc(N, sizeof *p);
    size_t *len = calloc(N, sizeof *len);
    assert_true(b && p && len);
    uint64_t rng = 0x1234567;
    for (unsigned i = 0; i < N; i++) {
        uint64_t r = rel_rand(&rng);
        size_t n = r % 1000 < 900 ? 1 + (r >> 16) % 512
                 : r % 1000 < 998 ? 512 + (r >> 16) % 16384 : 16384 + (r >> 16) % 1000000;
        switch ((r >> 40) % 8) {
        case 0: p[i] = r_calloc(1, n); break;
        case 1: p[i] = r_memalign((size_t)32 << ((r >> 50) % 8), n); break;
        case 2: assert_int_equal(r_posix_memalign(&p[i], 64, n), 0); break;
        case 3: p[i] = r_realloc(r_malloc(n / 2 + 1), n); break;
        default: p[i] = r_malloc(n); break;
        }
        assert_non_null(p[i]);
        len[i] = usable_checked(p[i], n);
        rel_stamp(p[i], len[i], i);
        b[i] = (struct live){ (uintptr_t)p[i], len[i] };
        if (i % 7 == 3) {                                /* churn: replace an older one */
            unsigned j = (unsigned)((r >> 20) % (i + 1));
            r_free(p[j]);
            p[j] = r_malloc(len[j]);
            assert_non_null(p[j]);
            len[j] = usable_checked(p[j], len[j]);
            rel_stamp(p[j], len[j], j);
            b[j] = (struct live){ (uintptr_t)p[j], len[j] };
        }
    }
    qsort(b, N, sizeof *b, by_address);
    for (unsigned i = 1; i < N; i++)
        if (b[i - 1].at + b[i - 1].len > b[i].at)
            fail_msg("blocks overlap: %#lx+%zu and %#lx+%zu", (unsigned long)b[i - 1].at,
                     b[i - 1].len, (unsigned long)b[i].at, b[i].len);
    for (unsigned i = 0; i < N; i++) {
        long bad = rel_damaged(p[i], len[i], i);
        if (bad >= 0) fail_msg("block %u (%p, %zu bytes) damaged at %ld", i, p[i], len[i], bad);
    }
    for (unsigned i = 0; i < N; i++) {               /* free in a scrambled order */
        unsigned j = (unsigned)(((uint64_t)i * 7919) % N);
        r_free(p[j]);
    }
    free(b);
    free(p);
    free(len);
}

/* malloc(0) gives unique freeable blocks; free(NULL) and realloc(NULL) behave. */
static void zero_and_null(void **state)
{
    (void)state;
    void *a = r_malloc(0), *b = r_malloc(0), *c = r_calloc(0, 10), *d = r_realloc(NULL, 0);
    assert_true(a && b && c && d);
    assert_true(a != b && b != c && c != d && a != d);
    r_free(NULL);
    r_free(a);
    r_free(b);
    r_free(c);
    r_free(d);
    assert_int_equal(r_usable(NULL), 0);
}

int main(void)
{
    rel_require_hoardlab();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alignments_up_to_1mib),
        cmocka_unit_test(valloc_and_pvalloc),
        cmocka_unit_test(usable_size_is_writable_to_its_end),
        cmocka_unit_test(calloc_is_zeroed_after_dirty_reuse),
        cmocka_unit_test(realloc_across_small_large_huge),
        cmocka_unit_test(failures_leave_old_blocks_intact),
        cmocka_unit_test(hundred_thousand_live_blocks_never_overlap),
        cmocka_unit_test(zero_and_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
