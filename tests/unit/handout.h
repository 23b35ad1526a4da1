/* handout.h — checks the front caches' unit tests share (test_tlab.c, test_cpucache.c): no
 * block is handed out twice, and none changes while the program holds it. Include after
 * cmocka.h. */
#ifndef HL_TEST_HANDOUT_H
#define HL_TEST_HANDOUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* n blocks of `size` malloc'd, then all freed (a cache's bin or stack fills, overflows, fills). */
static void malloc_then_free(size_t size, uint32_t n)
{
    void **v = calloc(n, sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i] = hl_malloc(size);
    for (uint32_t i = 0; i < n; i++) hl_free(v[i]);
    free(v);
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

/* `bursts` bursts of 400 blocks of the given sizes (picked by seed), each block filled with a
 * byte of its address, checked before all are freed, resting 0 to rest_ms - 1 between bursts
 * (while the purge thread takes the caches back): a block another owner wrote, or one handed
 * out twice, fails (who: whose bursts, in the message). */
static void bursts_keep_their_bytes(const size_t *sizes, size_t nsizes, unsigned seed,
                                    int bursts, unsigned rest_ms, const char *who)
{
    enum { BURST = 400 };
    unsigned char *v[BURST];
    size_t n[BURST];
    for (int b = 0; b < bursts; b++) {
        for (int i = 0; i < BURST; i++) {
            n[i] = sizes[rand_r(&seed) % nsizes];
            v[i] = hl_malloc(n[i]);
            memset(v[i], (int)(((uintptr_t)v[i] >> 4) & 0xff), n[i]);
        }
        for (int i = 0; i < BURST; i++)
            for (size_t j = 0; j < n[i]; j++)
                if (v[i][j] != (unsigned char)(((uintptr_t)v[i] >> 4) & 0xff))
                    fail_msg("%s burst %d: block %p byte %zu overwritten", who, b,
                             (void *)v[i], j);
        for (int i = 0; i < BURST; i++) hl_free(v[i]);
        usleep((useconds_t)(rand_r(&seed) % rest_ms) * 1000);
    }
}

#endif
