/* handout.h — a check the front caches' unit tests share (test_tlab.c, test_cpucache.c): no
 * block is handed out twice. Include after cmocka.h. */
#ifndef HL_TEST_HANDOUT_H
#define HL_TEST_HANDOUT_H

#include <stdint.h>
#include <stdlib.h>
#include "hl.h"

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Six rounds of n blocks of `size` bytes, each malloc'd beside 100 kept live throughout,
 * checked all distinct, and drained in an order that is neither LIFO nor FIFO. */
static void expect_each_block_once(size_t size, size_t n)
{
    enum { LIVE = 100 };
    size_t all = LIVE + n;
    void **p = calloc(all, sizeof *p), **sorted = calloc(all, sizeof *p);
    for (size_t i = 0; i < LIVE; i++) p[i] = hl_malloc(size);
    for (int round = 0; round < 6; round++) {
        for (size_t i = LIVE; i < all; i++) assert_non_null(p[i] = hl_malloc(size));
        for (size_t i = 0; i < all; i++) sorted[i] = p[i];
        qsort(sorted, all, sizeof *sorted, by_address);
        for (size_t i = 1; i < all; i++)
            if (sorted[i] == sorted[i - 1]) fail_msg("round %d: %p handed out twice", round,
                                                     sorted[i]);
        for (size_t i = LIVE; i < all; i += 2) hl_free(p[i]);
        for (size_t i = LIVE + 1; i < all; i += 2) hl_free(p[i]);
    }
    for (size_t i = 0; i < LIVE; i++) hl_free(p[i]);
    free(sorted);
    free(p);
}

#endif
