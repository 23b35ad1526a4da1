/* test_sizeclass.c — both size-class tables: sizes are multiples of 16, strictly increasing,
 * end exactly at the largest request served; pow2 doubles; geometric grows by at most b
 * (rounded to 16); every request maps to the smallest class that holds it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "front.h"
#include "mem.h"

static void check_table(size_t max)
{
    const struct hl_classes *t = hl_classes;
    assert_true(t->count > 0);
    assert_int_equal(t->size[t->count - 1], hl_align_up(max, 16));
    for (unsigned c = 0; c < t->count; c++) {
        assert_int_equal(t->size[c] % 16, 0);
        if (c) assert_true(t->size[c] > t->size[c - 1]);
    }
    for (size_t n = 1; n <= max; n++) {
        unsigned c = hl_class_of(n);
        assert_true(hl_class_size(c) >= n);
        if (c) assert_true(hl_class_size(c - 1) < n);
    }
}

static void pow2_doubles(void **state)
{
    (void)state;
    hl_cfg.size_classes = HL_CLASSES_POW2;
    assert_int_equal(hl_classes_init(4096), 0);
    check_table(4096);
    assert_int_equal(hl_classes->count, 9);             /* 16, 32, ..., 4096 */
    for (unsigned c = 1; c < hl_classes->count; c++)
        assert_int_equal(hl_class_size(c), 2 * hl_class_size(c - 1));
}

static void geometric_grows_by_at_most_b(void **state)
{
    (void)state;
    const double bases[] = { 1.2, 1.5, 2.0 };
    for (unsigned i = 0; i < 3; i++) {
        hl_cfg.size_classes = HL_CLASSES_GEOMETRIC;
        hl_cfg.size_class_base = bases[i];
        assert_int_equal(hl_classes_init(4000), 0);
        check_table(4000);
        for (unsigned c = 1; c + 1 < hl_classes->count; c++) {
            size_t lo = hl_class_size(c - 1), hi = hl_class_size(c);
            assert_true(hi == lo + 16 || (double)hi <= (double)lo * bases[i] + 16);
        }
    }
}

static void odd_maximum_is_the_last_class(void **state)
{
    (void)state;
    hl_cfg.size_classes = HL_CLASSES_POW2;
    assert_int_equal(hl_classes_init(3000), 0);
    check_table(3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pow2_doubles),
        cmocka_unit_test(geometric_grows_by_at_most_b),
        cmocka_unit_test(odd_maximum_is_the_last_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
