/* phased.c — a long-running, server-like workload with phases (issue 28), in the spirit of
 * TCMalloc's empirical driver: each thread allocates blocks whose sizes and lifetimes are drawn
 * from a distribution and frees each when its lifetime ends, so the live set is set by the
 * allocation rate and the mean lifetime (Little's law), and changes with the phase:
 *
 *   steady  one allocation a step: about `live` blocks live per thread;
 *   spike   `spike` allocations a step (fractional part: with that probability): the live
 *           set grows to about `spike` x live;
 *   drain   at its start, each live block is freed with probability `drain`; then
 *           1 - drain allocations a step, so the live set stays near (1 - drain) x live;
 *   steady  again, until `seconds` have passed.
 * The phases take steady_frac, spike_frac, drain_frac of `seconds`, the last steady the rest.
 *
 * What comes back after the drain, and when (issue 36), is read by one thread more at each
 * of `checkpoints` seconds after it (phased_checkpoints.c says what). With `next_burst`, the
 * drain lasts until the last checkpoint is read (at least drain_frac of `seconds`; the later
 * phases move by what the reading ran over), then a second spike, the next burst, as long as
 * the first, comes before the last steady phase: its throughput (extra.next_burst_ops_per_s)
 * against the first spike's (extra.spike_ops_per_s) is what keeping or returning the memory
 * costs the next burst. The run then lasts longer than `seconds`.
 *
 * Which blocks outlive the drain (issue 49): with `keep_every` = k, each thread keeps every k-th
 * of its live blocks in allocation order (the first, the k+1-th, ...) and frees the rest, so
 * the survivors are spread over every page, as a cache's or a server's long-lived connections
 * leave them; with `keep_first` = k, the first 1/k of them in allocation order (the oldest)
 * stay, together. Either way ceil(n/k) of a thread's n live blocks stay, `drain` is not used,
 * and the threads stay idle through the drain (no allocation, no free: they sleep until it
 * ends, with next_burst until the last checkpoint is read), so the checkpoints see what the
 * allocator gives back of memory whose free blocks sit between survivors (what the record
 * counts of them: phased_checkpoints.c).
 *
 * With `churn` = g (mimalloc-pprof's churn measure: what comes back after the threads that
 * allocated are gone), each thread's lane is run by g threads in turn, created one after the
 * other (the first g - 1 end at equal shares of the time before the drain; the next takes
 * over the lane and frees its predecessor's blocks as their lifetimes end), and the last
 * exits right after its drain's frees; the drain ends, and the checkpoints count from, when
 * the last of them has exited. The process then idles with no worker thread until the last
 * checkpoint is read, and the run ends there (no later phase; not with next_burst): e.g.
 * checkpoints = 0.1,1,10 reads what comes back after 10 s idle. The generations are not
 * pinned (--pin pins the first).
 *
 * With `collect`, each thread asks the allocator to give back what it can right after its
 * share of the drain's frees, before its drain counts as ended (the checkpoints' origin): the
 * allocator's explicit call if it has one (hb_collect_find: hoardlab_collect, mimalloc's
 * mi_collect, jemalloc's arena purge, gperftools' ReleaseFreeMemory, glibc's malloc_trim),
 * nothing otherwise.
 *
 * A step is one loop of a thread: its allocations, then the frees of every block whose
 * lifetime (counted in the thread's steps) has ended.
 *
 * The distribution (the default, not learned from a trace): sizes log-uniform in
 * [min_size, max_size] (16 B..64 KiB: as many blocks of 16..32 B as of 32..64 KiB), except
 * that with probability large_p a block is large, log-uniform in [large_min, large_max]
 * (256 KiB..4 MiB); lifetimes exponential with mean `live` steps, at least one step. Blocks
 * are stamped and, with `touch`, written once per 4 KiB page, as a server fills what it
 * allocates, so the resident set follows the live set. A thread's table of its live blocks
 * is phased_lane.h's.
 *
 * With `trace` = a hoardlab trace, the distribution is learned from its allocations instead
 * (phased_trace.c); min/max_size, large_* and live are then not used.
 *
 * The main output is memory over time, the record's "series"; extra.phases has one object
 * per phase with the live bytes' peak (requested bytes of all threads, summed every 64 steps
 * of any thread) and what the series saw in it (peaks and last values). Deterministic sizes
 * and lifetimes per seed and thread; where the phase boundaries fall in a thread's steps
 * depends on its speed. ops = mallocs + frees. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "phased.h"

const struct hb_param hb_phased_params[] = {
    { "seconds",     HB_REAL, "10",      true,  "length of the run, all phases" },
    { "live",        HB_INT,  "2000",    false, "mean block lifetime in a thread's steps = "
                                                 "its steady live set, blocks" },
    { "spike",       HB_REAL, "4",       false, "allocation rate in the spike phase, x steady" },
    { "drain",       HB_REAL, "0.9",     false, "fraction of the live set freed at the drain; "
                                                 "its rate is 1 - drain" },
    { "steady_frac", HB_REAL, "0.3",     false, "first steady phase, fraction of seconds" },
    { "spike_frac",  HB_REAL, "0.2",     false, "spike phase, fraction of seconds" },
    { "drain_frac",  HB_REAL, "0.2",     false, "drain phase, fraction of seconds (the "
                                                 "second steady phase takes the rest)" },
    { "min_size",    HB_INT,  "16",      false, "smallest block, bytes (log-uniform)" },
    { "max_size",    HB_INT,  "65536",   false, "largest ordinary block, bytes" },
    { "large_p",     HB_REAL, "0.001",   false, "probability that a block is large" },
    { "large_min",   HB_INT,  "262144",  false, "smallest large block, bytes (log-uniform)" },
    { "large_max",   HB_INT,  "4194304", false, "largest large block, bytes" },
    { "touch",       HB_INT,  "1",       false, "1: write one byte per 4 KiB page of a block" },
    { "trace",       HB_STR,  "",        false, "a hoardlab trace (HOARD_TRACE): draw each "
                                                 "block's size and lifetime from its "
                                                 "allocations instead" },
    { "checkpoints", HB_STR,  "0.1,1,5", false, "seconds after the drain at which RSS, "
                                                 "Private_Dirty, LazyFree and A are read "
                                                 "(whole ms, ascending, at most 8; '' none)" },
    { "next_burst",  HB_INT,  "0",       false, "1: the drain lasts until the last checkpoint, "
                                                 "then a second spike (the next burst)" },
    { "collect",     HB_INT,  "0",       false, "1: each thread asks the allocator to give "
                                                 "memory back right after its drain's frees "
                                                 "(hoardlab_collect, mi_collect, jemalloc's "
                                                 "arena purge, ...; none: nothing)" },
    { "keep_every",  HB_INT,  "0",       false, "k >= 1: the drain keeps every k-th live "
                                                 "block in allocation order, frees the rest, "
                                                 "and the threads idle through it (0: off)" },
    { "keep_first",  HB_INT,  "0",       false, "k >= 1: the drain keeps the first 1/k of the "
                                                 "live blocks in allocation order, frees the "
                                                 "rest; threads idle through it (0: off)" },
    { "churn",       HB_INT,  "0",       false, "g >= 1: each lane run by g threads in turn, "
                                                 "the last exits after its drain; the run ends "
                                                 "at the last checkpoint (0: off)" },
    { NULL, 0, NULL, false, NULL },
};

static const char *const phase_name[PHASES] = { "steady", "spike", "drain", "burst", "steady" };

static double unit(struct hb_rng *g) { return (double)(hb_rand(g) >> 11) * 0x1p-53; }

static size_t log_uniform(struct hb_rng *g, long long lo, long long hi)
{
    double v = exp(log((double)lo) + unit(g) * (log((double)hi) - log((double)lo)));
    return v < (double)lo ? (size_t)lo : v > (double)hi ? (size_t)hi : (size_t)v;
}

static void release(struct phased *P, struct blk b, unsigned long long *live, unsigned long long *ops)
{
    hb_check(b.p, b.n, P->salt);
    hb_free(b.p);
    *live -= b.n;
    ++*ops;
}

static void allocate(struct phased *P, struct lane *L, struct hb_rng *g, uint64_t step,
                     unsigned long long *live, unsigned long long *ops)
{
    struct hb_run *r = P->r;
    size_t n;
    double life;
    if (P->learned) {
        const struct drawn *d = &P->learned[hb_rand(g) % P->n_learned];
        n = d->size;
        life = (double)d->life;
    } else {
        n = unit(g) < hb_real(r, "large_p")
                ? log_uniform(g, hb_int(r, "large_min"), hb_int(r, "large_max"))
                : log_uniform(g, hb_int(r, "min_size"), hb_int(r, "max_size"));
        life = -log(1.0 - unit(g)) * (double)hb_int(r, "live");
    }
    if (L->len == L->cap) release(P, lane_pop(L), live, ops);   /* full: the soonest dies now */
    char *p = hb_malloc(n);
    if (!p) hb_fail("malloc(%zu) returned NULL", n);
    if (hb_int(r, "touch"))
        for (size_t k = 4096; k + 8 < n; k += 4096) p[k] = (char)k;
    hb_stamp(p, n, P->salt);
    lane_push(L, (struct blk){ step + 1 + (uint64_t)life, p, n, L->seq++ });
    *live += n;
    ++*ops;
}

/* At the drain: each live block freed with probability `drain`; or, with keep_every /
 * keep_first, every keep-th block in allocation order kept (the first one, the keep+1-th, ...)
 * or the first ceil(len / keep), the rest freed in allocation order; the rest re-heaped. */
static void drain_now(struct phased *P, struct lane *L, struct hb_rng *g,
                      unsigned long long *live, unsigned long long *ops)
{
    double f = hb_real(P->r, "drain");
    size_t kept = 0, n = L->len, first = 0;
    unsigned long long before = *live;
    unsigned long long table = P->keep || P->churn ? lane_table_kb(L) : 0;
    if (P->keep) {
        blk_sort_by_seq(L->heap, L->len);
        first = (L->len + (size_t)P->keep - 1) / (size_t)P->keep;
    }
    for (size_t k = 0; k < L->len; k++) {
        bool stay = !P->keep ? !(unit(g) < f)
                    : P->together ? k < first : k % (size_t)P->keep == 0;
        if (stay) L->heap[kept++] = L->heap[k];
        else release(P, L->heap[k], live, ops);
    }
    L->len = kept;
    /* the table's pages beyond the survivors leave RSS (the harness's memory, not the
     * allocator's: mmap'd, so they count in no allocator's statistics either) */
    uintptr_t from = ((uintptr_t)(L->heap + kept) + 4095) & ~(uintptr_t)4095,
              to = (uintptr_t)(L->heap + L->cap) & ~(uintptr_t)4095;
    if (from < to) madvise((void *)from, to - from, MADV_DONTNEED);
    if (P->keep) {
        atomic_fetch_add(&P->drain_in[0], n);
        atomic_fetch_add(&P->drain_in[1], kept);
        atomic_fetch_add(&P->drain_in[2], before);
        atomic_fetch_add(&P->drain_in[3], *live);
    }
    if (P->keep || P->churn) {      /* the tables' resident kB before and after */
        atomic_fetch_add(&P->drain_in[4], table);
        atomic_fetch_add(&P->drain_in[5], lane_table_kb(L));
    }
    for (size_t k = kept / 2; k-- > 0;) lane_sift_down(L, k);
}

static void note_peak(struct phased *P, int phase)
{
    unsigned long long sum = 0, old;
    for (int i = 0; i < P->r->threads; i++)
        sum += atomic_load_explicit(&P->lane[i].live_bytes, memory_order_relaxed);
    old = atomic_load_explicit(&P->peak[phase], memory_order_relaxed);
    while (sum > old && !atomic_compare_exchange_weak(&P->peak[phase], &old, sum)) {}
}

/* The phase at t seconds from the start (PHASES: the run is over). With `hold`, a thread
 * stays in the drain until the reader has read the last checkpoint, and reads the ends from
 * the drain on only after it has seen that (the reader may have moved them). */
static int phase_at(struct phased *P, double t)
{
    int now = 0;
    while (now < PHASES) {
        if (now == DRAIN && (P->churn || (P->hold &&
            !atomic_load_explicit(&P->waited, memory_order_acquire))))
            break;                  /* (with churn the drain is a lane's last phase) */
        if (t < P->end[now]) break;
        now++;
    }
    return now;
}
/* One lane's thread state, kept across the threads that run it in turn (with churn). */
struct worker {
    struct phased *P;
    int i;
    struct hb_rng g;
    uint64_t step;
    unsigned long long live, ops, mark;
    int phase;
    double until;                   /* churn: this thread hands the lane on at t0 + until,
                                     * if before the drain; < 0: it runs to the lane's end */
    bool done;                      /* the lane's work is over (its drain, or the run's end) */
    bool drained;                   /* it went through drain_now */
};

/* A lane's steps until the run ends, or (churn) until this thread's share ends or its drain's
 * frees are done. */
static void *work(void *arg)
{
    struct worker *W = arg;
    struct phased *P = W->P;
    struct hb_run *r = P->r;
    struct lane *L = &P->lane[W->i];
    double spike = hb_real(r, "spike"), drain = hb_real(r, "drain");
    bool idle = P->keep != 0;           /* survivors kept: no work through the drain */
    for (;; W->step++) {
        if (W->step % 64 == 0) {
            double t = hb_now() - P->t0;
            int now = phase_at(P, t);
            if (now == PHASES) {
                W->done = true;
                break;
            }
            if (W->until >= 0 && t >= W->until && now < DRAIN) break;   /* the next takes over */
            if (now != W->phase) {
                if (W->phase >= 0) atomic_fetch_add(&P->ops_in[W->phase], W->ops - W->mark);
                W->mark = W->ops;
                if (W->phase < DRAIN && now >= DRAIN) {     /* reached (or skipped) the drain */
                    if (now == DRAIN) {
                        if ((P->keep || P->churn) && !atomic_exchange(&P->pre_taken, true))
                            hb_series_read(&P->pre_row);
                        drain_now(P, L, &W->g, &W->live, &W->ops);
                        W->drained = true;
                        if (P->collect) {               /* the program says it drained */
                            double t1 = hb_now();
                            hb_collect();
                            P->collect_s[W->i] = hb_now() - t1;
                        }
                    }
                    if (P->churn) {         /* this thread exits; its slot counts the drain */
                        W->phase = now;
                        atomic_store_explicit(&L->live_bytes, W->live, memory_order_relaxed);
                        W->done = true;
                        break;
                    }
                    if (now == DRAIN) P->drained_at[W->i] = hb_now() - P->t0;
                    atomic_fetch_add_explicit(&P->drained, 1, memory_order_release);
                }
            }
            W->phase = now;
            atomic_store_explicit(&L->live_bytes, W->live, memory_order_relaxed);
            note_peak(P, W->phase);
            if (idle && now == DRAIN) {         /* the survivors wait; so does the thread */
                hb_sleep_until(hb_now() + 0.001);
                W->step--;                      /* (the same step, its phase read again) */
                continue;
            }
        }
        double rate = W->phase == SPIKE || W->phase == BURST ? spike
                      : W->phase == DRAIN ? 1.0 - drain : 1.0;
        long long k = (long long)rate;
        if (unit(&W->g) < rate - (double)k) k++;
        while (k-- > 0) allocate(P, L, &W->g, W->step, &W->live, &W->ops);
        while (L->len && L->heap[0].death <= W->step)
            release(P, lane_pop(L), &W->live, &W->ops);
        atomic_store_explicit(&L->live_bytes, W->live, memory_order_relaxed);
    }
    return NULL;
}

static void phased_thread(struct hb_run *r, int i, void *arg)
{
    struct phased *P = arg;
    if (i == r->threads) {
        hb_phased_read_checkpoints(P);
        return;
    }
    struct worker W = { .P = P, .i = i, .phase = -1, .until = -1 };
    hb_rng_seed(&W.g, r->seed, (uint64_t)i + 2800);
    P->drained_at[i] = -1;
    if (!P->churn) {
        work(&W);
    } else {                        /* g threads in turn: created, run a share, exit */
        for (long long gen = 0; !W.done; gen++) {
            W.until = gen + 1 < P->churn ? P->end[SPIKE] * (double)(gen + 1) / (double)P->churn
                                         : -1;
            pthread_t t;
            int e = pthread_create(&t, NULL, work, &W);
            if (e) hb_fail("pthread_create (churn): %s", strerror(e));
            pthread_join(t, NULL);
            atomic_fetch_add(&P->threads_made, 1);
        }
        if (W.drained) P->drained_at[i] = hb_now() - P->t0;     /* its last thread is gone */
    }
    if (W.phase >= 0) atomic_fetch_add(&P->ops_in[W.phase], W.ops - W.mark);
    if (W.phase < DRAIN || P->churn)        /* (with churn: its last thread has exited) */
        atomic_fetch_add_explicit(&P->drained, 1, memory_order_release);
    atomic_fetch_add(&r->ops, W.ops);
}

/* What the series saw during each phase: peaks and the last row's values (null without it). */
static void phase_record(struct phased *P, int p, const struct hb_series_row *rows, int n,
                         bool last)
{
    static const struct { const char *key; int col; bool peak; } seen[] = {
        { "held_bytes_peak", HB_SER_HELD, true },   { "held_bytes_end", HB_SER_HELD, false },
        { "rss_kb_peak", HB_SER_RSS, true },        { "rss_kb_end", HB_SER_RSS, false },
        { "private_dirty_kb_end", HB_SER_PRIVATE_DIRTY, false },
        { "lazyfree_kb_end", HB_SER_LAZYFREE, false },
    };
    double start = p ? P->end[p - 1] : 0;
    struct hb_json *j = P->r->extra;
    hb_json_obj(j, NULL);
    hb_json_str(j, "name", phase_name[p]);
    hb_json_real(j, "start_s", start);
    hb_json_real(j, "end_s", P->end[p]);
    hb_json_uint(j, "live_bytes_peak", atomic_load(&P->peak[p]));
    for (size_t s = 0; s < sizeof seen / sizeof seen[0]; s++) {
        long long v = -1;
        for (int k = 0; k < n; k++) {
            /* the last phase also takes the row read at the end (t_s = wall_s) */
            if (rows[k].t_s < start || (rows[k].t_s >= P->end[p] && !last)) continue;
            long long x = rows[k].v[seen[s].col];
            if (!seen[s].peak || x > v) v = x;
        }
        if (v < 0) hb_json_null(j, seen[s].key);
        else hb_json_int(j, seen[s].key, v);
    }
    hb_json_end(j, '}');
}

int hb_phased(struct hb_run *r)
{
    double seconds = hb_real(r, "seconds"), f[3] = { hb_real(r, "steady_frac"),
                     hb_real(r, "spike_frac"), hb_real(r, "drain_frac") };
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size") ||
        hb_int(r, "large_min") < 1 || hb_int(r, "large_max") < hb_int(r, "large_min") ||
        hb_int(r, "live") < 1 || hb_real(r, "drain") > 1 || hb_real(r, "large_p") > 1 ||
        f[0] + f[1] + f[2] > 1 || seconds <= 0)
        hb_usage("phased needs 1 <= min_size <= max_size, 1 <= large_min <= large_max, live >= "
                 "1, drain and large_p <= 1, steady_frac + spike_frac + drain_frac <= 1");
    if (hb_int(r, "keep_every") < 0 || hb_int(r, "keep_first") < 0 ||
        (hb_int(r, "keep_every") && hb_int(r, "keep_first")))
        hb_usage("phased: keep_every %lld, keep_first %lld: each 0 (off) or a k >= 1 (1 block "
                 "of k survives the drain), at most one of them set", hb_int(r, "keep_every"),
                 hb_int(r, "keep_first"));
    if (hb_int(r, "churn") < 0 || (hb_int(r, "churn") && hb_int(r, "next_burst")))
        hb_usage("phased: churn %lld: 0 (off) or the number of threads g >= 1 that run each "
                 "lane in turn, and not with next_burst (the run ends at the last checkpoint)",
                 hb_int(r, "churn"));
    struct phased P = { .r = r, .salt = hb_mix(r->seed ^ 0x9a5ed), .drained_s = -1,
                        .hold = hb_int(r, "next_burst") != 0,
                        .keep = hb_int(r, "keep_every") ? hb_int(r, "keep_every")
                                                        : hb_int(r, "keep_first"),
                        .together = hb_int(r, "keep_first") != 0, .churn = hb_int(r, "churn") };
    hb_phased_parse_checkpoints(&P, hb_str(r, "checkpoints"));
    P.waited = !P.hold || !P.n_cp;
    double drain_s = f[2] * seconds;
    if (P.hold && P.n_cp && P.cp[P.n_cp - 1] > drain_s) drain_s = P.cp[P.n_cp - 1];
    P.end[STEADY] = f[0] * seconds;
    P.end[SPIKE] = P.end[STEADY] + f[1] * seconds;
    P.end[DRAIN] = P.end[SPIKE] + drain_s;
    P.end[BURST] = P.end[DRAIN] + (P.hold ? f[1] * seconds : 0);
    P.end[STEADY2] = P.end[BURST] + (1 - f[0] - f[1] - f[2]) * seconds;
    if (!P.hold) P.end[STEADY2] = seconds;          /* exactly, whatever the rounding */
    double mean_life = (double)hb_int(r, "live");
    if (*hb_str(r, "trace"))
        mean_life = hb_phased_learn(hb_str(r, "trace"), &P.learned, &P.n_learned);
    /* room for the spike's live set and its spread (at most 2^20 blocks a thread); when
     * full, the soonest-dying block goes */
    double spike = hb_real(r, "spike") > 1 ? hb_real(r, "spike") : 1;
    double want = mean_life * spike * 2 + 1024;
    size_t cap = want < (double)(1 << 20) ? (size_t)want : (size_t)1 << 20;
    if (!(P.lane = aligned_alloc(64, sizeof *P.lane * (size_t)r->threads)) ||
        !(P.drained_at = calloc((size_t)r->threads, sizeof *P.drained_at)) ||
        !(P.collect_s = malloc((size_t)r->threads * sizeof *P.collect_s)))
        hb_fail("out of memory");
    for (int i = 0; i < r->threads; i++) P.collect_s[i] = -1;
    P.collect_asked = hb_int(r, "collect") != 0;
    if (P.collect_asked) P.collect = hb_collect_find();   /* before the threads */
    memset(P.lane, 0, sizeof *P.lane * (size_t)r->threads);
    for (int i = 0; i < r->threads; i++) {
        P.lane[i].cap = cap;
        /* from mmap, not malloc: the harness's table is not the allocator's memory */
        P.lane[i].heap = mmap(NULL, cap * sizeof *P.lane[i].heap, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (P.lane[i].heap == MAP_FAILED) hb_fail("mmap of a lane's table failed");
    }
    hb_begin(r);
    P.t0 = r->t0;
    hb_parallel(r, r->threads + (P.n_cp > 0), phased_thread, &P);   /* + the reader */
    hb_end(r);
    if (P.churn) {                  /* the drain, the lanes' last phase, ended with the run */
        for (int p = DRAIN; p < PHASES; p++)
            P.end[p] = r->t1 - r->t0 > P.end[p - 1] ? r->t1 - r->t0 : P.end[p - 1];
    }

    const struct hb_series_row *rows;
    int n = hb_series_rows(&rows);
    hb_json_arr(r->extra, "phases");
    for (int p = 0; p < PHASES; p++)
        if ((p != BURST || P.hold) && (p <= DRAIN || !P.churn))
            phase_record(&P, p, rows, n, p == (P.churn ? DRAIN : STEADY2));
    hb_json_end(r->extra, ']');
    hb_phased_record_checkpoints(&P);
    for (int i = 0; i < r->threads; i++) {
        for (size_t k = 0; k < P.lane[i].len; k++)
            hb_release(P.lane[i].heap[k].p, P.lane[i].heap[k].n, P.salt);
        munmap(P.lane[i].heap, P.lane[i].cap * sizeof *P.lane[i].heap);
    }
    free(P.lane);
    free(P.drained_at);
    free(P.collect_s);
    free(P.learned);
    return 0;
}
