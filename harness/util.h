/* util.h — the bottom of hlbench, which every other file may use and which uses nothing of
 * the harness: failing with a message, the clock, RSS, libhoardlab's statistics (found with
 * dlsym), random numbers, the JSON writer and the latency histogram.
 *
 * The harness's headers, bottom up, one per layer (tools/hoardlab_lib/layers/order.py
 * checks the order, README.md lists the files): util.h, topology.h, sample.h, run.h,
 * record.h, hlbench.h (the workloads' header and their list). Prototypes are grouped by the
 * file that defines them. */
#ifndef HB_UTIL_H
#define HB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hoardlab.h"

/* ---- util.c: failing, the clock, RSS, libhoardlab's statistics, signals --------------------- */

/* A failed check: one line "hlbench: ..." on stderr, exit status 1. */
_Noreturn void hb_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A bad combination of parameters: one line on stderr, exit status 2. */
_Noreturn void hb_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

double hb_now(void);                    /* CLOCK_MONOTONIC seconds */
void hb_sleep_until(double t);          /* until hb_now() reaches t */

long hb_rss_kb(void);                   /* resident set now, from /proc/self/statm */
long hb_peak_rss_kb(void);              /* VmHWM (else getrusage's maximum) */
int hb_peak_rss_reset(void);            /* forget VmHWM (Linux >= 4.0); -1 if refused */

/* Allocator statistics when libhoardlab is loaded: false (and *s untouched) otherwise. */
bool hb_hoardlab_stats(struct hoardlab_stats *s);
void hb_hoardlab_reset_peaks(void);
/* Bytes of free blocks held in the allocator's caches in front of its heaps (hoardlab's
 * TLABs, tcmalloc's thread caches), now; -1 when the allocator does not say. */
long long hb_cache_bytes(void);
const char *hb_hoardlab_strategy(void); /* the active strategy's name, NULL without it */
/* The allocator's explicit call to give free memory back now, found with dlsym: hoardlab's
 * hoardlab_collect, mimalloc's mi_collect(true), jemalloc's mallctl("arena.<all>.purge"),
 * gperftools' MallocExtension_ReleaseFreeMemory, glibc's malloc_trim(0) (only when malloc is
 * glibc's). hb_collect_find looks once, before the threads start, and returns the call's
 * name (NULL: the allocator has none); hb_collect then makes it (nothing if none). */
const char *hb_collect_find(void);
void hb_collect(void);

/* Install handler for SIGUSR1 (SA_RESTART), keeping the old action in *old; hb_fail() if the
 * system refuses. The workload restores *old with sigaction when it ends. */
struct sigaction;
void hb_on_sigusr1(void (*handler)(int), struct sigaction *old);

/* ---- random numbers (inline) ---------------------------------------------------------------- */

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

/* ---- json.c: a JSON writer ------------------------------------------------------------------ */

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

/* ---- histogram.c: latency histograms -------------------------------------------------------- */

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

/* ---- census.c: the false-sharing census from outside the allocator ------------------------ */

/* One block a workload received: its address and size, the thread it was handed to, and the
 * ticks (of one counter the workload advances) after its malloc returned and before its free
 * (UINT64_MAX: never freed in the phase). */
struct hb_census_block { uintptr_t addr; size_t size; uint64_t from, to; uint32_t holder; };
/* Blocks handed to a thread while another holder's block was live on a cache line they touch,
 * and the distinct lines where that happened; -1 when out of memory. */
int hb_census_count(const struct hb_census_block *b, size_t n, size_t line_size,
                    unsigned long long *false_blocks, unsigned long long *false_lines);

#endif
