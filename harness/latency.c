/* latency.c — timing one malloc or free call in N (N = --latency-every), per thread, into a
 * histogram (histogram.c), merged into the record's "latency" object.
 *
 * The clock: the time-stamp counter (rdtsc) when the CPU says it is invariant (constant_tsc
 * and nonstop_tsc in /proc/cpuinfo), else clock_gettime(CLOCK_MONOTONIC). Ticks are turned
 * into nanoseconds once, at the end of a run, with a rate measured between hb_lat_init() and
 * that moment (at least the 5 ms slept at start-up). A timed call's latency includes one
 * reading of the clock; `overhead_ns` is that cost (the median of back-to-back readings),
 * reported and not subtracted.
 *
 * Gaps between timed calls are uniform in 1..2N-1 (mean N), drawn per thread, so a workload
 * whose calls repeat with a period dividing N is not always timed at the same point. A
 * thread's first call only draws its first gap: it is not timed (a thread's first call into
 * an allocator is set-up, not a latency).
 *
 * Nothing here allocates through the allocator under test: per-thread histograms live in
 * thread-local storage, merged under a mutex by a thread-specific-data destructor when the
 * thread exits (before pthread_join returns) and by hb_lat_end() for the calling thread.
 * An epoch, advanced by hb_lat_begin(), makes a thread forget samples of an earlier phase. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include "sample.h"

__thread long hb_lat_left[2];

struct lat_thread {
    bool started;               /* the first gap is drawn */
    int epoch;                  /* the phase these samples belong to */
    uint64_t rng;
    struct hb_hist h[2];
    struct hb_hist *divert;     /* also add here (hb_lat_divert) */
};

static __thread struct lat_thread lat_self;
static long long lat_every;
static bool lat_tsc;
static _Atomic int lat_epoch;
static _Atomic uint64_t lat_threads;        /* seeds each thread's gaps */
static pthread_key_t lat_key;
static pthread_mutex_t lat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hb_hist lat_all[2], lat_result[2];
static uint64_t lat_tick0, lat_overhead;
static double lat_ns0, lat_rate = 1.0;     /* ns per tick */

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t lat_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (lat_tsc) return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    char line[4096];
    bool constant = false, nonstop = false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    while (fgets(line, sizeof line, f) && !(constant && nonstop))
        if (!strncmp(line, "flags", 5)) {
            constant = strstr(line, " constant_tsc") != NULL;
            nonstop = strstr(line, " nonstop_tsc") != NULL;
        }
    fclose(f);
    return constant && nonstop;
#else
    return false;
#endif
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The merge of an exiting thread's samples. */
static void lat_thread_exit(void *arg)
{
    struct lat_thread *t = arg;
    pthread_mutex_lock(&lat_lock);
    if (t->epoch == atomic_load(&lat_epoch)) {
        hb_hist_merge(&lat_all[0], &t->h[0]);
        hb_hist_merge(&lat_all[1], &t->h[1]);
    }
    pthread_mutex_unlock(&lat_lock);
    t->epoch = -1;
}

void hb_lat_init(long long every)
{
    lat_every = every;
    if (!every) return;
    lat_tsc = tsc_invariant();
    pthread_key_create(&lat_key, lat_thread_exit);
    enum { READS = 1001 };
    static uint64_t d[READS];
    for (int k = 0; k < READS; k++) {
        uint64_t a = lat_clock();
        d[k] = lat_clock() - a;
    }
    qsort(d, READS, sizeof *d, cmp_u64);
    lat_overhead = d[READS / 2];
    lat_ns0 = mono_ns();
    lat_tick0 = lat_clock();
    if (lat_tsc) {                      /* a first rate, refined at every hb_lat_end() */
        struct timespec ts = { 0, 5000000 };
        nanosleep(&ts, NULL);
        hb_lat_end();
    }
}

/* Gaps uniform in 1..2N-1 (xorshift on the thread's own state, seeded by its serial number). */
static long next_gap(struct lat_thread *t)
{
    if (!lat_every) return __LONG_MAX__;
    if (lat_every == 1) return 1;
    t->rng ^= t->rng << 13; t->rng ^= t->rng >> 7; t->rng ^= t->rng << 17;
    return 1 + (long)(t->rng % (uint64_t)(2 * lat_every - 1));
}

/* Returns whether this call is timed (false for the thread's first, which draws the gap). */
static bool lat_start(int kind)
{
    struct lat_thread *t = &lat_self;
    if (!t->started) {
        t->started = true;
        t->rng = hb_mix(atomic_fetch_add_explicit(&lat_threads, 1, memory_order_relaxed)) | 1;
        t->epoch = -1;
        hb_lat_left[0] = next_gap(t);
        hb_lat_left[1] = next_gap(t);
        if (lat_every) pthread_setspecific(lat_key, t);
        return false;
    }
    hb_lat_left[kind] = next_gap(t);
    return lat_every != 0;
}

static void lat_add(int kind, uint64_t ticks)
{
    struct lat_thread *t = &lat_self;
    int epoch = atomic_load_explicit(&lat_epoch, memory_order_relaxed);
    if (t->epoch != epoch) {
        hb_hist_clear(&t->h[0]);
        hb_hist_clear(&t->h[1]);
        t->epoch = epoch;
    }
    hb_hist_add(&t->h[kind], ticks);
    if (t->divert) hb_hist_add(&t->divert[kind], ticks);
}

void *hb_lat_malloc(size_t n)
{
    if (!lat_start(HB_LAT_MALLOC)) return malloc(n);
    uint64_t a = lat_clock();
    void *p = malloc(n);
    lat_add(HB_LAT_MALLOC, lat_clock() - a);
    return p;
}

void hb_lat_free(void *p)
{
    if (!lat_start(HB_LAT_FREE)) {
        free(p);
        return;
    }
    uint64_t a = lat_clock();
    free(p);
    lat_add(HB_LAT_FREE, lat_clock() - a);
}

void hb_lat_divert(struct hb_hist *hist) { lat_self.divert = hist; }

void hb_lat_begin(void)
{
    if (!lat_every) return;
    pthread_mutex_lock(&lat_lock);
    atomic_fetch_add(&lat_epoch, 1);
    hb_hist_clear(&lat_all[0]);
    hb_hist_clear(&lat_all[1]);
    pthread_mutex_unlock(&lat_lock);
}

void hb_lat_end(void)
{
    if (!lat_every) return;
    if (lat_self.started) lat_thread_exit(&lat_self);
    pthread_mutex_lock(&lat_lock);
    memcpy(lat_result, lat_all, sizeof lat_result);
    pthread_mutex_unlock(&lat_lock);
    if (lat_tsc) {
        uint64_t ticks = lat_clock() - lat_tick0;
        if (ticks) lat_rate = (mono_ns() - lat_ns0) / (double)ticks;
    }
}

double hb_lat_ns_per_tick(void) { return lat_rate; }

void hb_lat_summary(struct hb_json *j, const char *key, const struct hb_hist *h)
{
    static const struct { const char *name; double q; } at[] = {
        { "p50_ns", 0.5 }, { "p90_ns", 0.9 }, { "p99_ns", 0.99 }, { "p999_ns", 0.999 },
    };
    hb_json_obj(j, key);
    hb_json_uint(j, "samples", h->n);
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        if (h->n) hb_json_real(j, at[k].name, (double)hb_hist_quantile(h, at[k].q) * lat_rate);
        else hb_json_null(j, at[k].name);
    }
    if (h->n) hb_json_real(j, "max_ns", (double)h->max * lat_rate);
    else hb_json_null(j, "max_ns");
    hb_json_end(j, '}');
}

void hb_lat_record(struct hb_json *j)
{
    if (!lat_every) return;
    hb_json_obj(j, "latency");
    hb_json_int(j, "sample_every", lat_every);
    hb_json_str(j, "clock", lat_tsc ? "rdtsc" : "clock_gettime");
    hb_json_real(j, "overhead_ns", (double)lat_overhead * lat_rate);
    hb_lat_summary(j, "malloc", &lat_result[HB_LAT_MALLOC]);
    hb_lat_summary(j, "free", &lat_result[HB_LAT_FREE]);
    hb_json_end(j, '}');
}
