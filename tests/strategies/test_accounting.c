/* test_accounting.c — the two kinds of Hoard accounting (`accounting = class | heap`), the
 * policy's A (held_bytes) beside hoardlab's own memory (meta_bytes), and the paper's census
 * (census_paper). Run once per value of HOARD_ACCOUNTING (tests/strategies/meson.build).
 *
 * With K = 1 and f = 1/4, a heap holds two half-used superblocks of one class and then two of
 * another. Per class, each class has one superblock's worth free, which is K S: no class
 * crosses the threshold, nothing moves. Per heap, the heap has two superblocks' worth free,
 * more than K S and more than f of a: superblocks go to the global heap, and after every free
 * the heap keeps Hoard's invariant on its one account. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "front.h"
#include "mem.h"
#include "hoard.h"
#include "hoardlab.h"

static uint64_t stat_global_to(void)      /* of registered threads: those that malloc */
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return s.global_to;
}

/* 2 superblocks' worth of blocks of `size` from h, then every other one freed; after each
 * free, the account of h the threshold reads must not have crossed it. */
static void two_half_used(struct hl_heap *h, size_t size, void **keep)
{
    unsigned cap = hl_sb_capacity_of(hl_class_of(size));
    void **p = calloc(2 * cap, sizeof *p);
    for (unsigned i = 0; i < 2 * cap; i++) p[i] = hl_hoard_malloc_in(h, size);
    for (unsigned i = 0; i < 2 * cap; i++) {
        if (i % 2) {
            keep[i / 2] = p[i];
            continue;
        }
        hl_heap_row_free(p[i]);
        const struct hl_account *ac = h->cls[hl_class_of(size)].acct;
        assert_false(hl_hoard_crosses_threshold(ac->u, ac->a, hl_cfg.empty_fraction,
                                                hl_cfg.superblock_size));
    }
    free(p);
}

static void per_class_or_per_heap(void **state)
{
    (void)state;
    bool per_heap = hl_cfg.accounting == HL_ACCOUNT_HEAP;
    struct hl_heap *h = hl_heap_new(90, true);
    unsigned cx = hl_class_of(64), cy = hl_class_of(128);
    void *kx[512], *ky[512];
    /* (Global heap's superblocks, not the global_to statistic: this thread calls the heap
     * directly, never through malloc, so it is not registered and its counts are not summed.) */
    uint32_t moved = hl_heap_global->nsb;
    two_half_used(h, 64, kx);
    assert_int_equal(hl_heap_global->nsb, moved);     /* one class: K S free, either way */
    two_half_used(h, 128, ky);
    if (per_heap) {
        assert_ptr_equal(h->cls[cx].acct, &h->total);
        assert_ptr_equal(h->cls[cy].acct, &h->total);
        assert_true(hl_heap_global->nsb > moved);
        assert_true(h->nsb < 4);
        assert_int_equal(hl_heap_u(h), h->total.u);
        assert_int_equal(hl_heap_a(h), h->total.a);
    } else {
        assert_ptr_equal(h->cls[cx].acct, &h->cls[cx].own);
        assert_int_equal(hl_heap_global->nsb, moved);
        assert_int_equal(h->nsb, 4);
        assert_int_equal(h->total.u, 0);
        assert_int_equal(hl_heap_u(h), h->cls[cx].own.u + h->cls[cy].own.u);
    }
}

/* held_bytes counts superblocks, meta_bytes hoardlab's structures; os_bytes is their sum. A
 * new superblock adds its S to held_bytes; a heap structure adds pages to meta_bytes only. */
static void held_and_meta(void **state)
{
    (void)state;
    struct hoardlab_stats s0, s1, s2;
    hoardlab_stats(&s0);
    assert_int_equal(s0.os_bytes, s0.held_bytes + s0.meta_bytes);
    assert_true(s0.held_bytes_peak >= s0.held_bytes);
    struct hl_heap *h = hl_heap_new(91, true);
    hoardlab_stats(&s1);
    assert_int_equal(s1.held_bytes, s0.held_bytes);
    assert_true(s1.meta_bytes > s0.meta_bytes);
    assert_true(s1.meta_bytes - s0.meta_bytes < 64 * 1024);     /* pages written, not 1 MiB */
    struct hl_sb *sb = hl_sb_new(hl_class_of(64));
    hl_heap_attach(h, sb);
    hoardlab_stats(&s2);
    assert_int_equal(s2.held_bytes, s1.held_bytes + hl_cfg.superblock_size);
    assert_int_equal(s2.meta_bytes, s1.meta_bytes);
    assert_int_equal(s2.os_bytes, s2.held_bytes + s2.meta_bytes);
}

/* ---- census_paper: a superblock taken from the global heap with another thread's blocks -- */

enum { SIZE = 1000 };                     /* a class nothing else in this test uses */
static pthread_barrier_t moved, taken;
static unsigned still_held;               /* A's live blocks in the superblock that moved */

/* Thread A: three full superblocks, then frees alternating between the first two until one
 * of them moves to the global heap (the emptier, with blocks of A still in it); keeps its
 * other blocks live until B has taken that superblock. (No cmocka asserts off the main
 * thread: main checks still_held.) */
static void *thread_a(void *arg)
{
    (void)arg;
    unsigned cap = hl_sb_capacity_of(hl_class_of(SIZE));
    void *p[3 * 64] = { 0 };
    for (unsigned i = 0; i < 3 * cap && i < 3 * 64; i++) p[i] = hl_malloc(SIZE);
    uint64_t before = stat_global_to();
    for (unsigned k = 0; k < cap && stat_global_to() == before; k++)
        for (unsigned sb = 0; sb < 2 && stat_global_to() == before; sb++) {
            hl_free(p[sb * cap + k]);
            p[sb * cap + k] = NULL;
        }
    for (unsigned i = 0; i < 3 * cap; i++)
        still_held += p[i] && atomic_load(&hl_sb_of(p[i])->owner) == hl_heap_global;
    pthread_barrier_wait(&moved);
    pthread_barrier_wait(&taken);
    for (unsigned i = 0; i < 3 * cap; i++) hl_free(p[i]);
    return NULL;
}

static void census_paper_counts_foreign_blocks(void **state)
{
    (void)state;
    assert_true(hl_sb_capacity_of(hl_class_of(SIZE)) <= 64);
    pthread_t a;
    pthread_barrier_init(&moved, NULL, 2);
    pthread_barrier_init(&taken, NULL, 2);
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_barrier_wait(&moved);
    struct hoardlab_stats s0, s1;
    hoardlab_stats(&s0);
    void *q = hl_malloc(SIZE);               /* this thread's heap has none: the global heap's */
    hoardlab_stats(&s1);
    pthread_barrier_wait(&taken);
    pthread_join(a, NULL);
    assert_int_equal(s1.global_from - s0.global_from, 1);
    assert_true(still_held > 0);
    assert_int_equal(s1.census_paper - s0.census_paper, still_held);
    hl_free(q);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_CENSUS", "on", 1);
    setenv("HOARD_RELEASE_THRESHOLD", "1", 1);
    setenv("HOARD_EMPTY_FRACTION", "1/4", 1);
    setenv("HOARD_SUPERBLOCK_SIZE", "8K", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    setenv("HOARD_RELEASE_EMPTY", "off", 1);
    setenv("HOARD_REMOTE_FREE", "lock", 1);
    setenv("HOARD_STATS_BATCH", "0", 1);
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_class_or_per_heap),
        cmocka_unit_test(held_and_meta),
        cmocka_unit_test(census_paper_counts_foreign_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
