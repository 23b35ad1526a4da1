/* ucpp.c — the two free-list tests of the uC++/Hoard report (§8.2), and realloc-churn.
 *
 * ucpp-random: threads allocate batches of random sizes 8..1024, so they meet on shared
 * free lists (lock contention). ucpp-unique: thread i uses only size min_size * 2^(i mod c),
 * c the doublings between min_size and max_size, so no two of the first c threads share a
 * size class under either size-class table; what remains is false sharing of the allocator's
 * own metadata (free-list heads), which padding removes. Both follow threadtest's shape:
 * N/t blocks per thread allocated, then freed, for I rounds. */
#include <stdlib.h>
#include <string.h>
#include "../hlbench.h"

#define UCPP_PARAMS(min, min_help)                                                            \
    { "blocks",   HB_INT, "100000", false, "N: blocks per round in all threads (N/t each)" }, \
    { "rounds",   HB_INT, "10",     true,  "I: allocate-all / free-all rounds" },              \
    { "min_size", HB_INT, min,      false, min_help },                                       \
    { "max_size", HB_INT, "1024",   false, "largest block, bytes" },                          \
    { NULL, 0, NULL, false, NULL }

const struct hb_param hb_ucpp_random_params[] = { UCPP_PARAMS("8", "smallest block, bytes") };
/* 16, the smallest class of both tables, so threads 0 and 1 use neighbouring free lists. */
const struct hb_param hb_ucpp_unique_params[] = {
    UCPP_PARAMS("16", "size of thread 0's blocks, bytes")
};

static void ucpp_thread(struct hb_run *r, int i, void *arg)
{
    bool unique = arg != NULL;
    long long n = hb_int(r, "blocks") / r->threads, rounds = hb_int(r, "rounds");
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    uint64_t salt = hb_mix(r->seed * 31 + (uint64_t)i);
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    if (n < 1) n = 1;
    size_t own = (size_t)lo;
    if (unique) {
        int c = 0;
        while ((lo << (c + 1)) <= hi) c++;
        own = (size_t)(lo << (i % (c + 1)));
    }
    void **b = malloc((size_t)n * sizeof *b);
    size_t *sz = malloc((size_t)n * sizeof *sz);
    if (!b || !sz) hb_fail("out of memory");
    for (long long k = 0; k < rounds; k++) {
        for (long long j = 0; j < n; j++) {
            sz[j] = unique ? own : (size_t)hb_range(&g, lo, hi);
            b[j] = hb_alloc(sz[j], salt);
        }
        for (long long j = 0; j < n; j++) hb_release(b[j], sz[j], salt);
    }
    free(sz);
    free(b);
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * n * rounds));
}

static int ucpp(struct hb_run *r, bool unique)
{
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size"))
        hb_usage("needs 1 <= min_size <= max_size");
    static int token;
    hb_parallel(r, r->threads, ucpp_thread, unique ? &token : NULL);
    return 0;
}

int hb_ucpp_random(struct hb_run *r) { return ucpp(r, false); }
int hb_ucpp_unique(struct hb_run *r) { return ucpp(r, true); }

/* ---- realloc-churn: random growth and shrinking; contents must survive ---------------------- */

const struct hb_param hb_realloc_churn_params[] = {
    { "buffers",  HB_INT, "1000",    false, "buffers per thread" },
    { "steps",    HB_INT, "1000000", true,  "realloc calls in all threads together" },
    { "max_size", HB_INT, "16384",   false, "largest buffer, bytes" },
    { NULL, 0, NULL, false, NULL },
};

/* The byte at offset k of buffer b: a function of both, so a copy that lost or moved bytes,
 * or a neighbour that scribbled on them, shows up. */
static inline unsigned char pattern(uint64_t key, size_t k)
{
    return (unsigned char)(key + k * 131);
}

static void check_spot(const unsigned char *p, uint64_t key, size_t k)
{
    if (p[k] != pattern(key, k))
        hb_fail("realloc lost the contents of buffer %p at offset %zu", (const void *)p, k);
}

static void churn_thread(struct hb_run *r, int i, void *arg)
{
    (void)arg;
    long long nb = hb_int(r, "buffers"), steps = hb_int(r, "steps") / r->threads;
    size_t max = (size_t)hb_int(r, "max_size");
    unsigned char **buf = calloc((size_t)nb, sizeof *buf);
    size_t *len = calloc((size_t)nb, sizeof *len);
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    uint64_t base = hb_mix(r->seed ^ (uint64_t)i << 20);
    if (!buf || !len) hb_fail("out of memory");
    for (long long s = 0; s < steps; s++) {
        size_t b = (size_t)(hb_rand(&g) % (uint64_t)nb), old = len[b], n;
        uint64_t key = base + b;
        if (old && hb_rand(&g) % 64 == 0) {            /* now and then: free it */
            free(buf[b]);
            buf[b] = NULL;
            len[b] = 0;
            continue;
        }
        if (!old || hb_rand(&g) & 1) n = old + 1 + (size_t)(hb_rand(&g) % (old + 16));  /* grow */
        else n = old - (size_t)(hb_rand(&g) % (old / 2 + 1));                           /* shrink */
        if (n > max) n = max;
        if (n < 1) n = 1;
        unsigned char *p = realloc(buf[b], n);
        if (!p) hb_fail("realloc(%zu) returned NULL", n);
        size_t keep = old < n ? old : n;
        if (keep) {                                     /* the kept prefix: ends and a middle */
            check_spot(p, key, 0);
            check_spot(p, key, keep - 1);
            check_spot(p, key, (size_t)(hb_rand(&g) % keep));
        }
        for (size_t k = keep; k < n; k++) p[k] = pattern(key, k);
        buf[b] = p;
        len[b] = n;
    }
    for (long long b = 0; b < nb; b++) free(buf[b]);
    free(buf);
    free(len);
    atomic_fetch_add(&r->ops, (unsigned long long)steps);
}

int hb_realloc_churn(struct hb_run *r)
{
    if (hb_int(r, "buffers") < 1 || hb_int(r, "max_size") < 1)
        hb_usage("realloc-churn needs buffers >= 1, max_size >= 1");
    hb_parallel(r, r->threads, churn_thread, NULL);
    return 0;
}
