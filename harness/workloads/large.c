/* large.c — large buffers replaced one at a time (issue 24): each thread keeps `live` buffers
 * of random sizes in [size_min, size_max] (MiB-sized by default, far above every strategy's
 * large-object threshold) and replaces a random one `replacements` times: free it, malloc a
 * new one of a new random size and, with `zero` on, clear the whole of it (what C++ value-
 * initialisation of a std::vector<char>(n) does: malloc + memset, not calloc). `touch` then
 * writes one byte per page again (0 = no), as a program filling its buffer would.
 *
 * With `same_size` on, a replacement has the size of the buffer it replaces (a free and a
 * malloc of the same size: the reuse of one size, issue 51), and with `drop` > 0 each thread
 * first frees `drop` of its buffers after the set-up (its large live set shrank: what the
 * allocator keeps of them stays beside the reused ones, e.g. beyond a purge budget) and
 * replaces only the rest.
 *
 * What it measures: whether freed memory is reused (resident pages, a memset at memory speed)
 * or given back and the next buffer faulted in page by page. The set of live buffers is set up
 * before the measured phase (not measured); ops = replacements (a free and a malloc each).
 * Deterministic: the sizes and slots come from the seed and the thread index. Every buffer is
 * stamped at both ends and checked before it is freed. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "../hlbench.h"

const struct hb_param hb_largebuf_params[] = {
    { "live",         HB_INT, "20",      false, "buffers each thread keeps live" },
    { "size_min",     HB_INT, "1048576", false, "smallest buffer, bytes" },
    { "size_max",     HB_INT, "8388608", false, "largest buffer, bytes" },
    { "replacements", HB_INT, "600",     true,  "buffers each thread replaces (free + malloc)" },
    { "zero",         HB_INT, "1",       false, "1: memset each new buffer to 0 (C++ "
                                                 "value-initialisation); 0: leave it" },
    { "touch",        HB_INT, "1",       false, "1: then write one byte per 4 KiB page" },
    { "same_size",    HB_INT, "0",       false, "1: a replacement has the size of the buffer "
                                                 "it replaces (free and malloc of one size)" },
    { "drop",         HB_INT, "0",       false, "buffers each thread frees after the set-up, "
                                                 "before the measured phase (< live)" },
    { NULL, 0, NULL, false, NULL },
};

struct largebuf {
    long long live, replacements, drop;
    uint64_t lo, hi;
    bool zero, touch, same_size;
    uint64_t salt;                      /* per run; each thread's buffers stay its own */
    struct hb_block **set;              /* per thread: `live` buffers */
    _Atomic unsigned long long live_bytes, live_bytes_peak;   /* all threads' buffers */
};

/* Called through a volatile pointer: a compiler sees malloc followed by memset(p, 0, n) and
 * makes it calloc, which an allocator may serve with untouched zero pages; C++'s operator new
 * followed by value-initialisation never becomes calloc. */
static void *(*volatile clear)(void *, int, size_t) = memset;

static void *fresh(struct largebuf *L, size_t n)
{
    char *p = hb_malloc(n);
    if (!p) hb_fail("malloc(%zu) returned NULL", n);
    if (L->zero) clear(p, 0, n);
    if (L->touch)
        for (size_t k = 0; k < n; k += 4096) p[k] = (char)(k >> 12);
    hb_stamp(p, n, L->salt);
    return p;
}

static void largebuf_thread(struct hb_run *r, int i, void *arg)
{
    struct largebuf *L = arg;
    struct hb_block *set = L->set[i];
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i + 1000);
    for (long long s = 0; s < L->replacements; s++) {
        struct hb_block *b = &set[hb_rand(&g) % (uint64_t)(L->live - L->drop)];
        hb_release(b->p, b->n, L->salt);
        atomic_fetch_sub(&L->live_bytes, b->n);
        size_t n = (size_t)hb_range(&g, L->lo, L->hi);     /* drawn either way: one stream */
        if (!L->same_size) b->n = n;
        unsigned long long now = atomic_fetch_add(&L->live_bytes, b->n) + b->n;
        unsigned long long seen = atomic_load(&L->live_bytes_peak);
        while (now > seen && !atomic_compare_exchange_weak(&L->live_bytes_peak, &seen, now)) { }
        b->p = fresh(L, b->n);
    }
    atomic_fetch_add(&r->ops, (unsigned long long)L->replacements);
}

int hb_largebuf(struct hb_run *r)
{
    struct largebuf L = { .live = hb_int(r, "live"), .replacements = hb_int(r, "replacements"),
                          .lo = (uint64_t)hb_int(r, "size_min"),
                          .hi = (uint64_t)hb_int(r, "size_max"),
                          .zero = hb_int(r, "zero") != 0, .touch = hb_int(r, "touch") != 0,
                          .same_size = hb_int(r, "same_size") != 0, .drop = hb_int(r, "drop"),
                          .salt = hb_mix(r->seed ^ 0x1a96e) };
    if (L.live < 1 || hb_int(r, "size_min") < 1 || L.hi < L.lo || hb_int(r, "zero") < 0 ||
        hb_int(r, "zero") > 1 || hb_int(r, "touch") < 0 || hb_int(r, "touch") > 1 ||
        hb_int(r, "same_size") < 0 || hb_int(r, "same_size") > 1 || L.drop < 0 ||
        L.drop >= L.live)
        hb_usage("largebuf needs live >= 1, 1 <= size_min <= size_max, zero, touch and "
                 "same_size 0 or 1, 0 <= drop < live");
    int T = r->threads;
    if (!(L.set = calloc((size_t)T, sizeof *L.set))) hb_fail("out of memory");
    for (int i = 0; i < T; i++) {                   /* set-up: every thread's live set */
        struct hb_rng g;
        hb_rng_seed(&g, r->seed, (uint64_t)i);
        if (!(L.set[i] = calloc((size_t)L.live, sizeof **L.set))) hb_fail("out of memory");
        for (long long k = 0; k < L.live; k++) {
            L.set[i][k].n = (size_t)hb_range(&g, L.lo, L.hi);
            L.set[i][k].p = fresh(&L, L.set[i][k].n);
            L.live_bytes += L.set[i][k].n;
        }
    }
    L.live_bytes_peak = L.live_bytes;
    for (int i = 0; i < T; i++)                     /* drop: the live set shrinks */
        for (long long k = L.live - L.drop; k < L.live; k++) {
            hb_release(L.set[i][k].p, L.set[i][k].n, L.salt);
            L.live_bytes -= L.set[i][k].n;
        }
    struct rusage u0, u1;
    hb_begin(r);
    getrusage(RUSAGE_SELF, &u0);
    hb_parallel(r, T, largebuf_thread, &L);
    getrusage(RUSAGE_SELF, &u1);
    hb_end(r);
    unsigned long long peak = atomic_load(&L.live_bytes_peak);
    hb_json_uint(r->extra, "live_bytes_peak", peak);
    /* Less noisy than wall time on a shared machine: page faults and CPU seconds (user +
     * system, all threads) of the measured phase. */
    hb_json_int(r->extra, "minor_faults", u1.ru_minflt - u0.ru_minflt);
    hb_json_real(r->extra, "cpu_s", (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) +
                 (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) +
                 (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) / 1e6 +
                 (double)(u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) / 1e6);
    hb_json_real(r->extra, "sys_s", (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) +
                 (double)(u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) / 1e6);
    if (r->loaded && peak) {
        hb_json_uint(r->extra, "a_bytes", r->end.held_bytes_peak);
        hb_json_real(r->extra, "a_over_live", (double)r->end.held_bytes_peak / (double)peak);
    } else {
        hb_json_null(r->extra, "a_bytes");
        hb_json_null(r->extra, "a_over_live");
    }
    for (int i = 0; i < T; i++) {
        for (long long k = 0; k < L.live - L.drop; k++)
            hb_release(L.set[i][k].p, L.set[i][k].n, L.salt);
        free(L.set[i]);
    }
    free(L.set);
    return 0;
}
