/* phased_trace.c — phased's distribution learned from a trace. With `trace` = a hoardlab
 * trace (HOARD_TRACE, format in harness/README.md), each block of the workload is a (size,
 * lifetime) pair of one of the trace's allocations drawn at random (the pair kept, so a size's
 * typical lifetime is too), the lifetime counted in allocations of the traced program from the
 * block's allocation to its free (a block the trace never frees: to the end of the trace);
 * min/max_size, large_* and live are then not used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "phased.h"

struct event { uint64_t id, seq, alloc_no, size; bool alloc; };

static int by_id_then_seq(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Every allocation of the trace as (size, lifetime): sorted by block address then file order,
 * an allocation's end is the next event of the same address (its free, or an allocation over
 * it: an implicit free); none: the end of the trace. Lifetimes count allocations between. */
double hb_phased_learn(const char *path, struct drawn **learned, size_t *n_learned)
{
    FILE *f = fopen(path, "r");
    if (!f) hb_usage("phased: cannot open trace '%s'", path);
    char line[256];
    if (!fgets(line, sizeof line, f) || strcmp(line, "# hoardlab trace 1\n"))
        hb_usage("phased: '%s' is not a hoardlab trace (version 1)", path);
    struct event *ev = NULL;
    size_t n = 0, cap = 0, lineno = 1;
    uint64_t allocs = 0;
    while (fgets(line, sizeof line, f)) {
        char op;
        unsigned long long t, tid, id, size;
        lineno++;
        if (line[0] == '#') continue;
        if (sscanf(line, "%c %llu %llu %llx %llu", &op, &t, &tid, &id, &size) != 5 ||
            (op != 'a' && op != 'f'))
            hb_usage("phased: malformed line %zu of trace '%s'", lineno, path);
        if (n == cap && !(ev = realloc(ev, (cap = cap ? 2 * cap : 4096) * sizeof *ev)))
            hb_fail("out of memory");
        ev[n] = (struct event){ id, n, allocs, size, op == 'a' };
        allocs += op == 'a';
        n++;
    }
    fclose(f);
    if (!allocs) hb_usage("phased: trace '%s' has no allocations", path);
    qsort(ev, n, sizeof *ev, by_id_then_seq);
    struct drawn *out = malloc(allocs * sizeof *out);
    if (!out) hb_fail("out of memory");
    size_t m = 0;
    double sum = 0;
    for (size_t k = 0; k < n; k++) {
        if (!ev[k].alloc) continue;
        uint64_t end = k + 1 < n && ev[k + 1].id == ev[k].id ? ev[k + 1].alloc_no : allocs;
        struct drawn d = { ev[k].size ? ev[k].size : 1, end - ev[k].alloc_no };
        if (d.life < 1) d.life = 1;
        sum += (double)d.life;
        out[m++] = d;
    }
    free(ev);
    *learned = out;
    *n_learned = m;
    return sum / (double)m;
}
