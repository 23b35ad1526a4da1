/* lab_@NAME@.c — what strategy @NAME@ must do, made by `tools/hoardlab new` (docs/lab.md).
 * Meson runs it with HOARD_STRATEGY=@NAME@ and HOARD_STATS_BATCH=0 (U exact), calling the
 * allocator's hl_ entry points directly: `tools/hoardlab test --strategy @NAME@`. Add a test
 * for each promise your strategy makes (its policy, its bound on memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "hl.h"
#include "hoardlab.h"

#define LIVE 2000

static uint64_t in_use(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return s.in_use;
}

static void the_active_strategy_is_mine(void **state)
{
    (void)state;
    hl_free(hl_malloc(1));                        /* initialises the allocator */
    assert_string_equal(hl_active->name, "@NAME@");
}

/* Blocks live at once never overlap and keep what was written into them. */
static void live_blocks_are_disjoint_and_intact(void **state)
{
    (void)state;
    static unsigned char *p[LIVE];
    for (unsigned i = 0; i < LIVE; i++) {
        size_t n = 1 + (i * 37) % 900;
        p[i] = hl_malloc(n);
        assert_non_null(p[i]);
        assert_true(hl_malloc_usable_size(p[i]) >= n);
        memset(p[i], (int)(i & 0xff), n);
    }
    for (unsigned i = 0; i < LIVE; i++) {
        size_t n = 1 + (i * 37) % 900;
        for (size_t k = 0; k < n; k++) assert_int_equal(p[i][k], i & 0xff);
        hl_free(p[i]);
    }
}

/* U (bytes in use) rises by at least what was asked and returns to where it was. */
static void in_use_counts_every_block_once(void **state)
{
    (void)state;
    uint64_t before = in_use();
    void *p[64];
    for (unsigned i = 0; i < 64; i++) p[i] = hl_malloc(100);
    assert_true(in_use() >= before + 64 * 100);
    for (unsigned i = 0; i < 64; i++) hl_free(p[i]);
    assert_int_equal(in_use(), before);
}

static void *free_them(void *arg)
{
    void **p = arg;
    for (unsigned i = 0; i < LIVE; i++) hl_free(p[i]);
    return NULL;
}

/* Blocks one thread allocates and another frees (a producer and a consumer) are given back:
 * U returns to where it was, and the allocator goes on working. */
static void blocks_freed_by_another_thread_come_back(void **state)
{
    (void)state;
    static void *p[LIVE];
    uint64_t before = in_use();
    for (unsigned i = 0; i < LIVE; i++) assert_non_null(p[i] = hl_malloc(48));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_them, p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(in_use(), before);
    void *q = hl_malloc(48);
    assert_non_null(q);
    hl_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_active_strategy_is_mine),
        cmocka_unit_test(live_blocks_are_disjoint_and_intact),
        cmocka_unit_test(in_use_counts_every_block_once),
        cmocka_unit_test(blocks_freed_by_another_thread_come_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
