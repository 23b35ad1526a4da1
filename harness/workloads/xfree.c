/* xfree.c — remote frees on their own (issue 18): T producers allocate blocks in batches and
 * hand each batch to their own consumer, which checks and frees the whole batch at once. So
 * every free is a free of a block another thread allocated, with as little else as possible
 * around it; the throughput is frees per second.
 *
 * --threads T runs 2T threads: producer i (thread i) and consumer i (thread T + i) form a
 * pair. A pair shares a ring of `depth` batch arrays allocated before the measured phase: the
 * producer fills the array of slot k with `batch` blocks and marks it full, the consumer
 * frees them and marks it empty again, so the hand-off allocates nothing.
 *
 * The defaults are issue 18's shallow shape (batches of 100, 4 in flight). Issue 34's deep
 * one, `--batch 4000 --depth 100 --min-size 64 --max-size 64` (the sweeps' xfree-deep), keeps
 * ~400,000 blocks in flight per pair: the producer-consumer pattern where allocators that
 * batch remote frees as messages (snmalloc) differ most from Hoard's per-block frees. */
#include <sched.h>
#include <stdlib.h>
#include "../hlbench.h"

const struct hb_param hb_xfree_params[] = {
    { "batches",  HB_INT, "20000", true,  "batches each producer allocates and hands over" },
    { "batch",    HB_INT, "100",   false, "blocks in a batch" },
    { "min_size", HB_INT, "8",     false, "smallest block, bytes" },
    { "max_size", HB_INT, "128",   false, "largest block, bytes" },
    { "depth",    HB_INT, "4",     false, "batches in flight per producer/consumer pair" },
    { NULL, 0, NULL, false, NULL },
};

struct xblock { void *p; size_t n; };

struct xslot {
    _Atomic int full;          /* 1: the producer filled it; 0: the consumer emptied it */
    struct xblock *b;          /* `batch` entries */
};

struct xpair {
    struct xslot *slot;        /* `depth` slots */
    char pad[64];              /* pairs' rings on separate lines */
};

struct xfree {
    struct xpair *pair;
    long long depth, batch, batches;
    uint64_t salt;             /* per run: blocks change threads */
};

static void wait_for(_Atomic int *flag, int value)
{
    while (atomic_load_explicit(flag, memory_order_acquire) != value) sched_yield();
}

static void producer(struct hb_run *r, struct xfree *X, int i)
{
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    struct xpair *P = &X->pair[i];
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    for (long long k = 0; k < X->batches; k++) {
        struct xslot *s = &P->slot[k % X->depth];
        wait_for(&s->full, 0);
        for (long long j = 0; j < X->batch; j++) {
            size_t n = (size_t)hb_range(&g, lo, hi);
            s->b[j] = (struct xblock){ hb_alloc(n, X->salt), n };
        }
        atomic_store_explicit(&s->full, 1, memory_order_release);
    }
}

static void consumer(struct hb_run *r, struct xfree *X, int i)
{
    struct xpair *P = &X->pair[i];
    for (long long k = 0; k < X->batches; k++) {
        struct xslot *s = &P->slot[k % X->depth];
        wait_for(&s->full, 1);
        for (long long j = 0; j < X->batch; j++) hb_release(s->b[j].p, s->b[j].n, X->salt);
        atomic_store_explicit(&s->full, 0, memory_order_release);
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(X->batches * X->batch));
}

static void xfree_thread(struct hb_run *r, int i, void *arg)
{
    if (i < r->threads) producer(r, arg, i);
    else consumer(r, arg, i - r->threads);
}

/* Per free, or null without libhoardlab's statistics. */
static void per_free(struct hb_run *r, const char *key, uint64_t count, unsigned long long frees)
{
    if (r->loaded && frees) hb_json_real(r->extra, key, (double)count / (double)frees);
    else hb_json_null(r->extra, key);
}

int hb_xfree(struct hb_run *r)
{
    struct xfree X = { .depth = hb_int(r, "depth"), .batch = hb_int(r, "batch"),
                       .batches = hb_int(r, "batches"), .salt = hb_mix(r->seed ^ 0xf4ee) };
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size") ||
        X.depth < 1 || X.batch < 1)
        hb_usage("xfree needs 1 <= min_size <= max_size, batch >= 1, depth >= 1");
    int T = r->threads;
    if (!(X.pair = calloc((size_t)T, sizeof *X.pair))) hb_fail("out of memory");
    for (int i = 0; i < T; i++) {
        if (!(X.pair[i].slot = calloc((size_t)X.depth, sizeof *X.pair[i].slot)))
            hb_fail("out of memory");
        for (long long k = 0; k < X.depth; k++)
            if (!(X.pair[i].slot[k].b = calloc((size_t)X.batch, sizeof(struct xblock))))
                hb_fail("out of memory");
    }
    hb_begin(r);
    hb_parallel(r, 2 * T, xfree_thread, &X);
    hb_end(r);
    unsigned long long frees = atomic_load(&r->ops);
    hb_json_int(r->extra, "producers", T);
    hb_json_int(r->extra, "consumers", T);
    hb_json_uint(r->extra, "frees", frees);
    if (r->loaded) {
        hb_json_uint(r->extra, "a_bytes", r->end.held_bytes_peak);
        hb_json_uint(r->extra, "u_bytes", r->end.in_use_peak);
        hb_json_uint(r->extra, "lock_acquisitions", r->end.lock_acquisitions -
                                                    r->base.lock_acquisitions);
        hb_json_uint(r->extra, "remote_frees", r->end.remote_frees - r->base.remote_frees);
    } else {
        hb_json_null(r->extra, "a_bytes");
        hb_json_null(r->extra, "u_bytes");
        hb_json_null(r->extra, "lock_acquisitions");
        hb_json_null(r->extra, "remote_frees");
    }
    per_free(r, "locks_per_free", r->end.lock_acquisitions - r->base.lock_acquisitions, frees);
    per_free(r, "cas_attempts_per_free", r->end.cas_attempts - r->base.cas_attempts, frees);
    per_free(r, "remote_fraction", r->end.remote_frees - r->base.remote_frees, frees);
    for (int i = 0; i < T; i++) {
        for (long long k = 0; k < X.depth; k++) free(X.pair[i].slot[k].b);
        free(X.pair[i].slot);
    }
    free(X.pair);
    return 0;
}
