/* test_api.c — the malloc family's semantics, run once per strategy (HOARD_STRATEGY, set by
 * meson). It calls the allocator's hl_ entry points directly, so the same file also runs
 * under AddressSanitizer and ThreadSanitizer builds that keep their own malloc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 31);
}

static int intact(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 31)) return 0;
    return 1;
}

static void every_block_is_16_aligned_and_usable(void **state)
{
    (void)state;
    for (size_t n = 0; n < 70000; n += n < 256 ? 1 : 97) {
        unsigned char *p = hl_malloc(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        size_t u = hl_malloc_usable_size(p);
        assert_true(u >= n);
        fill(p, u, (unsigned)n);                /* writable to its usable end */
        assert_true(intact(p, u, (unsigned)n));
        hl_free(p);
    }
}

static void overflow_and_huge_sizes_fail_with_enomem(void **state)
{
    (void)state;
    errno = 0;
    assert_null(hl_calloc(SIZE_MAX / 2, 3));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(hl_malloc(SIZE_MAX - 8));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(hl_malloc((size_t)PTRDIFF_MAX + 1));
    assert_int_equal(errno, ENOMEM);
    void *p = hl_malloc(10);
    errno = 0;
    assert_null(hl_reallocarray(p, SIZE_MAX / 4, 8));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(hl_realloc(p, SIZE_MAX - 100));       /* fails, and p stays valid */
    assert_int_equal(errno, ENOMEM);
    memset(p, 1, 10);
    hl_free(p);
}

static void calloc_zeroes_reused_memory(void **state)
{
    (void)state;
    for (size_t n = 8; n < 20000; n = n * 3 / 2 + 8) {
        unsigned char *d = hl_malloc(n);
        memset(d, 0xAB, n);
        hl_free(d);
        unsigned char *z = hl_calloc(1, n);
        assert_non_null(z);
        for (size_t i = 0; i < n; i++) assert_int_equal(z[i], 0);
        hl_free(z);
    }
}

static void realloc_keeps_contents(void **state)
{
    (void)state;
    unsigned char *p = hl_realloc(NULL, 24);          /* realloc(NULL, n) is malloc */
    assert_non_null(p);
    fill(p, 24, 7);
    size_t sizes[] = { 100, 5000, 70000, 3000000, 40, 16, 9000, 8 };
    size_t have = 24;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *q = hl_realloc(p, sizes[i]);
        assert_non_null(q);
        size_t keep = have < sizes[i] ? have : sizes[i];
        assert_true(intact(q, keep, 7));
        fill(q, sizes[i], 7);
        p = q;
        have = sizes[i];
    }
    hl_free(p);
}

/* realloc in place (interpose.c): a new size that fits the usable size and wastes under half
 * of it keeps the block and its contents, with no other work (U unchanged); growth past the
 * usable size and shrinking to half or less move it, contents kept. */
static void realloc_in_place_grows_and_shrinks(void **state)
{
    (void)state;
    size_t sizes[] = { 24, 100, 1000, 5000, 100000 };
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = hl_malloc(sizes[i]);
        size_t u = hl_malloc_usable_size(p);
        fill(p, u, 3);
        struct hoardlab_stats a, b;
        hoardlab_stats(&a);
        assert_ptr_equal(hl_realloc(p, u), p);                 /* grows within the block */
        assert_ptr_equal(hl_realloc(p, u / 2 + 1), p);         /* shrinks by under half */
        assert_ptr_equal(hl_realloc(p, u), p);
        hoardlab_stats(&b);
        assert_int_equal(b.mallocs, a.mallocs);                /* no other work */
        assert_int_equal(b.frees, a.frees);
        assert_true(intact(p, u, 3));
        assert_int_equal(hl_malloc_usable_size(p), u);
        unsigned char *q = hl_realloc(p, u + 1);               /* grows past it: moves */
        assert_non_null(q);
        assert_ptr_not_equal(q, p);
        assert_true(intact(q, u, 3));
        size_t v = hl_malloc_usable_size(q);
        fill(q, v, 5);
        bool small = hl_arena_owns(q);                          /* (mremap may keep a large one) */
        unsigned char *r = hl_realloc(q, v / 2);               /* shrinks to half: moves */
        assert_non_null(r);
        if (small) assert_ptr_not_equal(r, q);
        assert_true(intact(r, v / 2, 5));
        hl_free(r);
    }
}

static void memalign_family_rules(void **state)
{
    (void)state;
    void *p = (void *)1;
    assert_int_equal(hl_posix_memalign(&p, 3, 10), EINVAL);
    assert_int_equal(hl_posix_memalign(&p, 4, 10), EINVAL);   /* not a multiple of void* */
    assert_true(p == (void *)1);                               /* untouched on failure */
    errno = 0;
    assert_null(hl_aligned_alloc(48, 96));
    assert_int_equal(errno, EINVAL);
    for (size_t a = 8; a <= (1u << 20); a <<= 1) {
        for (size_t n = 1; n < 40000; n = n * 7 + 3) {
            assert_int_equal(hl_posix_memalign(&p, a, n), 0);
            assert_int_equal((uintptr_t)p % a, 0);
            assert_true(hl_malloc_usable_size(p) >= n);
            fill(p, n, 3);
            hl_free(p);
            void *q = hl_aligned_alloc(a, n), *r = hl_memalign(a, n);
            assert_int_equal((uintptr_t)q % a, 0);
            assert_int_equal((uintptr_t)r % a, 0);
            fill(q, n, 1);
            fill(r, n, 2);
            assert_true(intact(q, n, 1));
            hl_free(q);
            hl_free(r);
        }
    }
    void *v = hl_valloc(100), *pv = hl_pvalloc(5000);
    assert_int_equal((uintptr_t)v % 4096, 0);
    assert_int_equal((uintptr_t)pv % 4096, 0);
    assert_true(hl_malloc_usable_size(pv) >= 8192);
    hl_free(v);
    hl_free(pv);
}

/* Many live blocks of mixed sizes: none overlaps another (stamps survive). */
static void live_blocks_never_overlap(void **state)
{
    (void)state;
    enum { N = 20000 };
    static unsigned char *blocks[N];
    static size_t sizes[N];
    unsigned seed = 12345;
    for (unsigned i = 0; i < N; i++) {
        seed = seed * 1103515245 + 12345;
        sizes[i] = (seed >> 8) % (i % 100 == 0 ? 50000 : 600) + 1;
        blocks[i] = hl_malloc(sizes[i]);
        assert_non_null(blocks[i]);
        fill(blocks[i], sizes[i], i);
        if (i % 3 == 0 && i) {                  /* churn: free and reallocate one */
            unsigned j = (seed >> 4) % i;
            hl_free(blocks[j]);
            blocks[j] = hl_malloc(sizes[j]);
            fill(blocks[j], sizes[j], j);
        }
    }
    for (unsigned i = 0; i < N; i++) {
        assert_true(intact(blocks[i], sizes[i], i));
        hl_free(blocks[i]);
    }
}

struct worker { unsigned id; unsigned char **handoff; };

static void *churn(void *arg)
{
    struct worker *w = arg;
    unsigned char *mine[256];
    for (unsigned round = 0; round < 200; round++) {
        for (unsigned i = 0; i < 256; i++) {
            size_t n = 8 + (i * 37 + round) % 700;
            mine[i] = hl_malloc(n);
            if (!mine[i]) return (void *)1;
            fill(mine[i], n, w->id + i);
        }
        for (unsigned i = 0; i < 256; i++) {
            size_t n = 8 + (i * 37 + round) % 700;
            if (!intact(mine[i], n, w->id + i)) return (void *)1;
            if (i % 4 == 0) w->handoff[round * 64 + i / 4] = mine[i];   /* freed by main */
            else hl_free(mine[i]);
        }
    }
    return NULL;
}

static void threads_allocate_and_free_remotely(void **state)
{
    (void)state;
    enum { T = 4 };
    pthread_t tid[T];
    struct worker w[T];
    static unsigned char *handoff[T][200 * 64];
    for (unsigned t = 0; t < T; t++) {
        w[t] = (struct worker){ t * 1000, handoff[t] };
        assert_int_equal(pthread_create(&tid[t], NULL, churn, &w[t]), 0);
    }
    for (unsigned t = 0; t < T; t++) {
        void *ret;
        pthread_join(tid[t], &ret);
        assert_null(ret);
    }
    for (unsigned t = 0; t < T; t++)
        for (unsigned i = 0; i < 200 * 64; i++) hl_free(handoff[t][i]);
}

/* U's bound (stats.h): a thread that only mallocs and one that only frees each publish what
 * they spent past stats_batch, so U and its peak stay within threads x stats_batch (plus a
 * block) of the truth while both live; under a TLAB, plus what each thread's bin of the
 * class holds unseen (tlab.h's Accounting): its budget, or with tlab_adaptive at most the
 * blocks. If a thread that only frees never published, each
 * round of the producer below would raise the published U, and its peak, by another `live`. */
#define U_BLOCKS 20000
static void *u_blocks[U_BLOCKS];
static pthread_barrier_t u_turn;

static void *consumer(void *arg)
{
    for (int round = 0; round < 4; round++) {
        pthread_barrier_wait(&u_turn);            /* the producer's blocks are ready */
        for (int i = 0; i < U_BLOCKS; i++) hl_free(u_blocks[i]);
        pthread_barrier_wait(&u_turn);            /* freed; the consumer stays alive */
    }
    return arg;
}

static void stats_in_use_stays_bounded_across_threads(void **state)
{
    (void)state;
#ifdef HL_STATS
    if (!hl_cfg.counting) return;           /* nothing counted: stats_count_calls_and_bytes */
    pthread_t t;
    struct hoardlab_stats base, s;
    uint64_t live = 0, slack = 2 * hl_cfg.stats_batch + 4096;
    if (hl_cfg.tlab)
        slack += 2 * (hl_cfg.tlab_adaptive ? (uint64_t)U_BLOCKS * 64 : hl_cfg.tlab_budget);
    /* cache = cpu: each CPU's stack of the class, up to its budget, moves unseen by U until a
     * refill or flush (cpucache.h); the thread may run on any CPU between the rounds */
    if (hl_cfg.cache == HL_CACHE_CPU)
        slack += 2 * (uint64_t)hl_cfg.cpu_cache_bytes * (uint64_t)sysconf(_SC_NPROCESSORS_CONF);
    assert_int_equal(pthread_barrier_init(&u_turn, NULL, 2), 0);
    assert_int_equal(pthread_create(&t, NULL, consumer, NULL), 0);
    hoardlab_stats_reset_peaks();
    hoardlab_stats(&base);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < U_BLOCKS; i++) u_blocks[i] = hl_malloc(64);
        hoardlab_stats(&s);
        if (!live) live = s.in_use - base.in_use;   /* the blocks, as counted */
        assert_true(s.in_use + slack >= base.in_use + live);
        assert_true(s.in_use_peak <= base.in_use + live + slack);
        pthread_barrier_wait(&u_turn);
        pthread_barrier_wait(&u_turn);
        hoardlab_stats(&s);
        assert_true(s.in_use <= base.in_use + slack);
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&u_turn);
#endif
}

static void stats_count_calls_and_bytes(void **state)
{
    (void)state;
    struct hoardlab_stats before, after;
    hoardlab_stats(&before);
    void *p[100];
    for (int i = 0; i < 100; i++) p[i] = hl_malloc(100);
    hoardlab_stats(&after);
    assert_true(after.os_bytes_peak >= after.os_bytes);
    assert_true(after.os_bytes > 0);
#ifdef HL_STATS
    assert_int_equal(after.counting, hl_cfg.counting);
    if (hl_cfg.counting) {
        assert_int_equal(after.mallocs - before.mallocs, 100);
        assert_true(after.in_use + after.in_use_peak >= before.in_use);
    } else {                                /* counting = off: not counted, reads 0 */
        assert_int_equal(after.mallocs, 0);
        assert_int_equal(after.in_use, 0);
        assert_int_equal(after.in_use_peak, 0);
    }
#endif
    for (int i = 0; i < 100; i++) hl_free(p[i]);
    hoardlab_stats(&after);
#ifdef HL_STATS
    assert_int_equal(after.frees - before.frees, hl_cfg.counting ? 100 : 0);
#endif
    assert_string_equal(hoardlab_strategy(), getenv("HOARD_STRATEGY"));
}

int main(void)
{
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_block_is_16_aligned_and_usable),
        cmocka_unit_test(overflow_and_huge_sizes_fail_with_enomem),
        cmocka_unit_test(calloc_zeroes_reused_memory),
        cmocka_unit_test(realloc_keeps_contents),
        cmocka_unit_test(realloc_in_place_grows_and_shrinks),
        cmocka_unit_test(memalign_family_rules),
        cmocka_unit_test(live_blocks_never_overlap),
        cmocka_unit_test(threads_allocate_and_free_remotely),
        cmocka_unit_test(stats_count_calls_and_bytes),
        cmocka_unit_test(stats_in_use_stays_bounded_across_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
