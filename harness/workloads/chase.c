/* chase.c — a large, randomly accessed working set (issue 50): each thread allocates its share
 * of `nodes` small nodes (`size` bytes, 64 by default: ~190 MiB at the default count), links
 * them into one cycle in a random order drawn from --seed, then follows the cycle `laps`
 * times, reading and writing each node, as a pointer-chasing server does. Most visits miss
 * the TLB unless the nodes sit on huge pages, so the throughput (nodes visited per second)
 * and the record's huge_coverage say what huge-page awareness buys. Set-up (allocating and
 * linking) is outside the measured phase; after it the nodes are freed and, when hold_ms > 0,
 * the record's extra says what the process still holds hold_ms later (the drain's cost). */
#include <stdlib.h>
#include <time.h>
#include "../hlbench.h"

const struct hb_param hb_chase_params[] = {
    { "nodes",   HB_INT, "3000000", true,  "nodes in all (split among the threads)" },
    { "size",    HB_INT, "64",      false, "bytes per node (at least 16)" },
    { "laps",    HB_INT, "3",       false, "times each thread follows its whole cycle" },
    { "hold_ms", HB_INT, "0",       false, "after the drain, ms before RSS and A are read" },
    { NULL, 0, NULL, false, NULL }
};

struct node { struct node *next; uint64_t value; };

struct chase {
    long long per_thread, laps;
    size_t size;
    struct node **head;                 /* each thread's cycle */
    struct node ***all;                 /* each thread's nodes, to free them */
};

static void build(struct hb_run *r, struct chase *C, int i)
{
    long long n = C->per_thread;
    struct node **v = malloc((size_t)n * sizeof *v);
    if (!v) hb_fail("out of memory");
    for (long long k = 0; k < n; k++) {
        if (!(v[k] = hb_malloc(C->size))) hb_fail("malloc(%zu) returned NULL", C->size);
        v[k]->value = (uint64_t)k;
    }
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i + 5000);
    for (long long k = n - 1; k > 0; k--) {         /* Fisher-Yates: the visiting order */
        long long j = (long long)(hb_rand(&g) % (uint64_t)(k + 1));
        struct node *t = v[k]; v[k] = v[j]; v[j] = t;
    }
    for (long long k = 0; k < n; k++) v[k]->next = v[(k + 1) % n];
    C->head[i] = v[0];
    C->all[i] = v;
}

static void chase_thread(struct hb_run *r, int i, void *arg)
{
    struct chase *C = arg;
    struct node *p = C->head[i];
    uint64_t sum = 0;
    for (long long lap = 0; lap < C->laps; lap++)
        for (long long k = 0; k < C->per_thread; k++) {
            sum += p->value;
            p->value += 1;
            p = p->next;
        }
    if (p != C->head[i])
        hb_fail("chase: thread %d's cycle of %lld nodes did not close (allocator handed out a "
                "live node twice?)", i, C->per_thread);
    /* every node was visited laps times: the values rose by laps each */
    uint64_t n = (uint64_t)C->per_thread, L = (uint64_t)C->laps;
    if (sum != L * (n * (n - 1) / 2) + n * (L * (L - 1) / 2))
        hb_fail("chase: thread %d's nodes' values are not what it wrote", i);
    atomic_fetch_add(&r->ops, (unsigned long long)(C->laps * C->per_thread));
}

int hb_chase(struct hb_run *r)
{
    int T = r->threads;
    struct chase C = { .per_thread = hb_int(r, "nodes") / T, .laps = hb_int(r, "laps"),
                       .size = (size_t)hb_int(r, "size") };
    if (C.per_thread < 2 || hb_int(r, "size") < 16 || C.laps < 1 || hb_int(r, "hold_ms") < 0)
        hb_usage("chase needs nodes >= 2 x threads, size >= 16, laps >= 1, hold_ms >= 0");
    C.head = calloc((size_t)T, sizeof *C.head);
    C.all = calloc((size_t)T, sizeof *C.all);
    if (!C.head || !C.all) hb_fail("out of memory");
    for (int i = 0; i < T; i++) build(r, &C, i);    /* set-up, one thread after the other */
    hb_begin(r);
    hb_parallel(r, T, chase_thread, &C);
    hb_end(r);
    hb_json_uint(r->extra, "live_bytes", (unsigned long long)(C.per_thread * T) * C.size);
    for (int i = 0; i < T; i++) {                   /* the drain */
        for (long long k = 0; k < C.per_thread; k++) hb_free(C.all[i][k]);
        free(C.all[i]);
    }
    long hold = (long)hb_int(r, "hold_ms");
    if (hold > 0) {
        struct timespec ts = { hold / 1000, (hold % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    struct hoardlab_stats s;
    hb_json_int(r->extra, "drained_rss_kb", hb_rss_kb());
    if (hb_hoardlab_stats(&s)) hb_json_uint(r->extra, "drained_held_bytes", s.held_bytes);
    else hb_json_null(r->extra, "drained_held_bytes");
    free(C.head);
    free(C.all);
    return 0;
}
