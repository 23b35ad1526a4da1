/* run.c — the run machinery every workload uses: the measured phase (which drives the
 * samplers and reads libhoardlab's counters at its ends), threads started together behind a
 * barrier and pinned for --pin, and --spawn-first's threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"
#include "topology.h"
#include "huge.h"

/* ---- the measured phase --------------------------------------------------------------------- */

void hb_begin(struct hb_run *r)
{
    hb_hoardlab_reset_peaks();
    hb_hoardlab_stats(&r->base);
    r->ended = false;
    hb_lat_begin();
    hb_series_begin();
    r->t0 = hb_now();
    hb_series_start(r->t0);
}

void hb_end(struct hb_run *r)
{
    if (r->ended) return;
    r->t1 = hb_now();
    r->ended = true;
    hb_series_end(r->t1);
    hb_lat_end();
    r->loaded = hb_hoardlab_stats(&r->end);
    long rss;
    r->huge_coverage = hb_huge_coverage(&r->huge_kb, &rss);   /* the working set still live */
}

/* ---- threads -------------------------------------------------------------------------------- */

void hb_pin_self(const struct hb_run *r, int i)
{
    if (r->pin) hb_topology_pin(i);
}

struct worker {
    struct hb_run *r;
    int i;
    void (*fn)(struct hb_run *, int, void *);
    void *arg;
    pthread_barrier_t *start;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    hb_pin_self(w->r, w->i);
    pthread_barrier_wait(w->start);
    w->fn(w->r, w->i, w->arg);
    return NULL;
}

void hb_parallel(struct hb_run *r, int n, void (*fn)(struct hb_run *r, int i, void *arg),
                 void *arg)
{
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    struct worker *w = calloc((size_t)n, sizeof *w);
    pthread_barrier_t start;
    if (!tid || !w) hb_fail("out of memory starting %d threads", n);
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        w[i] = (struct worker){ r, i, fn, arg, &start };
        int e = pthread_create(&tid[i], NULL, worker_main, &w[i]);
        if (e) hb_fail("pthread_create: %s", strerror(e));
    }
    for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&start);
    free(w);
    free(tid);
}

/* ---- --spawn-first -------------------------------------------------------------------------- */

/* Michael 2004 §4.2.1: allocators that skip synchronisation until the process has created a
 * thread would otherwise time their single-threaded shortcut; one thread created and exited
 * before timing makes a 1-thread run measure contention-free latency under multithreading. */
static void *spawn_first_main(void *arg)
{
    (void)arg;
    void *p = malloc(64);
    if (!p) hb_fail("malloc(64) returned NULL in --spawn-first's thread");
    memset(p, 0, 64);
    free(p);
    return NULL;
}

void hb_spawn_first(long long n)
{
    for (long long i = 0; i < n; i++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, spawn_first_main, NULL);
        if (e) hb_fail("pthread_create (--spawn-first): %s", strerror(e));
        pthread_join(t, NULL);
    }
}
