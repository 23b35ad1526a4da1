/* sample.h — the samplers a measured phase drives (run.c's hb_begin and hb_end): the latency
 * of one malloc or free in N, and memory over time. Each writes its key of the record. Above
 * util.h; below the run machinery. */
#ifndef HB_SAMPLE_H
#define HB_SAMPLE_H

#include <stdlib.h>
#include "util.h"

/* ---- latency.c: latency sampling of malloc and free ----------------------------------------- */

/* Workloads allocate the blocks they measure with hb_malloc/hb_free (hb_alloc/hb_release
 * use them): on average one call in --latency-every (randomised gaps, so no workload period
 * aliases with it) is timed into the calling thread's histogram; every other call pays one
 * decrement and a predicted branch on a thread-local counter. Thread histograms are merged
 * when a thread exits and at hb_end(). */
enum { HB_LAT_MALLOC, HB_LAT_FREE };
extern __thread long hb_lat_left[2];    /* calls until the next timed one */
void *hb_lat_malloc(size_t n);          /* the slow paths: time (or set the next gap) */
void hb_lat_free(void *p);

static inline void *hb_malloc(size_t n)
{
    if (__builtin_expect(--hb_lat_left[HB_LAT_MALLOC] > 0, 1)) return malloc(n);
    return hb_lat_malloc(n);
}

static inline void hb_free(void *p)
{
    if (__builtin_expect(--hb_lat_left[HB_LAT_FREE] > 0, 1)) {
        free(p);
        return;
    }
    hb_lat_free(p);
}

void hb_lat_init(long long every);      /* --latency-every (0: off); before any thread */
void hb_lat_begin(void);                /* hb_begin(): forget earlier samples */
void hb_lat_end(void);                  /* hb_end(): merge the caller's, freeze the result */
void hb_lat_record(struct hb_json *j);  /* the record's "latency" key (none when off) */
/* Also add the calling thread's timed calls to hist[HB_LAT_MALLOC], hist[HB_LAT_FREE] (NULL:
 * stop): the stall workload splits its threads' latencies by mode this way. */
void hb_lat_divert(struct hb_hist *hist);
double hb_lat_ns_per_tick(void);        /* after hb_lat_end() */
/* {"samples", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"} of one histogram in ticks. */
void hb_lat_summary(struct hb_json *j, const char *key, const struct hb_hist *h);

/* ---- series.c: memory over time ------------------------------------------------------------- */

/* A sampler thread, started once, records from hb_begin() to hb_end() every interval: A,
 * U, libhoardlab's own bytes, and the smaps_rollup split of the resident set. */
enum { HB_SER_HELD, HB_SER_IN_USE, HB_SER_SELF, HB_SER_RSS, HB_SER_PRIVATE_DIRTY,
       HB_SER_LAZYFREE, HB_SER_ANONYMOUS, HB_SER_ANON_HUGE, HB_SER_VALUES };
struct hb_series_row { double t_s; long long v[HB_SER_VALUES]; };   /* -1: unknown (null) */
void hb_series_init(double interval_s); /* --sample-interval (0: off); before the runs */
void hb_series_begin(void);             /* hb_begin(): the row of t = 0, before t0 is set */
void hb_series_start(double t0);        /* hb_begin(): t0 set, the sampler runs */
void hb_series_end(double t1);
void hb_series_record(struct hb_json *j);   /* the record's "series" key (none when off) */
/* One row now, without the sampler (t_s = hb_now()); does not call the allocator, so any
 * thread may read one while a run goes on (phased's checkpoints after the drain). */
void hb_series_read(struct hb_series_row *row);
/* The rows of the last run (after hb_series_end()), the final one taken at the end. */
int hb_series_rows(const struct hb_series_row **rows);

#endif
