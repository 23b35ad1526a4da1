/* hlbench.h — the harness's one internal header: the workload table, the run context a
 * workload receives, and the helpers every workload shares (threads, random numbers, block
 * stamps, JSON output, allocator statistics). Prototypes are grouped by the file that
 * defines them.
 *
 * Glossary
 *   workload   one row of the table: name, summary, parameters with defaults, run().
 *   parameter  a workload knob (`--rounds 100`); `scaled` ones are multiplied by --scale.
 *   run        one execution of a workload, giving one JSON record on stdout.
 *   stamp      a value written into a block when it is handed out and checked before it is
 *              freed: an allocator that hands out overlapping blocks fails the run.
 */
#ifndef HLBENCH_H
#define HLBENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "hoardlab.h"

#define HB_MAX_PARAMS 16

/* ---- the workload table (hlbench.c lists every row) ------------------------------------- */

enum hb_kind { HB_INT, HB_REAL, HB_STR };

struct hb_param {
    const char *name;          /* option --name (a '-' may replace '_'), key in "params" */
    enum hb_kind kind;
    const char *def;           /* the papers' value, as text */
    bool scaled;               /* multiplied by --scale (the amount of work), at least 1 */
    const char *help;
};

struct hb_run;

struct hb_workload {
    const char *name, *summary;
    const struct hb_param *params;     /* terminated by a row with name NULL */
    int min_threads;                   /* --threads below this is a usage error */
    /* 0 on success; on a failed check hb_fail() exits with status 1 instead. */
    int (*run)(struct hb_run *r);
};

extern const struct hb_workload hb_workloads[];   /* terminated by a row with name NULL */

/* ---- a JSON writer (json.c) -------------------------------------------------------------- */

struct hb_json {
    char *buf;
    size_t len, cap;
    int depth;
    bool first[32];            /* no comma needed yet at this depth */
};

void hb_json_init(struct hb_json *j);
void hb_json_free(struct hb_json *j);
/* key is NULL inside arrays and at top level. */
void hb_json_obj(struct hb_json *j, const char *key);   /* opens { */
void hb_json_arr(struct hb_json *j, const char *key);   /* opens [ */
void hb_json_end(struct hb_json *j, char close);        /* '}' or ']' */
void hb_json_int(struct hb_json *j, const char *key, long long v);
void hb_json_uint(struct hb_json *j, const char *key, unsigned long long v);
void hb_json_real(struct hb_json *j, const char *key, double v);  /* NaN/inf -> null */
void hb_json_str(struct hb_json *j, const char *key, const char *s); /* NULL -> null */
void hb_json_bool(struct hb_json *j, const char *key, bool v);
void hb_json_null(struct hb_json *j, const char *key);
void hb_json_raw(struct hb_json *j, const char *key, const char *text);

/* ---- the run context (hlbench.c; helpers in support.c) ---------------------------------- */

union hb_value { long long i; double d; const char *s; };

struct hb_run {
    const struct hb_workload *w;
    union hb_value val[HB_MAX_PARAMS];  /* effective values, in the order of w->params */
    int threads;
    uint64_t seed;
    double scale;
    bool pin;
    int spawn_first;                    /* --spawn-first: threads created and joined first */
    const char *label;                  /* --label */
    int cores, cache_line;              /* the machine, as the record reports it */
    int repeat;                         /* index of this run among --repeat N */
    _Atomic unsigned long long ops;     /* the workload adds its operations here */
    struct hb_json *extra;              /* the record's "extra" object, open for keys */
    double t0, t1;                      /* measured phase: hb_begin() .. hb_end() */
    bool ended;
    struct hoardlab_stats base, end;    /* libhoardlab's counters at hb_begin(), hb_end() */
    bool loaded;                        /* libhoardlab answered at hb_end() */
};

long long hb_int(const struct hb_run *r, const char *name);
double hb_real(const struct hb_run *r, const char *name);
const char *hb_str(const struct hb_run *r, const char *name);

/* The measured phase. The driver calls hb_begin() before run() and hb_end() after it unless
 * the workload did; a workload with a set-up phase calls hb_begin() again after it (this also
 * forgets libhoardlab's peaks, so U and A describe the measured phase). */
void hb_begin(struct hb_run *r);
/* The record's head, from `{` through "params" (what a record says before its results); a
 * workload that must write its own record (signal-malloc's watchdog) starts with it. */
void hb_record_head(struct hb_json *j, const struct hb_run *r);
void hb_end(struct hb_run *r);
double hb_now(void);                    /* CLOCK_MONOTONIC seconds */

/* Run fn(r, i, arg) on n threads (i = 0..n-1), started together behind a barrier, each
 * pinned to a core when --pin; returns when all have finished. */
void hb_parallel(struct hb_run *r, int n, void (*fn)(struct hb_run *r, int i, void *arg),
                 void *arg);
/* Pin the calling thread for thread index i (no-op without --pin). */
void hb_pin_self(const struct hb_run *r, int i);

/* Allocator statistics when libhoardlab is loaded: false (and *s untouched) otherwise. */
bool hb_hoardlab_stats(struct hoardlab_stats *s);
void hb_hoardlab_reset_peaks(void);
long hb_rss_kb(void);                   /* resident set now, from /proc/self/statm */

/* One JSON object per round of a blowup workload: live bytes, os bytes (A now, or null),
 * RSS. The caller has opened an array. */
void hb_round_record(struct hb_json *j, int round, size_t live_bytes);

/* ---- random numbers (inline) and stamps (support.c) ------------------------------------- */

static inline uint64_t hb_mix(uint64_t x)      /* splitmix64 finaliser */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct hb_rng { uint64_t s; };

static inline void hb_rng_seed(struct hb_rng *g, uint64_t seed, uint64_t stream)
{
    g->s = hb_mix(seed ^ hb_mix(stream + 1));
}

static inline uint64_t hb_rand(struct hb_rng *g)  /* xorshift64* */
{
    g->s ^= g->s >> 12; g->s ^= g->s << 25; g->s ^= g->s >> 27;
    return g->s * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi]. */
static inline uint64_t hb_range(struct hb_rng *g, uint64_t lo, uint64_t hi)
{
    return lo + hb_rand(g) % (hi - lo + 1);
}

/* Stamps: a block gets values derived from its address and a salt (all of a small block, both
 * ends of a large one); hb_check() verifies them. A salt may be per thread (blocks one thread
 * owns) or per run (blocks handed between threads). */
_Noreturn void hb_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A bad combination of parameters: one line on stderr, exit status 2. */
_Noreturn void hb_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hb_stamp(void *p, size_t n, uint64_t salt);
void hb_check(const void *p, size_t n, uint64_t salt);

/* Allocate n bytes and stamp them; hb_fail() on NULL. */
void *hb_alloc(size_t n, uint64_t salt);
/* Check the stamp and free. */
void hb_release(void *p, size_t n, uint64_t salt);
/* Install handler for SIGUSR1 (SA_RESTART), keeping the old action in *old; hb_fail() if the
 * system refuses. The workload restores *old with sigaction when it ends. */
struct sigaction;
void hb_on_sigusr1(void (*handler)(int), struct sigaction *old);
/* A live set: n stamped blocks of random sizes in [lo, hi] (calloc'd array; the caller
 * releases the blocks and frees it). */
struct hb_block { void *p; size_t n; };
struct hb_block *hb_live_set(struct hb_rng *g, long long n, uint64_t lo, uint64_t hi,
                             uint64_t salt);

/* ---- latency histograms (histogram.c) ---------------------------------------------------- */

/* Values below 2*HB_HIST_SUB exact; each power of two above split into HB_HIST_SUB buckets;
 * values from HB_HIST_LIMIT up share the last bucket (the exact max is kept apart). */
#define HB_HIST_SUB 8u
#define HB_HIST_LIMIT (1ull << 48)
#define HB_HIST_BUCKETS ((48u - 2u) * HB_HIST_SUB)

struct hb_hist {
    uint64_t n, max;
    uint64_t count[HB_HIST_BUCKETS];
};

unsigned hb_hist_bucket(uint64_t v);
uint64_t hb_hist_lower(unsigned b);     /* smallest value of bucket b */
uint64_t hb_hist_upper(unsigned b);     /* largest value of bucket b */
void hb_hist_clear(struct hb_hist *h);
void hb_hist_add(struct hb_hist *h, uint64_t v);
void hb_hist_merge(struct hb_hist *into, const struct hb_hist *h);
uint64_t hb_hist_quantile(const struct hb_hist *h, double q);   /* 0 when empty */

/* ---- latency sampling of malloc and free (latency.c) ------------------------------------- */

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

/* ---- memory over time (series.c) --------------------------------------------------------- */

/* A sampler thread, started once, records from hb_begin() to hb_end() every interval: A,
 * U, libhoardlab's own bytes, and the smaps_rollup split of the resident set. */
enum { HB_SER_HELD, HB_SER_IN_USE, HB_SER_SELF, HB_SER_RSS, HB_SER_PRIVATE_DIRTY,
       HB_SER_LAZYFREE, HB_SER_ANONYMOUS, HB_SER_VALUES };
struct hb_series_row { double t_s; long long v[HB_SER_VALUES]; };   /* -1: unknown (null) */
void hb_series_init(double interval_s); /* --sample-interval (0: off); before the runs */
void hb_series_begin(void);             /* hb_begin(): the row of t = 0, before t0 is set */
void hb_series_start(double t0);        /* hb_begin(): t0 set, the sampler runs */
void hb_series_end(double t1);
void hb_series_record(struct hb_json *j);   /* the record's "series" key (none when off) */
/* The rows of the last run (after hb_series_end()), the final one taken at the end. */
int hb_series_rows(const struct hb_series_row **rows);

/* ---- workloads (workloads/<family>.c) ---------------------------------------------------- */

/* The one list of workloads, in the order of `hlbench --list`:
 *   X(name, function, min_threads, summary)
 * A workload is `int function(struct hb_run *)` with its parameter table `function_params`,
 * defined in workloads/<family>.c; the table in hlbench.c, the declarations below and the
 * tests' list of workloads (tests/harness/meson.build reads the names here) come from it. */
#define HB_WORKLOADS(X)                                                                        \
  X("threadtest", hb_threadtest, 1, "t threads each allocate N/t blocks of s bytes, then "      \
    "free them all, for I rounds (Hoard)")                                                     \
  X("shbench", hb_shbench, 1, "each thread allocates and frees random-sized blocks in "         \
    "random order; many stay live (SmartHeap)")                                                \
  X("larson", hb_larson, 1, "server simulation: threads replace random slots of their table "  \
    "with new random-sized blocks; successor threads inherit the table (Larson)")              \
  X("larson-replace", hb_larson_replace, 1, "larson as Larson's program runs it: each thread "  \
    "creates its successor and exits; blocks 8..1000 B, 5000 per thread")                     \
  X("active-false", hb_active_false, 1, "each thread allocates a small object, writes it "      \
    "many times, frees it (actively induced false sharing)")                                   \
  X("passive-false", hb_passive_false, 1, "one thread hands a small object to each thread, "    \
    "which frees it, then runs active-false (passively induced false sharing)")               \
  X("linux-scalability", hb_linux_scalability, 1, "each thread does malloc/free pairs of s "    \
    "bytes in a tight loop; samples latency")                                                  \
  X("prodcons", hb_prodcons, 1, "one producer allocates tasks (index block, task, queue "       \
    "node); consumers do local work and free them (Michael)")                                  \
  X("blowup-prodcons", hb_blowup_prodcons, 2, "producers allocate K blocks a round, their "     \
    "consumers free them; memory held vs live per round")                                      \
  X("blowup-roundrobin", hb_blowup_roundrobin, 1, "round k: thread k mod P allocates K "        \
    "blocks, thread k+1 mod P frees them (K live); memory held vs live per round")            \
  X("ucpp-random", hb_ucpp_random, 1, "threads allocate and free batches of random sizes "      \
    "8..1024 (uC++ report: free-list lock contention)")                                        \
  X("ucpp-unique", hb_ucpp_unique, 1, "each thread allocates only its own size class, so no "   \
    "two threads share a free list (uC++ report)")                                             \
  X("realloc-churn", hb_realloc_churn, 1, "each thread grows and shrinks many buffers with "     \
    "realloc, checking their contents survive")                                                \
  X("replay", hb_replay, 1, "replays a trace recorded with HOARD_TRACE=path (one thread, or "  \
    "the original threads); reports U, A and A/U")                                              \
  X("xfree", hb_xfree, 1, "T producers allocate batches of blocks, T consumers (2T threads) "   \
    "free each batch at once: remote frees per second (issue 18)")                             \
  X("stall", hb_stall, 2, "thread 0 is stopped for delay_us inside malloc/free again and "     \
    "again; the other threads' throughput delayed / undelayed (issue 11)")                     \
  X("largebuf", hb_largebuf, 1, "each thread keeps a score of MiB-sized buffers and "        \
    "replaces one at a time, zero-initialised (issue 24: large-object reuse)")                \
  X("signal-malloc", hb_signal_malloc, 1, "a signal handler mallocs and frees while threads "  \
    "allocate; a watchdog reports a deadlock instead of hanging (Michael)")                    \
  X("phased", hb_phased, 1, "server-like: sizes and lifetimes from a distribution; steady, "   \
    "spike, drain, steady phases; memory over time (issue 28)")                                \
  X("migrate", hb_migrate, 1, "threads replace random blocks of a live set and move to the "  \
    "next CPU every N operations; A and RSS per epoch (issue 27, Hoard #103)")

#define HB_DECLARE(name, fn, min_threads, summary)                                             \
    int fn(struct hb_run *r);                                                                  \
    extern const struct hb_param fn##_params[];
HB_WORKLOADS(HB_DECLARE)
#undef HB_DECLARE

#endif
