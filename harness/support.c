/* support.c — what every workload shares: the measured phase, threads behind a barrier,
 * block stamps, libhoardlab's statistics found with dlsym, RSS. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hlbench.h"

double hb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void say(const char *fmt, va_list ap)
{
    fputs("hlbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

_Noreturn void hb_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    fflush(stdout);
    exit(1);
}

_Noreturn void hb_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    exit(2);
}

/* ---- libhoardlab, when it is loaded ------------------------------------------------------- */

bool hb_hoardlab_stats(struct hoardlab_stats *s)
{
    static void (*fn)(struct hoardlab_stats *);
    static bool looked;
    if (!looked) {
        *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_stats");
        looked = true;
    }
    if (!fn) return false;
    fn(s);
    return true;
}

void hb_hoardlab_reset_peaks(void)
{
    void (*fn)(void);
    *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_stats_reset_peaks");
    if (fn) fn();
}

long hb_rss_kb(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void hb_round_record(struct hb_json *j, int round, size_t live_bytes)
{
    struct hoardlab_stats s;
    hb_json_obj(j, NULL);
    hb_json_int(j, "round", round);
    hb_json_uint(j, "live_bytes", live_bytes);
    if (hb_hoardlab_stats(&s)) hb_json_uint(j, "os_bytes", s.os_bytes);
    else hb_json_null(j, "os_bytes");
    hb_json_int(j, "rss_kb", hb_rss_kb());
    hb_json_end(j, '}');
}

/* ---- the measured phase -------------------------------------------------------------------- */

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
}

/* ---- threads --------------------------------------------------------------------------------- */

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

/* ---- stamps ---------------------------------------------------------------------------------- */

static inline uint64_t stamp_of(const void *p, uint64_t salt)
{
    return hb_mix((uint64_t)(uintptr_t)p ^ salt);
}

/* Blocks up to STAMP_ALL bytes are stamped whole, larger ones at both ends: word k holds
 * v + k * odd, the last (partial) word likewise, so any overlap with a neighbour shows. */
#define STAMP_ALL 64

static inline uint64_t word(uint64_t v, size_t k) { return v + k * 0x9e3779b97f4a7c15ull; }

void hb_stamp(void *p, size_t n, uint64_t salt)
{
    uint64_t v = stamp_of(p, salt), w;
    char *c = p;
    for (size_t k = 0; k * 8 < n; k++) {
        if (n > STAMP_ALL && k == 1) k = (n - 1) / 8;       /* skip to the last word */
        w = word(v, k);
        memcpy(c + k * 8, &w, n - k * 8 < 8 ? n - k * 8 : 8);
    }
}

void hb_check(const void *p, size_t n, uint64_t salt)
{
    uint64_t v = stamp_of(p, salt), w;
    const char *c = p;
    for (size_t k = 0; k * 8 < n; k++) {
        if (n > STAMP_ALL && k == 1) k = (n - 1) / 8;
        w = word(v, k);
        if (memcmp(c + k * 8, &w, n - k * 8 < 8 ? n - k * 8 : 8) != 0)
            hb_fail("block %p of %zu bytes lost its stamp at offset %zu: the allocator handed "
                    "out memory that another live block uses", p, n, k * 8);
    }
}

void *hb_alloc(size_t n, uint64_t salt)
{
    void *p = hb_malloc(n);
    if (!p) hb_fail("malloc(%zu) returned NULL", n);
    hb_stamp(p, n, salt);
    return p;
}

void hb_release(void *p, size_t n, uint64_t salt)
{
    hb_check(p, n, salt);
    hb_free(p);
}

void hb_on_sigusr1(void (*handler)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, old)) hb_fail("sigaction: %s", strerror(errno));
}

struct hb_block *hb_live_set(struct hb_rng *g, long long n, uint64_t lo, uint64_t hi,
                             uint64_t salt)
{
    struct hb_block *live = calloc((size_t)n, sizeof *live);
    if (!live) hb_fail("out of memory");
    for (long long k = 0; k < n; k++) {
        live[k].n = (size_t)hb_range(g, lo, hi);
        live[k].p = hb_alloc(live[k].n, salt);
    }
    return live;
}
