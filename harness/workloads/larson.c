/* larson.c — the server simulation of Larson and Krishnan (ISMM 1998), as the Hoard paper
 * (§5.2) and Michael's PLDI 2004 evaluation (§4.1) run it: threads replace random slots of
 * their table with new random-sized blocks, and a table passes to a successor thread
 * ("bleeding"). Two ways to pass it: larson joins each generation from a lane thread before
 * starting the next; larson-replace lets each generation create its successor and exit, as
 * Larson's own program does. (classic.c holds the Hoard paper's other workloads.) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "../hlbench.h"

struct slot { void *p; size_t n; };     /* a table's entry: a stamped block */

/* ---- larson: replace random slots; each table passes to a successor thread ("bleeding") ---- */

const struct hb_param hb_larson_params[] = {
    { "seconds",  HB_REAL, "30",    true,  "length of the parallel phase" },
    { "slots",    HB_INT,  "1024",  false, "blocks in each thread's table" },
    { "min_size", HB_INT,  "10",    false, "smallest block, bytes (Michael: 16)" },
    { "max_size", HB_INT,  "100",   false, "largest block, bytes (Michael: 80)" },
    { "rounds",   HB_INT,  "10000", false, "free/malloc pairs a thread does before a new "
                                           "thread takes over its table" },
    { NULL, 0, NULL, false, NULL },
};

struct larson {
    struct hb_run *r;
    struct slot *table;        /* threads x slots */
    long long slots;
    double deadline;
    uint64_t salt;             /* per run: blocks outlive the thread that made them */
    _Atomic long long generations;
};

struct generation {
    struct larson *L;
    int lane;
    uint64_t seq;
    long long pairs;
    bool out_of_time;
};

static void *larson_generation(void *p)
{
    struct generation *gen = p;
    struct larson *L = gen->L;
    struct hb_run *r = L->r;
    struct slot *t = &L->table[(size_t)gen->lane * (size_t)L->slots];
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    long long rounds = hb_int(r, "rounds");
    struct hb_rng g;
    hb_pin_self(r, gen->lane);
    hb_rng_seed(&g, r->seed, ((uint64_t)gen->lane << 32) + gen->seq);
    for (gen->pairs = 0; gen->pairs < rounds; gen->pairs++) {
        if ((gen->pairs & 63) == 0 && hb_now() >= L->deadline) {
            gen->out_of_time = true;
            break;
        }
        struct slot *s = &t[hb_rand(&g) % (uint64_t)L->slots];
        hb_release(s->p, s->n, L->salt);
        s->n = (size_t)hb_range(&g, lo, hi);
        s->p = hb_alloc(s->n, L->salt);
    }
    return NULL;
}

/* One lane: a chain of thread generations sharing one table, until the deadline. */
static void larson_lane(struct hb_run *r, int i, void *arg)
{
    struct larson *L = arg;
    long long pairs = 0, generations = 0;
    for (uint64_t seq = 0;; seq++) {
        struct generation gen = { .L = L, .lane = i, .seq = seq };
        pthread_t th;
        if (pthread_create(&th, NULL, larson_generation, &gen)) hb_fail("pthread_create failed");
        pthread_join(th, NULL);
        pairs += gen.pairs;
        generations++;
        if (gen.out_of_time) break;
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * pairs));
    atomic_fetch_add(&L->generations, generations);
}

int hb_larson(struct hb_run *r)
{
    struct larson L = { .r = r, .slots = hb_int(r, "slots"), .salt = hb_mix(r->seed ^ 0x1a25) };
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    if (lo < 1 || hi < lo || L.slots < 1)
        hb_usage("larson needs 1 <= min_size <= max_size, slots >= 1");
    size_t total = (size_t)L.slots * (size_t)r->threads;
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, 0xfeed);
    if (!(L.table = calloc(total, sizeof *L.table))) hb_fail("out of memory");
    /* Set-up (not measured): one thread fills every table and churns it in random order. */
    for (size_t k = 0; k < total; k++) {
        L.table[k].n = (size_t)hb_range(&g, lo, hi);
        L.table[k].p = hb_alloc(L.table[k].n, L.salt);
    }
    for (size_t k = 0; k < total; k++) {
        struct slot *s = &L.table[hb_rand(&g) % total];
        hb_release(s->p, s->n, L.salt);
        s->n = (size_t)hb_range(&g, lo, hi);
        s->p = hb_alloc(s->n, L.salt);
    }
    hb_begin(r);
    L.deadline = r->t0 + hb_real(r, "seconds");
    hb_parallel(r, r->threads, larson_lane, &L);
    hb_end(r);
    hb_json_int(r->extra, "generations", atomic_load(&L.generations));
    for (size_t k = 0; k < total; k++) hb_release(L.table[k].p, L.table[k].n, L.salt);
    free(L.table);
    return 0;
}

/* ---- larson-replace: Larson's own replacement of threads -------------------------------------
 * As Larson's program (Larson and Krishnan, ISMM 1998) does it: a generation does rounds x
 * slots free/malloc pairs on random slots of its lane's table, then creates its successor itself and exits, so the successor starts while its
 * predecessor is still alive (and, in an allocator that indexes heaps by thread, takes another
 * id than its predecessor's). `larson` instead joins each generation from a lane thread before
 * starting the next, so the successor reuses the exited thread's id. The random sequence goes on
 * from generation to generation, as Larson's thread data does. */

const struct hb_param hb_larson_replace_params[] = {
    { "seconds",  HB_REAL, "1",    true,  "length of the parallel phase (Larson: sleep_cnt)" },
    { "slots",    HB_INT,  "5000", false, "blocks in each thread's table (Larson: chperthread)" },
    { "min_size", HB_INT,  "8",    false, "smallest block, bytes" },
    { "max_size", HB_INT,  "1000", false, "largest block, bytes" },
    { "rounds",   HB_INT,  "100",  false, "a generation does rounds x slots free/malloc pairs, "
                                          "then creates its successor and exits (Larson: "
                                          "num_rounds)" },
    { NULL, 0, NULL, false, NULL },
};

struct lr_lane {
    struct lr *L;
    int i;
    struct hb_rng g;           /* carried from generation to generation */
    pthread_t prev;            /* the generation that created the running one */
    bool has_prev;
    long long pairs, generations;
};

struct lr {
    struct hb_run *r;
    struct slot *table;        /* threads x slots */
    long long slots, per_gen;
    uint64_t lo, hi, salt;
    double deadline;
    struct lr_lane *lanes;
    pthread_t *last;           /* each lane's final generation, for the main thread to join */
    int done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *lr_generation(void *p)
{
    struct lr_lane *lane = p;
    struct lr *L = lane->L;
    struct slot *t = &L->table[(size_t)lane->i * (size_t)L->slots];
    bool out_of_time = false;
    long long k;
    hb_pin_self(L->r, lane->i);
    for (k = 0; k < L->per_gen; k++) {
        if ((k & 63) == 0 && hb_now() >= L->deadline) {
            out_of_time = true;
            break;
        }
        struct slot *s = &t[hb_rand(&lane->g) % (uint64_t)L->slots];
        hb_release(s->p, s->n, L->salt);
        s->n = (size_t)hb_range(&lane->g, L->lo, L->hi);
        s->p = hb_alloc(s->n, L->salt);
    }
    lane->pairs += k;
    lane->generations++;
    /* The predecessor exited right after creating this thread: join it now (Larson never
     * joins; this only frees its stack). */
    if (lane->has_prev) pthread_join(lane->prev, NULL);
    if (out_of_time) {
        pthread_mutex_lock(&L->mu);
        L->last[lane->i] = pthread_self();
        L->done++;
        pthread_cond_signal(&L->cv);
        pthread_mutex_unlock(&L->mu);
        return NULL;
    }
    pthread_t next;
    lane->prev = pthread_self();
    lane->has_prev = true;
    int e = pthread_create(&next, NULL, lr_generation, lane);
    if (e) hb_fail("pthread_create: %s", strerror(e));
    return NULL;
}

int hb_larson_replace(struct hb_run *r)
{
    struct lr L = { .r = r, .slots = hb_int(r, "slots"), .salt = hb_mix(r->seed ^ 0x1a26),
                    .lo = (uint64_t)hb_int(r, "min_size"), .hi = (uint64_t)hb_int(r, "max_size"),
                    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    if (L.lo < 1 || L.hi < L.lo || L.slots < 1 || hb_int(r, "rounds") < 1)
        hb_usage("larson-replace needs 1 <= min_size <= max_size, slots >= 1, rounds >= 1");
    L.per_gen = hb_int(r, "rounds") * L.slots;
    size_t total = (size_t)L.slots * (size_t)r->threads;
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, 0xfeed);
    L.table = calloc(total, sizeof *L.table);
    L.lanes = calloc((size_t)r->threads, sizeof *L.lanes);
    L.last = calloc((size_t)r->threads, sizeof *L.last);
    if (!L.table || !L.lanes || !L.last) hb_fail("out of memory");
    /* Set-up (not measured), Larson's warm-up on one thread: fill every table, shuffle it,
     * then replace 4 x total random blocks. */
    for (size_t k = 0; k < total; k++) {
        L.table[k].n = (size_t)hb_range(&g, L.lo, L.hi);
        L.table[k].p = hb_alloc(L.table[k].n, L.salt);
    }
    for (size_t k = total; k > 1; k--) {
        size_t v = hb_rand(&g) % k;
        struct slot tmp = L.table[v];
        L.table[v] = L.table[k - 1];
        L.table[k - 1] = tmp;
    }
    for (size_t k = 0; k < 4 * total; k++) {
        struct slot *s = &L.table[hb_rand(&g) % total];
        hb_release(s->p, s->n, L.salt);
        s->n = (size_t)hb_range(&g, L.lo, L.hi);
        s->p = hb_alloc(s->n, L.salt);
    }
    hb_begin(r);
    L.deadline = r->t0 + hb_real(r, "seconds");
    for (int i = 0; i < r->threads; i++) {
        L.lanes[i] = (struct lr_lane){ .L = &L, .i = i };
        hb_rng_seed(&L.lanes[i].g, r->seed, (uint64_t)i + 1);
        pthread_t t;
        int e = pthread_create(&t, NULL, lr_generation, &L.lanes[i]);
        if (e) hb_fail("pthread_create: %s", strerror(e));   /* joined by its successor */
    }
    pthread_mutex_lock(&L.mu);
    while (L.done < r->threads) pthread_cond_wait(&L.cv, &L.mu);
    pthread_mutex_unlock(&L.mu);
    long long pairs = 0, generations = 0;
    for (int i = 0; i < r->threads; i++) {
        pthread_join(L.last[i], NULL);
        pairs += L.lanes[i].pairs;
        generations += L.lanes[i].generations;
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * pairs));
    hb_end(r);
    hb_json_int(r->extra, "generations", generations);
    for (size_t k = 0; k < total; k++) hb_release(L.table[k].p, L.table[k].n, L.salt);
    free(L.table);
    free(L.lanes);
    free(L.last);
    return 0;
}
