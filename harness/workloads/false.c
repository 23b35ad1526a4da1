/* false.c — the false-sharing workloads of the Hoard paper (§5.3), with Michael's parameters
 * (10,000 objects of 8 bytes per thread, each byte written 1,000 times). The writes are
 * volatile so the compiler keeps every one: the cost of a falsely shared line is the point. */
#include <stdlib.h>
#include "../hlbench.h"

#define FALSE_PARAMS                                                                          \
    { "objects", HB_INT, "10000", true,  "objects each thread allocates, writes and frees" }, \
    { "size",    HB_INT, "8",     false, "bytes per object" },                                \
    { "writes",  HB_INT, "1000",  false, "writes to each byte of an object" },                \
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

static void active_thread(struct hb_run *r, int i, void *arg)
{
    void **handed = arg;
    long long objects = hb_int(r, "objects"), writes = hb_int(r, "writes");
    size_t size = (size_t)hb_int(r, "size");
    if (handed) hb_free(handed[i]);          /* passive-false: give back what we were handed */
    for (long long k = 0; k < objects; k++) {
        unsigned char *p = hb_malloc(size);
        if (!p) hb_fail("malloc(%zu) returned NULL", size);
        hammer(p, size, writes, (unsigned)i * 37u);
        hb_free(p);
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * objects + (handed ? 1 : 0)));
}

int hb_active_false(struct hb_run *r)
{
    if (hb_int(r, "size") < 1 || hb_int(r, "writes") < 1) hb_usage("size and writes must be >= 1");
    hb_parallel(r, r->threads, active_thread, NULL);
    return 0;
}

int hb_passive_false(struct hb_run *r)
{
    size_t size = (size_t)hb_int(r, "size");
    if (size < 1 || hb_int(r, "writes") < 1) hb_usage("size and writes must be >= 1");
    void **handed = calloc((size_t)r->threads, sizeof *handed);
    if (!handed) hb_fail("out of memory");
    hb_begin(r);
    /* One thread allocates an object for each thread, back to back (likely sharing lines). */
    for (int i = 0; i < r->threads; i++)
        if (!(handed[i] = malloc(size))) hb_fail("malloc(%zu) returned NULL", size);
    atomic_fetch_add(&r->ops, (unsigned long long)r->threads);
    hb_parallel(r, r->threads, active_thread, handed);
    hb_end(r);
    free(handed);
    return 0;
}
