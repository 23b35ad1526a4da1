/* test_threshold.c — Hoard's emptiness threshold (§3.1) as a pure function:
 * crossed  <=>  u < a - K*S  and  u < (1 - f) * a. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "hoard.h"

#define S 8192u

static void needs_both_conditions(void **state)
{
    (void)state;
    double f = 0.25;
    size_t ks = 4 * S;                                   /* K = 4 */
    /* a = 8 S: the K condition is u < 4 S; the f condition u < 6 S. */
    assert_true(hl_hoard_crosses_threshold(4 * S - 1, 8 * S, f, ks));
    assert_false(hl_hoard_crosses_threshold(4 * S, 8 * S, f, ks));    /* K condition fails */
    /* a = 4 S: the K condition (u < 0) can never hold: a heap of K superblocks keeps them. */
    assert_false(hl_hoard_crosses_threshold(0, 4 * S, f, ks));
    /* a = 40 S: K condition u < 36 S, f condition u < 30 S: f binds. */
    assert_true(hl_hoard_crosses_threshold(30 * S - 1, 40 * S, f, ks));
    assert_false(hl_hoard_crosses_threshold(30 * S, 40 * S, f, ks));  /* exactly (1-f) a */
}

static void k_zero_is_fraction_only(void **state)
{
    (void)state;
    /* The Figure 1 setting: f = 1/4, K = 0. Three of four blocks in use is not "more than f
     * empty"; two of four is. */
    assert_false(hl_hoard_crosses_threshold(3000, 4000, 0.25, 0));
    assert_true(hl_hoard_crosses_threshold(2999, 4000, 0.25, 0));
    assert_true(hl_hoard_crosses_threshold(2000, 4000, 0.25, 0));
    assert_false(hl_hoard_crosses_threshold(0, 0, 0.25, 0));          /* an empty heap */
    assert_false(hl_hoard_crosses_threshold(4000, 4000, 0.25, 0));    /* a full heap */
}

static void other_fractions(void **state)
{
    (void)state;
    assert_true(hl_hoard_crosses_threshold(49, 100, 0.5, 0));
    assert_false(hl_hoard_crosses_threshold(50, 100, 0.5, 0));
    assert_true(hl_hoard_crosses_threshold(86, 100, 0.125, 0));
    assert_false(hl_hoard_crosses_threshold(88, 100, 0.125, 0));
}

/* The invariant is the negation; check it on a grid against the formula written out. */
static void invariant_is_the_negation(void **state)
{
    (void)state;
    for (size_t a = 0; a <= 64 * 1024; a += 1024)
        for (size_t u = 0; u <= a; u += 512)
            for (unsigned k = 0; k <= 3; k++) {
                bool inv = (double)u >= (double)a - (double)k * 4096 ||
                           (double)u >= 0.75 * (double)a;
                assert_int_equal(!inv, hl_hoard_crosses_threshold(u, a, 0.25, k * 4096));
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(needs_both_conditions),
        cmocka_unit_test(k_zero_is_fraction_only),
        cmocka_unit_test(other_fractions),
        cmocka_unit_test(invariant_is_the_negation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
