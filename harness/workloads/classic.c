/* classic.c — the allocation-rate workloads of the Hoard paper (§5.2) and Michael's PLDI
 * 2004 evaluation (§4.1): threadtest, shbench, linux-scalability (larson and larson-replace,
 * the server simulation, are larson.c's). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../hlbench.h"

static uint64_t thread_salt(const struct hb_run *r, int i)
{
    return hb_mix(r->seed * 1000003u + (uint64_t)i);
}

/* ---- threadtest: N/t blocks of s bytes per thread, allocated then freed in order, I rounds -- */

const struct hb_param hb_threadtest_params[] = {
    { "blocks", HB_INT, "100000", false, "N: blocks in all threads together (N/t each)" },
    { "size",   HB_INT, "8",      false, "s: bytes per block" },
    { "rounds", HB_INT, "100",    true,  "I: allocate-all / free-all rounds" },
    { "cpus",   HB_INT, "0",      false, "run all t threads on the first K CPUs the process "
                                         "may use, free to move among them (0: all; issue 37: "
                                         "many more threads than CPUs)" },
    { "held",   HB_INT, "0",      false, "1: after the last round the threads wait for each "
                                         "other and thread 0 records the bytes the "
                                         "allocator's caches hold (extra.cache_bytes)" },
    { NULL, 0, NULL, false, NULL },
};

struct threadtest { cpu_set_t *cpus; pthread_barrier_t done; };

/* cpus = K: the set of the process's first K allowed CPUs, which each thread takes on. */
static void threadtest_thread(struct hb_run *r, int i, void *arg)
{
    struct threadtest *T = arg;
    if (T->cpus && sched_setaffinity(0, sizeof(cpu_set_t), T->cpus))
        hb_fail("threadtest: sched_setaffinity: %s", strerror(errno));
    long long n = hb_int(r, "blocks") / r->threads, rounds = hb_int(r, "rounds");
    size_t size = (size_t)hb_int(r, "size");
    uint64_t salt = thread_salt(r, i);
    if (n < 1) n = 1;
    void **b = malloc((size_t)n * sizeof *b);
    if (!b) hb_fail("out of memory");
    for (long long k = 0; k < rounds; k++) {
        for (long long j = 0; j < n; j++) b[j] = hb_alloc(size, salt);
        for (long long j = 0; j < n; j++) hb_release(b[j], size, salt);
    }
    if (hb_int(r, "held")) {             /* every thread's cache as its last round left it */
        pthread_barrier_wait(&T->done);
        if (i == 0) hb_json_int(r->extra, "cache_bytes", hb_cache_bytes());
        pthread_barrier_wait(&T->done);
    }
    free(b);
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * n * rounds));
}

int hb_threadtest(struct hb_run *r)
{
    long long want = hb_int(r, "cpus");
    cpu_set_t all, set;
    CPU_ZERO(&set);
    if (want < 0) hb_usage("threadtest needs cpus >= 0");
    if (sched_getaffinity(0, sizeof all, &all)) hb_fail("sched_getaffinity: %s", strerror(errno));
    if (want > 0) {
        if (want > CPU_COUNT(&all))
            hb_usage("threadtest: cpus = %lld, but the process may run on %d CPUs", want,
                     CPU_COUNT(&all));
        for (int c = 0, n = 0; n < want; c++)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &set);
                n++;
            }
    }
    hb_json_int(r->extra, "cpus_used", want > 0 ? want : CPU_COUNT(&all));
    struct threadtest T = { .cpus = want > 0 ? &set : NULL };
    pthread_barrier_init(&T.done, NULL, (unsigned)r->threads);
    hb_parallel(r, r->threads, threadtest_thread, &T);
    pthread_barrier_destroy(&T.done);
    return 0;
}

/* ---- shbench: random sizes, random order, a live set that stays ------------------------------ */

const struct hb_param hb_shbench_params[] = {
    { "allocs",   HB_INT, "50000000", true,  "blocks allocated in all threads together" },
    { "slots",    HB_INT, "10000",    false, "live-set slots in all threads together" },
    { "min_size", HB_INT, "8",        false, "smallest block, bytes" },
    { "max_size", HB_INT, "100",      false, "largest block, bytes" },
    { NULL, 0, NULL, false, NULL },
};

struct slot { void *p; size_t n; };
struct slots { struct slot *s; long long n; };

static void shbench_thread(struct hb_run *r, int i, void *arg)
{
    struct slots *mine = &((struct slots *)arg)[i];
    long long allocs = hb_int(r, "allocs") / r->threads, done = 0, frees = 0;
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    uint64_t salt = thread_salt(r, i);
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    /* A random slot each step: free what it holds, or fill it. Blocks die in random order,
     * about half the slots stay live, and those still live at the end stay live. */
    while (done < allocs) {
        struct slot *s = &mine->s[hb_rand(&g) % (uint64_t)mine->n];
        if (s->p) {
            hb_release(s->p, s->n, salt);
            s->p = NULL;
            frees++;
        } else {
            s->n = (size_t)hb_range(&g, lo, hi);
            s->p = hb_alloc(s->n, salt);
            done++;
        }
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(done + frees));
}

int hb_shbench(struct hb_run *r)
{
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size"))
        hb_usage("shbench needs 1 <= min_size <= max_size");
    long long per = hb_int(r, "slots") / r->threads;
    struct slots *all = calloc((size_t)r->threads, sizeof *all);
    for (int i = 0; all && i < r->threads; i++) {
        all[i].n = per < 1 ? 1 : per;
        if (!(all[i].s = calloc((size_t)all[i].n, sizeof(struct slot)))) hb_fail("out of memory");
    }
    if (!all) hb_fail("out of memory");
    hb_begin(r);
    hb_parallel(r, r->threads, shbench_thread, all);
    hb_end(r);
    long long live = 0;
    for (int i = 0; i < r->threads; i++) {
        for (long long k = 0; k < all[i].n; k++)
            if (all[i].s[k].p) {
                hb_release(all[i].s[k].p, all[i].s[k].n, thread_salt(r, i));
                live++;
            }
        free(all[i].s);
    }
    free(all);
    hb_json_int(r->extra, "live_at_end", live);
    return 0;
}

/* ---- linux-scalability: malloc/free pairs in a tight loop; sampled latency ------------------ */

const struct hb_param hb_linux_scalability_params[] = {
    { "pairs",  HB_INT, "10000000", true,  "malloc/free pairs per thread" },
    { "size",   HB_INT, "8",        false, "bytes per block" },
    { "sample", HB_INT, "64",       false, "time one pair in this many (0: none)" },
    { NULL, 0, NULL, false, NULL },
};

struct samples { uint32_t *ns; long long n; };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void scalability_thread(struct hb_run *r, int i, void *arg)
{
    struct samples *smp = &((struct samples *)arg)[i];
    long long pairs = hb_int(r, "pairs"), every = hb_int(r, "sample");
    size_t size = (size_t)hb_int(r, "size");
    uint64_t salt = thread_salt(r, i);
    for (long long k = 0; k < pairs; k++) {
        if (every && k % every == 0) {
            uint64_t t = now_ns();
            void *p = hb_alloc(size, salt);
            hb_release(p, size, salt);
            uint64_t d = now_ns() - t;
            smp->ns[smp->n++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        } else {
            hb_release(hb_alloc(size, salt), size, salt);
        }
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * pairs));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int hb_linux_scalability(struct hb_run *r)
{
    long long pairs = hb_int(r, "pairs"), every = hb_int(r, "sample");
    long long cap = every ? pairs / every + 1 : 0;
    struct samples *smp = calloc((size_t)r->threads, sizeof *smp);
    uint32_t *all = calloc((size_t)(cap * r->threads + 1), sizeof *all);
    if (!smp || !all) hb_fail("out of memory");
    for (int i = 0; i < r->threads; i++) smp[i].ns = all + cap * i;
    hb_begin(r);
    hb_parallel(r, r->threads, scalability_thread, smp);
    hb_end(r);
    long long n = 0;
    for (int i = 0; i < r->threads; i++) {
        memmove(all + n, smp[i].ns, (size_t)smp[i].n * sizeof *all);
        n += smp[i].n;
    }
    if (n) {
        qsort(all, (size_t)n, sizeof *all, cmp_u32);
        hb_json_obj(r->extra, "latency_ns");
        hb_json_str(r->extra, "what", "one malloc + free pair, including the stamp");
        hb_json_int(r->extra, "samples", n);
        hb_json_int(r->extra, "p50", all[n / 2]);
        hb_json_int(r->extra, "p90", all[n * 9 / 10]);
        hb_json_int(r->extra, "p99", all[n * 99 / 100]);
        hb_json_int(r->extra, "max", all[n - 1]);
        hb_json_end(r->extra, '}');
    }
    free(all);
    free(smp);
    return 0;
}
