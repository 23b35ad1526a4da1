/* false.c — the false-sharing workloads of the Hoard paper (§5.3), with Michael's parameters
 * (10,000 objects of 8 bytes per thread, each byte written 1,000 times). The writes are
 * volatile so the compiler keeps every one: the cost of a falsely shared line is the point. */
#include <stdlib.h>
#include "../hlbench.h"

#define FALSE_PARAMS                                                                          \
    { "objects", HB_INT, "10000", true,  "objects each thread allocates, writes and frees" }, \
    { "size",    HB_INT, "8",     false, "bytes per object" },                                \
    { "writes",  HB_INT, "1000",  false, "writes to each byte of an object" },                \
    { "census",  HB_INT, "0",     false, "1: the census from outside (extra.census_*)" },     \
    { NULL, 0, NULL, false, NULL }

const struct hb_param hb_active_false_params[] = { FALSE_PARAMS };
const struct hb_param hb_passive_false_params[] = { FALSE_PARAMS };

/* Write every byte `writes` times, then check the last pass survived: a block the allocator
 * also handed to another thread would show the other thread's bytes. */
static void hammer(volatile unsigned char *p, size_t size, long long writes, unsigned tag)
{
    for (long long w = 0; w < writes; w++)
        for (size_t b = 0; b < size; b++) p[b] = (unsigned char)(w + b + tag);
    for (size_t b = 0; b < size; b++)
        if (p[b] != (unsigned char)(writes - 1 + b + tag))
            hb_fail("object %p of %zu bytes was changed by another thread", (void *)p, size);
}

/* With `census` 1, every block received is logged (address, size, the thread, the ticks of
 * one shared counter after its malloc and before its free) and the census is computed from
 * the log after the phase (census.c): no hook inside the allocator, so it counts under any
 * allocator. The shared counter serialises the threads a little: census runs are not timed. */
struct fs_census {
    struct hb_census_block **log;   /* log[i]: thread i's blocks; log[threads]: main's (handed) */
    _Atomic uint64_t tick;
};

struct fs_arg { void **handed; struct fs_census *c; };

static void active_thread(struct hb_run *r, int i, void *arg)
{
    struct fs_arg *a = arg;
    void **handed = a->handed;
    long long objects = hb_int(r, "objects"), writes = hb_int(r, "writes");
    size_t size = (size_t)hb_int(r, "size");
    struct hb_census_block *log = a->c ? a->c->log[i] : NULL;
    if (handed) {                           /* passive-false: give back what we were handed */
        if (log) a->c->log[r->threads][i].to = atomic_fetch_add(&a->c->tick, 1);
        hb_free(handed[i]);
    }
    for (long long k = 0; k < objects; k++) {
        unsigned char *p = hb_malloc(size);
        if (!p) hb_fail("malloc(%zu) returned NULL", size);
        if (log)
            log[k] = (struct hb_census_block){ (uintptr_t)p, size,
                                               atomic_fetch_add(&a->c->tick, 1), UINT64_MAX,
                                               (uint32_t)i };
        hammer(p, size, writes, (unsigned)i * 37u);
        if (log) log[k].to = atomic_fetch_add(&a->c->tick, 1);
        hb_free(p);
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * objects + (handed ? 1 : 0)));
}

static struct fs_census *census_new(struct hb_run *r)
{
    if (!hb_int(r, "census")) return NULL;
    size_t per = (size_t)hb_int(r, "objects");
    struct fs_census *c = calloc(1, sizeof *c);
    if (!c || !(c->log = calloc((size_t)r->threads + 1, sizeof *c->log))) hb_fail("out of memory");
    for (int i = 0; i <= r->threads; i++)
        if (!(c->log[i] = calloc(i < r->threads ? per : (size_t)r->threads, sizeof **c->log)))
            hb_fail("out of memory for the census log");
    return c;
}

/* extra.census_false_blocks, census_false_lines, census_blocks (after the phase); frees c. */
static void census_done(struct hb_run *r, struct fs_census *c)
{
    if (!c) return;
    size_t per = (size_t)hb_int(r, "objects"), n = 0;
    size_t total = per * (size_t)r->threads + (size_t)r->threads;
    struct hb_census_block *all = malloc(total * sizeof *all);
    if (!all) hb_fail("out of memory for the census");
    for (int i = 0; i <= r->threads; i++) {
        size_t m = i < r->threads ? per : (size_t)r->threads;
        for (size_t k = 0; k < m; k++)
            if (c->log[i][k].addr) all[n++] = c->log[i][k];
        free(c->log[i]);
    }
    unsigned long long blocks, lines;
    if (hb_census_count(all, n, (size_t)(r->cache_line > 0 ? r->cache_line : 64), &blocks,
                        &lines))
        hb_fail("out of memory computing the census");
    hb_json_uint(r->extra, "census_false_blocks", blocks);
    hb_json_uint(r->extra, "census_false_lines", lines);
    hb_json_uint(r->extra, "census_blocks", n);
    free(all);
    free(c->log);
    free(c);
}

int hb_active_false(struct hb_run *r)
{
    if (hb_int(r, "size") < 1 || hb_int(r, "writes") < 1) hb_usage("size and writes must be >= 1");
    struct fs_arg a = { NULL, census_new(r) };
    hb_parallel(r, r->threads, active_thread, &a);
    census_done(r, a.c);
    return 0;
}

int hb_passive_false(struct hb_run *r)
{
    size_t size = (size_t)hb_int(r, "size");
    if (size < 1 || hb_int(r, "writes") < 1) hb_usage("size and writes must be >= 1");
    void **handed = calloc((size_t)r->threads, sizeof *handed);
    if (!handed) hb_fail("out of memory");
    struct fs_arg a = { handed, census_new(r) };
    hb_begin(r);
    /* One thread allocates an object for each thread, back to back (likely sharing lines). */
    for (int i = 0; i < r->threads; i++) {
        if (!(handed[i] = malloc(size))) hb_fail("malloc(%zu) returned NULL", size);
        if (a.c)                            /* held by main (the thread it was handed to) */
            a.c->log[r->threads][i] = (struct hb_census_block){
                (uintptr_t)handed[i], size, atomic_fetch_add(&a.c->tick, 1), UINT64_MAX,
                (uint32_t)r->threads };
    }
    atomic_fetch_add(&r->ops, (unsigned long long)r->threads);
    hb_parallel(r, r->threads, active_thread, &a);
    hb_end(r);
    census_done(r, a.c);
    free(handed);
    return 0;
}
