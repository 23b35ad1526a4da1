/* The latency histogram of harness/histogram.c on known samples: bucket bounds (exact below
 * 16, eight sub-buckets per power of two above), and percentiles as the upper bound of the
 * bucket holding the sample of rank ceil(q * n), capped at the exact maximum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "../../harness/util.h"

static void test_bucket_bounds(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 16; v++) {             /* one value per bucket */
        assert_int_equal(hb_hist_bucket(v), v);
        assert_int_equal(hb_hist_lower((unsigned)v), v);
        assert_int_equal(hb_hist_upper((unsigned)v), v);
    }
    /* [16, 32): eight buckets of width 2; [1024, 2048): eight of width 128 */
    assert_int_equal(hb_hist_bucket(16), 16);
    assert_int_equal(hb_hist_bucket(17), 16);
    assert_int_equal(hb_hist_bucket(18), 17);
    assert_int_equal(hb_hist_bucket(31), 23);
    assert_int_equal(hb_hist_bucket(32), 24);
    assert_int_equal(hb_hist_lower(hb_hist_bucket(1000)), 960);
    assert_int_equal(hb_hist_upper(hb_hist_bucket(1000)), 1023);
    assert_int_equal(hb_hist_lower(hb_hist_bucket(1024)), 1024);
    assert_int_equal(hb_hist_upper(hb_hist_bucket(1024)), 1151);
    /* every bucket is contiguous with the next, and holds its own bounds */
    for (unsigned b = 0; b + 1 < HB_HIST_BUCKETS; b++) {
        assert_int_equal(hb_hist_upper(b) + 1, hb_hist_lower(b + 1));
        assert_int_equal(hb_hist_bucket(hb_hist_lower(b)), b);
        assert_int_equal(hb_hist_bucket(hb_hist_upper(b)), b);
        /* width at most 1/8 of the lower bound above 16 */
        if (b >= 16) assert_true((hb_hist_upper(b) - hb_hist_lower(b) + 1) * 8 <=
                                 hb_hist_lower(b));
    }
    assert_int_equal(hb_hist_bucket(UINT64_MAX), HB_HIST_BUCKETS - 1);
}

static void test_percentiles_exact_range(void **state)
{
    (void)state;
    struct hb_hist h;
    hb_hist_clear(&h);
    assert_int_equal(hb_hist_quantile(&h, 0.5), 0);          /* empty */
    for (uint64_t v = 1; v <= 10; v++) hb_hist_add(&h, v);   /* one sample each of 1..10 */
    assert_int_equal(h.n, 10);
    assert_int_equal(h.max, 10);
    assert_int_equal(hb_hist_quantile(&h, 0.5), 5);          /* rank 5 */
    assert_int_equal(hb_hist_quantile(&h, 0.9), 9);          /* rank 9 */
    assert_int_equal(hb_hist_quantile(&h, 0.99), 10);        /* rank ceil(9.9) = 10 */
    assert_int_equal(hb_hist_quantile(&h, 0.999), 10);
    assert_int_equal(hb_hist_quantile(&h, 0.0001), 1);       /* rank at least 1 */
}

static void test_percentiles_buckets(void **state)
{
    (void)state;
    struct hb_hist h, other;
    hb_hist_clear(&h);
    hb_hist_clear(&other);
    /* 900 samples of 100 (bucket [96, 103]), 90 of 1000 ([960, 1023]), 9 of 5000
     * ([4608, 5119]), 1 of 70000 ([65536, 73727]) */
    for (int k = 0; k < 900; k++) hb_hist_add(&h, 100);
    for (int k = 0; k < 90; k++) hb_hist_add(&other, 1000);
    for (int k = 0; k < 9; k++) hb_hist_add(&other, 5000);
    hb_hist_add(&other, 70000);
    hb_hist_merge(&h, &other);
    assert_int_equal(h.n, 1000);
    assert_int_equal(h.max, 70000);
    assert_int_equal(hb_hist_quantile(&h, 0.5), 103);        /* rank 500: upper bound */
    assert_int_equal(hb_hist_quantile(&h, 0.9), 103);        /* rank 900 */
    assert_int_equal(hb_hist_quantile(&h, 0.99), 1023);      /* rank 990 */
    assert_int_equal(hb_hist_quantile(&h, 0.999), 5119);     /* rank 999 */
    assert_int_equal(hb_hist_quantile(&h, 1.0), 70000);      /* capped at the max */
    /* the last bucket: values from HB_HIST_LIMIT up, reported as the max */
    hb_hist_add(&h, HB_HIST_LIMIT * 4);
    assert_int_equal(hb_hist_quantile(&h, 1.0), HB_HIST_LIMIT * 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_bounds),
        cmocka_unit_test(test_percentiles_exact_range),
        cmocka_unit_test(test_percentiles_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
