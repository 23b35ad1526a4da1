/* test_tlab.c — the thread-local allocation buffers (src/core/tlab.c, tlab.h) under hoard
 * with tlab = on, a heap per thread, tlab_budget = 8K (a bin of class c holds 8K / size):
 *   reuse        a block the thread frees is the next one its malloc of the class returns
 *   budget       however many blocks the thread frees, a bin holds at most its limit, and
 *                its room is the limit less the blocks on its chain
 *   flush        an overflowing bin gives blocks back to their superblocks: once the program
 *                has freed everything, the superblocks' `used` is what the bin still holds
 *   no_twice     fill, drain, fill again: no block is handed out twice, nor one still live
 *   thread_exit  a thread's exit gives every block of its TLAB back to its superblock, and
 *                the gauge tlab_bytes drops by what the TLAB held
 * Each test uses a size class of its own, so the bins of one do not disturb another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "tlab.h"
#include "handout.h"

#define BUDGET 8192

static struct hl_tlab_bin *bin_of(size_t size) { return &hl_me.tlab_bins[hl_class_of(size)]; }

static uint32_t limit_of(size_t size) { return BUDGET / hl_class_size(hl_class_of(size)); }

/* The blocks on bin b's chain, into out[] (if not NULL); a chain longer than the bin's limit
 * (or one that loops) fails the test. */
static uint32_t chain(const struct hl_tlab_bin *b, void **out)
{
    uint32_t n = 0;
    for (void *p = b->head; p; p = *(void **)p) {
        if (n == b->limit) fail_msg("the bin holds more than its limit %u", b->limit);
        if (out) out[n] = p;
        n++;
    }
    return n;
}
static uint32_t chain_length(const struct hl_tlab_bin *b) { return chain(b, NULL); }

static bool on_chain(const struct hl_tlab_bin *b, const void *q)
{
    void *held[BUDGET / 16];
    for (uint32_t i = 0, n = chain(b, held); i < n; i++)
        if (held[i] == q) return true;
    return false;
}

/* The distinct superblocks of n blocks, and the sum of their `used`. */
static size_t superblocks_of(void **p, size_t n, struct hl_sb **sbs)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct hl_sb *sb = hl_sb_of(p[i]);
        size_t j = 0;
        while (j < k && sbs[j] != sb) j++;
        if (j == k) sbs[k++] = sb;
    }
    return k;
}
static uint64_t used_of(struct hl_sb **sbs, size_t k)
{
    uint64_t used = 0;
    for (size_t j = 0; j < k; j++) used += sbs[j]->used;
    return used;
}

static void reuse(void **state)
{
    (void)state;
    void *keep = hl_malloc(48), *p = hl_malloc(48);
    hl_free(p);
    assert_true(on_chain(bin_of(48), p));
    assert_ptr_equal(hl_malloc(48), p);                  /* the same thread gets it back */
    hl_free(p);
    hl_free(keep);
}

static void budget(void **state)
{
    (void)state;
    size_t n = 4 * limit_of(64);
    void **p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(64));
    for (size_t i = 0; i < n; i++) {
        hl_free(p[i]);
        struct hl_tlab_bin *b = bin_of(64);
        assert_int_equal(b->room, (int32_t)(b->limit - chain_length(b)));
    }
    assert_int_equal(bin_of(64)->limit, limit_of(64));
    assert_true(hl_tlab_bytes() <= (size_t)BUDGET * hl_classes->count);
    free(p);
}

static void flush(void **state)
{
    (void)state;
    size_t n = 5 * limit_of(256);
    void **p = calloc(n, sizeof *p);
    struct hl_sb **sbs = calloc(n, sizeof *sbs);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(256));
    size_t k = superblocks_of(p, n, sbs);
    assert_true(used_of(sbs, k) >= n);
    for (size_t i = 0; i < n; i++) hl_free(p[i]);
    /* Out of its superblock a block is either the program's or in the TLAB: now only the
     * latter, and no more than the bin's limit of them. */
    void *held[BUDGET / 16];
    uint32_t in_bin = 0, n_held = chain(bin_of(256), held);
    for (uint32_t i = 0; i < n_held; i++)
        for (size_t j = 0; j < k; j++) in_bin += hl_sb_of(held[i]) == sbs[j];
    assert_int_equal(used_of(sbs, k), in_bin);
    assert_true(in_bin <= limit_of(256));
    free(sbs);
    free(p);
}

static void no_twice(void **state)
{
    (void)state;
    expect_each_block_once(128, 3 * limit_of(128));
}

struct exit_run { size_t n; void **p; size_t bytes_held; };

static void *fill_and_exit(void *arg)
{
    struct exit_run *r = arg;
    for (size_t i = 0; i < r->n; i++) r->p[i] = hl_malloc(512);
    for (size_t i = 0; i < r->n; i++) hl_free(r->p[i]);
    r->bytes_held = chain_length(bin_of(512)) * hl_class_size(hl_class_of(512));
    return NULL;
}

static void thread_exit(void **state)
{
    (void)state;
    size_t before = hl_tlab_bytes();
    struct exit_run r = { .n = limit_of(512) };
    r.p = calloc(r.n, sizeof *r.p);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_and_exit, &r), 0);
    pthread_join(t, NULL);
    assert_true(r.bytes_held > 0);                       /* its frees were in its TLAB */
    struct hl_sb **sbs = calloc(r.n, sizeof *sbs);
    size_t k = superblocks_of(r.p, r.n, sbs);
    assert_int_equal(used_of(sbs, k), 0);                /* every block back */
    assert_int_equal(hl_tlab_bytes(), before);           /* its bins are no one's now */
    free(sbs);
    free(r.p);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_TLAB", "on", 1);
    setenv("HOARD_TLAB_BUDGET", "8K", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    hl_init();
    hl_free(hl_malloc(1));                               /* the main thread's bins */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reuse),
        cmocka_unit_test(budget),
        cmocka_unit_test(flush),
        cmocka_unit_test(no_twice),
        cmocka_unit_test(thread_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
