/* run.h — the run machinery: the row type of a workload and the run context it receives
 * (run.c), its parameters (params.c), and the stamped blocks the workloads allocate
 * (blocks.c). Above sample.h and topology.h; below the record and the workloads.
 *
 * Glossary
 *   workload   one row of the table: name, summary, parameters with defaults, run().
 *   parameter  a workload knob (`--rounds 100`); `scaled` ones are multiplied by --scale.
 *   run        one execution of a workload, giving one JSON record on stdout.
 *   stamp      a value written into a block when it is handed out and checked before it is
 *              freed: an allocator that hands out overlapping blocks fails the run.
 */
#ifndef HB_RUN_H
#define HB_RUN_H

#include <stdatomic.h>
#include "sample.h"

#define HB_MAX_PARAMS 24

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
    double huge_coverage;               /* at hb_end(): AnonHugePages / Rss, -1 unknown */
    long huge_kb;                       /* at hb_end(): AnonHugePages in kB, -1 unknown */
};

/* ---- run.c: the measured phase, threads, pinning -------------------------------------------- */

/* The measured phase. The driver calls hb_begin() before run() and hb_end() after it unless
 * the workload did; a workload with a set-up phase calls hb_begin() again after it (this also
 * forgets libhoardlab's peaks, so U and A describe the measured phase). */
void hb_begin(struct hb_run *r);
void hb_end(struct hb_run *r);

/* Run fn(r, i, arg) on n threads (i = 0..n-1), started together behind a barrier, each
 * pinned to a core when --pin; returns when all have finished. */
void hb_parallel(struct hb_run *r, int n, void (*fn)(struct hb_run *r, int i, void *arg),
                 void *arg);
/* Pin the calling thread for thread index i (no-op without --pin). */
void hb_pin_self(const struct hb_run *r, int i);
/* --spawn-first: create and join n threads, one after another, each one malloc and free. */
void hb_spawn_first(long long n);

/* ---- params.c: the parameters --------------------------------------------------------------- */

/* A parameter's effective value; asking for one the workload has not (or of another kind) is
 * a bug in the workload: a message and abort(). */
long long hb_int(const struct hb_run *r, const char *name);
double hb_real(const struct hb_run *r, const char *name);
const char *hb_str(const struct hb_run *r, const char *name);

int hb_param_index(const struct hb_workload *w, const char *name);   /* -1: none */
/* Set parameter i from text; false when it is not a non-negative number of its kind. */
bool hb_param_set(struct hb_run *r, int i, const char *text);
void hb_params_scale(struct hb_run *r); /* --scale: scaled parameters, integers at least 1 */
bool hb_parse_int(const char *s, long long *out);   /* a whole non-negative number */
bool hb_parse_real(const char *s, double *out);     /* a finite non-negative number */

/* ---- blocks.c: stamped blocks --------------------------------------------------------------- */

/* Stamps: a block gets values derived from its address and a salt (all of a small block, both
 * ends of a large one); hb_check() verifies them. A salt may be per thread (blocks one thread
 * owns) or per run (blocks handed between threads). */
void hb_stamp(void *p, size_t n, uint64_t salt);
void hb_check(const void *p, size_t n, uint64_t salt);

/* Allocate n bytes and stamp them; hb_fail() on NULL. */
void *hb_alloc(size_t n, uint64_t salt);
/* Check the stamp and free. */
void hb_release(void *p, size_t n, uint64_t salt);
/* A live set: n stamped blocks of random sizes in [lo, hi] (calloc'd array; the caller
 * releases the blocks and frees it). */
struct hb_block { void *p; size_t n; };
struct hb_block *hb_live_set(struct hb_rng *g, long long n, uint64_t lo, uint64_t hi,
                             uint64_t salt);

#endif
