/* blocks.c — the blocks the workloads allocate: stamps (values derived from a block's address
 * and a salt, checked before it is freed, so an allocator that hands out overlapping blocks
 * fails the run), allocation through the latency sampler, and live sets. */
#include <stdlib.h>
#include <string.h>
#include "run.h"

static inline uint64_t stamp_of(const void *p, uint64_t salt)
{
    return hb_mix((uint64_t)(uintptr_t)p ^ salt);
}

/* Blocks up to STAMP_ALL bytes are stamped whole, larger ones at both ends: word k holds
 * v + k * odd, the last (partial) word likewise, so any overlap with a neighbour shows. */
#define STAMP_ALL 64

static inline uint64_t word(uint64_t v, size_t k) { return v + k * 0x9e3779b97f4a7c15ull; }

void hb_stamp(void *p, size_t n, uint64_t salt)
{
    uint64_t v = stamp_of(p, salt), w;
    char *c = p;
    for (size_t k = 0; k * 8 < n; k++) {
        if (n > STAMP_ALL && k == 1) k = (n - 1) / 8;       /* skip to the last word */
        w = word(v, k);
        memcpy(c + k * 8, &w, n - k * 8 < 8 ? n - k * 8 : 8);
    }
}

void hb_check(const void *p, size_t n, uint64_t salt)
{
    uint64_t v = stamp_of(p, salt), w;
    const char *c = p;
    for (size_t k = 0; k * 8 < n; k++) {
        if (n > STAMP_ALL && k == 1) k = (n - 1) / 8;
        w = word(v, k);
        if (memcmp(c + k * 8, &w, n - k * 8 < 8 ? n - k * 8 : 8) != 0)
            hb_fail("block %p of %zu bytes lost its stamp at offset %zu: the allocator handed "
                    "out memory that another live block uses", p, n, k * 8);
    }
}

void *hb_alloc(size_t n, uint64_t salt)
{
    void *p = hb_malloc(n);
    if (!p) hb_fail("malloc(%zu) returned NULL", n);
    hb_stamp(p, n, salt);
    return p;
}

void hb_release(void *p, size_t n, uint64_t salt)
{
    hb_check(p, n, salt);
    hb_free(p);
}

struct hb_block *hb_live_set(struct hb_rng *g, long long n, uint64_t lo, uint64_t hi,
                             uint64_t salt)
{
    struct hb_block *live = calloc((size_t)n, sizeof *live);
    if (!live) hb_fail("out of memory");
    for (long long k = 0; k < n; k++) {
        live[k].n = (size_t)hb_range(g, lo, hi);
        live[k].p = hb_alloc(live[k].n, salt);
    }
    return live;
}
