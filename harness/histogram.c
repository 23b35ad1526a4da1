/* histogram.c — a log-bucketed histogram of latencies (in clock ticks), HDR-like: values
 * below 16 have a bucket each; above, every power of two [2^k, 2^(k+1)) is split into 8
 * equal sub-buckets, so a bucket's width is at most 1/8 of its lower bound (12.5% relative
 * resolution) over the whole range, at a fixed size and with an add that is a shift and an
 * increment. Percentiles are reported as the upper bound of the bucket that holds them
 * (never above the exact maximum, which is kept apart): "at most this", to one bucket.
 *
 * Pure: no clock, no threads, no allocation; latency.c and the stall workload own instances
 * and tests/harness/test_histogram.c checks the bounds and percentiles on known samples. */
#include <string.h>
#include "util.h"

unsigned hb_hist_bucket(uint64_t v)
{
    if (v >= HB_HIST_LIMIT) v = HB_HIST_LIMIT - 1;
    if (v < 2 * HB_HIST_SUB) return (unsigned)v;
    unsigned k = 63u - (unsigned)__builtin_clzll(v);            /* 2^k <= v, k >= 4 */
    return (k - 2) * HB_HIST_SUB + (unsigned)((v >> (k - 3)) & (HB_HIST_SUB - 1));
}

uint64_t hb_hist_lower(unsigned b)
{
    if (b < 2 * HB_HIST_SUB) return b;
    unsigned k = b / HB_HIST_SUB + 2, sub = b % HB_HIST_SUB;
    return (uint64_t)(HB_HIST_SUB + sub) << (k - 3);
}

uint64_t hb_hist_upper(unsigned b)
{
    return b + 1 < HB_HIST_BUCKETS ? hb_hist_lower(b + 1) - 1 : UINT64_MAX;
}

void hb_hist_clear(struct hb_hist *h) { memset(h, 0, sizeof *h); }

void hb_hist_add(struct hb_hist *h, uint64_t v)
{
    h->count[hb_hist_bucket(v)]++;
    h->n++;
    if (v > h->max) h->max = v;
}

void hb_hist_merge(struct hb_hist *into, const struct hb_hist *h)
{
    for (unsigned b = 0; b < HB_HIST_BUCKETS; b++) into->count[b] += h->count[b];
    into->n += h->n;
    if (h->max > into->max) into->max = h->max;
}

/* The q-quantile (0 < q <= 1): the sample of rank ceil(q * n) in sorted order lies in the
 * first bucket whose cumulative count reaches that rank; its upper bound, capped at the max.
 * 0 for an empty histogram (the caller writes null). */
uint64_t hb_hist_quantile(const struct hb_hist *h, double q)
{
    if (!h->n) return 0;
    double want = q * (double)h->n;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want) rank++;
    if (rank < 1) rank = 1;
    if (rank > h->n) rank = h->n;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HB_HIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank) {
            uint64_t up = hb_hist_upper(b);
            return up < h->max ? up : h->max;
        }
    }
    return h->max;
}
