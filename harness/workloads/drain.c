/* drain.c — a server's cache after a mass delete (issue 65): what an allocator gives back when
 * the survivors of a burst are spread so that every page keeps one, and what the next burst
 * then costs. Shaped like redis filled with values of mixed sizes, 3 keys in 4 deleted:
 *
 *   fill    each thread writes its share of `blocks` blocks, sizes uniform in
 *           [min_size, max_size] (every byte written, from a value the block's number gives);
 *   delete  each thread frees a seeded random 1 - `keep` of its blocks (exactly, by selection
 *           sampling), or with `every` = k all but every k-th; in a seeded random order, or in
 *           the order written (`order`); with `collect`, it then calls the allocator's
 *           explicit collect (as phased's `collect`), never without;
 *   hold    `hold_ms` with no allocation: at each of `checkpoints` ms after the last thread's
 *           delete, RSS, LazyFree (smaps_rollup) and VmPTE (page tables, /proc/self/status)
 *           are read, and held = RSS - LazyFree + VmPTE as a share of the same read right
 *           after the fill, the peak;
 *   next    the same fill again (the same sizes in the same order), timed: what keeping or
 *           giving back the memory costs the next burst.
 * Every survivor's bytes are checked whole after the hold and after the next fill, so an
 * allocator that moves or shares pages (meshing) and loses a write fails the run, naming the
 * block; `corrupt` plants such a loss to show that it does. Everything is freed, checked,
 * at the end of the measured phase.
 *
 * Why not `phased` with keep_every and next_burst: phased is timed (its phases are seconds,
 * its live set set by lifetimes), so how much is allocated before the drain and in the next
 * burst depends on the allocator's speed; here both fills are the same blocks, so the peak
 * is the same work under every allocator and the next fill's time is comparable. Phased's
 * idle drain keeps every k-th or the first 1/k (its random drain goes on allocating), and it
 * reads no page tables and checks a block's ends only. The helpers it shares with
 * phased are the harness's: the memory row the series reads, the collect call, the floor.
 *
 * The harness's tables (16 bytes a block) come from mmap, not the allocator measured, and the
 * first fill's stays whole through the hold (extra.table_kb): the harness's own memory is the
 * same at the peak and in the hold, so a share below 1 is what the allocator gave back. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../hlbench.h"

const struct hb_param hb_drain_params[] = {
    { "blocks",      HB_INT,  "200000",          true,  "blocks of each fill, all threads "
                                                         "(split; ~200 MiB at the defaults)" },
    { "min_size",    HB_INT,  "16",              false, "smallest block, bytes" },
    { "max_size",    HB_INT,  "2048",            false, "largest block, bytes (uniform)" },
    { "keep",        HB_REAL, "0.25",            false, "share of a thread's blocks the delete "
                                                         "keeps, chosen at random (seeded)" },
    { "every",       HB_INT,  "0",               false, "k >= 1: keep every k-th block in the "
                                                         "order written instead (0: keep)" },
    { "order",       HB_STR,  "random",          false, "the delete's frees: random (seeded) "
                                                         "or written (the fill's order)" },
    { "hold_ms",     HB_INT,  "5000",            false, "ms from the delete's end to the next "
                                                         "fill, no allocation" },
    { "checkpoints", HB_STR,  "0,100,1000,5000", false, "ms after the delete at which memory is "
                                                         "read (ascending, at most 8; past "
                                                         "hold_ms: null)" },
    { "collect",     HB_INT,  "0",               false, "1: each thread calls the allocator's "
                                                         "collect after its delete" },
    { "corrupt",     HB_INT,  "0",               false, "1: one byte of a survivor changed in "
                                                         "the hold (a test: the run must fail)" },
    { NULL, 0, NULL, false, NULL },
};

enum { CP_MAX = 8 };

struct slot { char *p; uint32_t n, idx; };      /* idx: the block's number in its fill */

struct part {                                   /* one thread's blocks */
    struct slot *first, *next;                  /* the fill's (survivors in front), the next's */
    size_t n, kept;
    unsigned long long bytes, kept_bytes, ops;
};

struct reading { long long rss_kb, lazyfree_kb, pte_kb, held_bytes; };

struct drain {
    struct hb_run *r;
    struct part *part;
    pthread_barrier_t bar;
    uint64_t salt;
    bool random_order;
    const char *collect;                        /* the call, NULL: none or not asked */
    int n_cp;
    long long cp_ms[CP_MAX];
    bool cp_read[CP_MAX];
    struct reading cp[CP_MAX], filled, after_next;
    double t_fill, t_filled, t_deleted, t_next, t_next_done;
};

/* ---- memory ----------------------------------------------------------------------------------- */

/* VmPTE of /proc/self/status in kB, -1 when missing; open/read into the stack, no malloc. */
static long long pte_kb(void)
{
    char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *at = strstr(buf, "\nVmPTE:");
    return at ? strtoll(at + 7, NULL, 10) : -1;
}

static void read_memory(struct reading *m)
{
    struct hb_series_row row;
    hb_series_read(&row);
    m->rss_kb = row.v[HB_SER_RSS] >= 0 ? row.v[HB_SER_RSS] : hb_rss_kb();
    m->lazyfree_kb = row.v[HB_SER_LAZYFREE];
    m->pte_kb = pte_kb();
    m->held_bytes = row.v[HB_SER_HELD];
}

/* RSS less LazyFree, plus the page tables: the memory the process holds, kB. */
static long long held_kb(const struct reading *m)
{
    return m->rss_kb - (m->lazyfree_kb > 0 ? m->lazyfree_kb : 0) + (m->pte_kb > 0 ? m->pte_kb : 0);
}

/* A table of n slots, whole pages (at least one). */
static size_t table_bytes(size_t n)
{
    return ((n ? n : 1) * sizeof(struct slot) + 4095) & ~(size_t)4095;
}

/* ---- the blocks' contents --------------------------------------------------------------------- */

static uint64_t value_of(const struct drain *D, int thread, int fill, uint32_t idx)
{
    return hb_mix(D->salt ^ ((uint64_t)thread << 40) ^ ((uint64_t)fill << 32) ^ idx);
}

/* Every byte: word k is v + k * odd (the tail, its first bytes), as blocks.c's stamps. */
static void write_block(char *p, size_t n, uint64_t v)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w = v + (k / 8) * 0x9e3779b97f4a7c15ull;
        memcpy(p + k, &w, 8);
    }
    uint64_t w = v + (k / 8) * 0x9e3779b97f4a7c15ull;
    memcpy(p + k, &w, n - k);
}

/* The first byte that differs from write_block's, or n. */
static size_t first_wrong(const char *p, size_t n, uint64_t v)
{
    for (size_t k = 0; k < n; k += 8) {
        uint64_t w = v + (k / 8) * 0x9e3779b97f4a7c15ull;
        size_t m = n - k < 8 ? n - k : 8;
        if (memcmp(p + k, &w, m))
            for (size_t b = 0; b < m; b++)
                if (p[k + b] != ((const char *)&w)[b]) return k + b;
    }
    return n;
}

static void check(const struct drain *D, int thread, int fill, const struct slot *s,
                  const char *when)
{
    size_t at = first_wrong(s->p, s->n, value_of(D, thread, fill, s->idx));
    if (at < s->n)
        hb_fail("drain: block %u of thread %d's %s fill (%p, %u bytes) differs at byte %zu "
                "%s: a write was lost or its memory is shared with another block", s->idx,
                thread, fill ? "next" : "first", (void *)s->p, s->n, at, when);
}

/* ---- the phases of a thread ------------------------------------------------------------------- */

static void fill(struct drain *D, struct part *P, struct slot *t, int i, int which)
{
    struct hb_run *r = D->r;
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i + 6500);       /* the same sizes in both fills */
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    for (size_t k = 0; k < P->n; k++) {
        size_t n = (size_t)hb_range(&g, lo, hi);
        char *p = hb_malloc(n);
        if (!p) hb_fail("malloc(%zu) returned NULL", n);
        write_block(p, n, value_of(D, i, which, (uint32_t)k));
        t[k] = (struct slot){ p, (uint32_t)n, (uint32_t)k };
        if (!which) P->bytes += n;
    }
    P->ops += P->n;
}

/* Keep exactly round(keep x n) at random (selection sampling), or every k-th; survivors
 * moved to the front in order, the rest freed in the order written or shuffled first. */
static void delete_blocks(struct drain *D, struct part *P, int i)
{
    struct hb_run *r = D->r;
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i + 6600);
    long long every = hb_int(r, "every");
    size_t want = (size_t)(hb_real(r, "keep") * (double)P->n + 0.5), front = 0;
    for (size_t k = 0; k < P->n; k++) {
        bool keep = every ? k % (size_t)every == 0
                          : (double)(hb_rand(&g) >> 11) * 0x1p-53 * (double)(P->n - k) <
                                (double)(want - front);
        if (keep) {
            struct slot s = P->first[k];
            P->first[k] = P->first[front];
            P->first[front++] = s;
            P->kept_bytes += s.n;
        } else if (!D->random_order) {
            check(D, i, 0, &P->first[k], "before its free");
            hb_free(P->first[k].p);
        }
    }
    P->kept = front;
    if (D->random_order) {
        for (size_t k = P->n - 1; k > front; k--) {         /* Fisher-Yates on the rest */
            size_t j = front + (size_t)(hb_rand(&g) % (uint64_t)(k - front + 1));
            struct slot s = P->first[k];
            P->first[k] = P->first[j];
            P->first[j] = s;
        }
        for (size_t k = front; k < P->n; k++) {
            check(D, i, 0, &P->first[k], "before its free");
            hb_free(P->first[k].p);
        }
    }
    P->ops += P->n - front;
    if (D->collect) hb_collect();
}

static void check_survivors(const struct drain *D, const struct part *P, int i, const char *when)
{
    for (size_t k = 0; k < P->kept; k++) check(D, i, 0, &P->first[k], when);
}

/* Thread 0 also reads the memory and keeps the clock between the barriers. */
static void drain_thread(struct hb_run *r, int i, void *arg)
{
    struct drain *D = arg;
    struct part *P = &D->part[i];
    if (!i) D->t_fill = hb_now();
    fill(D, P, P->first, i, 0);
    pthread_barrier_wait(&D->bar);
    if (!i) {
        D->t_filled = hb_now();
        read_memory(&D->filled);
    }
    pthread_barrier_wait(&D->bar);
    delete_blocks(D, P, i);
    pthread_barrier_wait(&D->bar);
    if (!i) {
        D->t_deleted = hb_now();
        long long hold = hb_int(r, "hold_ms");
        for (int k = 0; k < D->n_cp && D->cp_ms[k] <= hold; k++) {
            hb_sleep_until(D->t_deleted + (double)D->cp_ms[k] / 1000);
            read_memory(&D->cp[k]);
            D->cp_read[k] = true;
        }
        hb_sleep_until(D->t_deleted + (double)hold / 1000);
        if (hb_int(r, "corrupt") && P->kept)                /* the check must see it */
            P->first[P->kept / 2].p[P->first[P->kept / 2].n / 2] ^= 0x5a;
    }
    pthread_barrier_wait(&D->bar);
    check_survivors(D, P, i, "after the hold");
    pthread_barrier_wait(&D->bar);
    if (!i) D->t_next = hb_now();
    fill(D, P, P->next, i, 1);
    pthread_barrier_wait(&D->bar);
    if (!i) {
        D->t_next_done = hb_now();
        read_memory(&D->after_next);
    }
    check_survivors(D, P, i, "after the next fill");
    for (size_t k = 0; k < P->kept; k++) hb_free(P->first[k].p);
    for (size_t k = 0; k < P->n; k++) {
        check(D, i, 1, &P->next[k], "at the end");
        hb_free(P->next[k].p);
    }
    P->ops += P->kept + P->n;
    atomic_fetch_add(&r->ops, P->ops);
}

/* ---- the run and its record ------------------------------------------------------------------- */

static void parse_checkpoints(struct drain *D, const char *text)
{
    for (const char *s = text; *s;) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0 || D->n_cp == CP_MAX || (D->n_cp && v <= D->cp_ms[D->n_cp - 1]) ||
            (*end && *end != ','))
            hb_usage("drain: checkpoints '%s': at most %d ascending whole ms, separated by "
                     "commas (e.g. 0,100,1000,5000)", text, CP_MAX);
        D->cp_ms[D->n_cp++] = v;
        s = *end ? end + 1 : end;
    }
}

static void json_kb(struct hb_json *j, const char *key, long long v)
{
    if (v < 0) hb_json_null(j, key);
    else hb_json_int(j, key, v);
}

/* extra.<prefix>_{rss_kb,lazyfree_kb,pte_kb,held_kb,share,held_bytes}; null when not read. */
static void reading_record(struct drain *D, const char *prefix, const struct reading *m, bool read)
{
    static const char *const name[] = { "rss_kb", "lazyfree_kb", "pte_kb", "held_kb", "share",
                                        "held_bytes" };
    struct hb_json *j = D->r->extra;
    long long v[] = { m->rss_kb, m->lazyfree_kb, m->pte_kb, held_kb(m), 0, m->held_bytes };
    char key[64];
    for (int k = 0; k < 6; k++) {
        snprintf(key, sizeof key, "%s_%s", prefix, name[k]);
        if (!read) hb_json_null(j, key);
        else if (k == 4) hb_json_real(j, key, (double)held_kb(m) / (double)held_kb(&D->filled));
        else json_kb(j, key, v[k]);
    }
}

int hb_drain(struct hb_run *r)
{
    long long lo = hb_int(r, "min_size"), hi = hb_int(r, "max_size");
    const char *order = hb_str(r, "order");
    if (lo < 1 || hi < lo || hi > (1ll << 30) || hb_real(r, "keep") > 1 ||
        (strcmp(order, "random") && strcmp(order, "written")))
        hb_usage("drain needs 1 <= min_size <= max_size <= 2^30, keep <= 1 and order random "
                 "or written");
    struct drain D = { .r = r, .salt = hb_mix(r->seed ^ 0xd7a1), .random_order = *order == 'r' };
    parse_checkpoints(&D, hb_str(r, "checkpoints"));
    if (hb_int(r, "collect")) D.collect = hb_collect_find();   /* before the threads */
    int T = r->threads;
    long long N = hb_int(r, "blocks");
    if (!(D.part = calloc((size_t)T, sizeof *D.part))) hb_fail("out of memory");
    for (int i = 0; i < T; i++) {
        struct part *P = &D.part[i];
        P->n = (size_t)(N / T + (i < N % T));
        size_t bytes = table_bytes(P->n);
        P->first = mmap(NULL, 2 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);                     /* not the allocator's memory */
        if (P->first == MAP_FAILED) hb_fail("mmap of a thread's table failed");
        P->next = (struct slot *)((char *)P->first + bytes);
    }
    pthread_barrier_init(&D.bar, NULL, (unsigned)T);
    hb_floor_record(r->extra);
    hb_begin(r);
    hb_parallel(r, T, drain_thread, &D);
    hb_end(r);
    pthread_barrier_destroy(&D.bar);

    struct hb_json *j = r->extra;
    unsigned long long bytes = 0, kept = 0, kept_bytes = 0, table = 0;
    for (int i = 0; i < T; i++) {
        bytes += D.part[i].bytes;
        kept += D.part[i].kept;
        kept_bytes += D.part[i].kept_bytes;
        table += table_bytes(D.part[i].n) / 1024;
    }
    hb_json_int(j, "blocks", N);
    hb_json_uint(j, "fill_bytes", bytes);
    hb_json_uint(j, "kept_blocks", kept);
    hb_json_uint(j, "kept_bytes", kept_bytes);
    hb_json_uint(j, "table_kb", table);
    hb_json_real(j, "fill_s", D.t_filled - D.t_fill);
    hb_json_real(j, "delete_s", D.t_deleted - D.t_filled);
    reading_record(&D, "filled", &D.filled, true);
    for (int k = 0; k < D.n_cp; k++) {
        char prefix[32];
        long long ms = D.cp_ms[k];
        if (ms % 1000 || !ms) snprintf(prefix, sizeof prefix, "hold_%lldms", ms);
        else snprintf(prefix, sizeof prefix, "hold_%llds", ms / 1000);
        reading_record(&D, prefix, &D.cp[k], D.cp_read[k]);
    }
    if (hb_int(r, "collect")) hb_json_str(j, "collect_call", D.collect);
    double next = D.t_next_done - D.t_next;
    hb_json_real(j, "next_fill_s", next);
    hb_json_real(j, "next_fill_blocks_per_s", next > 0 ? (double)N / next : 0.0);
    hb_json_real(j, "next_fill_speed_vs_first", next > 0 ? (D.t_filled - D.t_fill) / next : 0.0);
    reading_record(&D, "next", &D.after_next, true);
    for (int i = 0; i < T; i++) {
        munmap(D.part[i].first, 2 * table_bytes(D.part[i].n));
    }
    free(D.part);
    return 0;
}
