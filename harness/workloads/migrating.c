/* migrating.c — objects that migrate between threads, of many sizes, while the heap grows and
 * shrinks (issue 51): the pattern of a program whose threads hand objects of every size to
 * each other, whose threads come and go, and whose live set rises to a peak and falls again.
 * larson replaces blocks within one thread's table, prodcons and xfree hand over one size
 * class one way, phased is a burst on each thread alone; this workload mixes all three.
 *
 * T lanes (--threads T) each keep a live set of stamped blocks and run `rounds` rounds. A
 * round of a lane:
 *   1. receive: take the message another lane sent it D - 1 rounds ago (D = `depth`); keep
 *      each block it holds with probability `keep` (while the live set has room: 2 x `live`
 *      blocks), else check and free it there: a free of a block another thread allocated;
 *   2. work: `steps` steps towards the round's target live set: a step frees a random block
 *      when the lane holds more than the target, allocates one when it holds fewer, else
 *      replaces a random one (a free and a malloc);
 *   3. send: hand `share` of its live blocks, chosen at random, to lane (i + s) mod T, where
 *      s in 1..T-1 is drawn per round from the seed (a rotation: every lane receives exactly
 *      one message a round; with T = 1 a lane sends to itself, i.e. to its later threads).
 * The target follows `cycles` triangles over the run: `trough` x `live` blocks at the start
 * of a cycle, `live` at its middle, `trough` x `live` at its end (the heap grows and shrinks).
 * Sizes are skewed: min_size x (max_size / min_size)^(u^skew), u uniform in [0, 1), so with
 * the defaults (8 B..32 KiB, skew 3) half the blocks are under 23 B, one in six is 1 KiB or
 * more and one in seventeen 8 KiB or more (mean about 1.5 KiB).
 *
 * Threads come and go: a lane's thread lives `generation` rounds (the lanes' ends are
 * staggered), then creates its successor, which inherits the lane's live set, random stream
 * and mailbox, and exits; the successor joins it. So blocks are freed by threads other than
 * the (possibly exited) ones that allocated them, and an allocator's per-thread heaps and
 * caches are abandoned and reused while other threads keep going.
 *
 * The mailbox of a lane is a ring of D slots, one message each, tagged with the round of the
 * message it holds or waits for (a waiting side yields): the sender of round k fills slot
 * k mod D of its target once that lane has emptied the slot of round k - D (in its round
 * k - 1), and the target takes it in round k + D - 1. Each wait is for a lane in an earlier
 * round, so none deadlocks, however far apart the lanes run (a bare full/empty flag would
 * let a lane D rounds ahead fill the slot a slower sender needs). Because every lane
 * receives exactly one sender's message a round and takes its decisions from its own random
 * stream, every count (mallocs, frees, blocks sent and kept) is a function of the seed
 * alone, whatever the timing. After the last round each lane drains the messages still in
 * flight (freeing their blocks) and frees its live set: inside the measured phase, so
 * mallocs = frees. ops = mallocs + frees.
 *
 * Blocks are stamped with a per-run salt (they change threads) on malloc and checked before
 * every free (harness/blocks.c: all of a block up to 64 bytes, both ends of a larger one). */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "../hlbench.h"

const struct hb_param hb_migrating_params[] = {
    { "rounds",     HB_INT,  "1000",  true,  "rounds of each lane (receive, steps, send)" },
    { "steps",      HB_INT,  "1000",  false, "steps a round: a free, a malloc or both" },
    { "live",       HB_INT,  "2000",  false, "a lane's target live set at a cycle's peak, "
                                             "blocks" },
    { "trough",     HB_REAL, "0.1",   false, "the target at a cycle's start and end, as a "
                                             "fraction of live" },
    { "cycles",     HB_INT,  "2",     false, "grow-and-shrink cycles over the run" },
    { "share",      HB_REAL, "0.1",   false, "fraction of its live blocks a lane hands to "
                                             "another lane each round" },
    { "keep",       HB_REAL, "0.5",   false, "probability a received block is kept (else "
                                             "freed at once)" },
    { "generation", HB_INT,  "25",    false, "rounds a lane's thread lives before a new "
                                             "thread takes the lane over" },
    { "depth",      HB_INT,  "4",     false, "mailbox slots per lane (messages in flight + 1)" },
    { "min_size",   HB_INT,  "8",     false, "smallest block, bytes" },
    { "max_size",   HB_INT,  "32768", false, "largest block, bytes" },
    { "skew",       HB_REAL, "3",     false, "size = min x (max/min)^(u^skew): 1 log-uniform, "
                                             "larger: more small blocks" },
    { NULL, 0, NULL, false, NULL },
};

struct mg_slot {
    /* 2m: empty, waiting for the message of round m; 2m + 1: holding that message */
    _Atomic long long seq;
    long long n;
    struct hb_block *b;        /* room for a whole message */
};

struct mg;

struct mg_lane {
    struct mg *M;
    int i;
    struct hb_rng g;                   /* carried from thread to thread */
    struct hb_block *set;              /* the live set: cap entries, n used */
    long long n, round;                /* round: the next round to run */
    size_t bytes;
    struct mg_slot *box;               /* depth slots: messages to this lane */
    pthread_t prev;                    /* the thread that created the running one */
    bool has_prev;
    unsigned long long mallocs, frees, sent, kept, waits, threads;
    long long n_peak;
    size_t bytes_peak;
    char pad[64];
};

struct mg {
    struct hb_run *r;
    struct mg_lane *lanes;
    long long rounds, steps, live, cap, msg_cap, cycles, generation, depth;
    double trough, share, keep, skew, ratio;   /* ratio: max_size / min_size */
    uint64_t lo, hi, salt, keep_below;
    pthread_t *last;                   /* each lane's final thread, for the main thread */
    int done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static size_t mg_size(struct mg *M, struct hb_rng *g)
{
    double u = (double)(hb_rand(g) >> 11) * 0x1p-53;
    double s = (double)M->lo * pow(M->ratio, pow(u, M->skew));
    if (s < (double)M->lo) return (size_t)M->lo;
    if (s > (double)M->hi) return (size_t)M->hi;
    return (size_t)s;
}

/* The round's target live set: `cycles` triangles from trough x live up to live and back. */
static long long mg_target(const struct mg *M, long long k)
{
    double x = fmod((double)k * (double)M->cycles / (double)M->rounds, 1.0);
    double tri = x < 0.5 ? 2 * x : 2 - 2 * x;
    return (long long)((double)M->live * (M->trough + (1 - M->trough) * tri) + 0.5);
}

/* The lane that lane i sends to in round k: a rotation by 1..T-1 drawn from the seed. */
static int mg_target_lane(const struct mg *M, int i, long long k)
{
    int T = M->r->threads;
    if (T == 1) return i;
    int s = 1 + (int)(hb_mix(M->r->seed ^ 0x51a9e ^ ((uint64_t)k << 20)) % (uint64_t)(T - 1));
    return (i + s) % T;
}

static void mg_wait(struct mg_lane *L, _Atomic long long *seq, long long value)
{
    while (atomic_load_explicit(seq, memory_order_acquire) != value) {
        L->waits++;
        sched_yield();
    }
}

static void mg_free_at(struct mg_lane *L, long long k)
{
    struct hb_block b = L->set[k];
    L->set[k] = L->set[--L->n];
    L->bytes -= b.n;
    hb_release(b.p, b.n, L->M->salt);
    L->frees++;
}

static void mg_alloc(struct mg_lane *L)
{
    size_t n = mg_size(L->M, &L->g);
    L->set[L->n++] = (struct hb_block){ hb_alloc(n, L->M->salt), n };
    L->bytes += n;
    L->mallocs++;
}

/* Take the message of round k - depth + 1; keep or free its blocks (free all when `drain`). */
static void mg_receive(struct mg_lane *L, long long k, bool drain)
{
    struct mg *M = L->M;
    long long from = k - M->depth + 1;
    if (from < 0) return;
    struct mg_slot *s = &L->box[from % M->depth];
    mg_wait(L, &s->seq, 2 * from + 1);
    for (long long j = 0; j < s->n; j++) {
        struct hb_block b = s->b[j];
        bool keep = hb_rand(&L->g) < M->keep_below;
        if (!drain && keep && L->n < M->cap) {
            L->set[L->n++] = b;
            L->bytes += b.n;
            L->kept++;
        } else {
            hb_release(b.p, b.n, M->salt);
            L->frees++;
        }
    }
    s->n = 0;
    atomic_store_explicit(&s->seq, 2 * (from + M->depth), memory_order_release);
}

static void mg_send(struct mg_lane *L, long long k)
{
    struct mg *M = L->M;
    struct mg_slot *s = &M->lanes[mg_target_lane(M, L->i, k)].box[k % M->depth];
    long long count = (long long)((double)L->n * M->share);
    mg_wait(L, &s->seq, 2 * k);
    for (long long j = 0; j < count; j++) {
        long long v = (long long)(hb_rand(&L->g) % (uint64_t)L->n);
        s->b[j] = L->set[v];
        L->bytes -= L->set[v].n;
        L->set[v] = L->set[--L->n];
    }
    s->n = count;
    L->sent += (unsigned long long)count;
    atomic_store_explicit(&s->seq, 2 * k + 1, memory_order_release);
}

static void mg_round(struct mg_lane *L, long long k)
{
    struct mg *M = L->M;
    mg_receive(L, k, false);
    long long target = mg_target(M, k);
    for (long long j = 0; j < M->steps; j++) {
        if (L->n > target) {
            mg_free_at(L, (long long)(hb_rand(&L->g) % (uint64_t)L->n));
        } else if (L->n < target || L->n == 0) {
            mg_alloc(L);
        } else {
            mg_free_at(L, (long long)(hb_rand(&L->g) % (uint64_t)L->n));
            mg_alloc(L);
        }
    }
    if (L->n > L->n_peak) L->n_peak = L->n;
    if (L->bytes > L->bytes_peak) L->bytes_peak = L->bytes;
    mg_send(L, k);
}

static void *mg_thread(void *p)
{
    struct mg_lane *L = p;
    struct mg *M = L->M;
    hb_pin_self(M->r, L->i);
    /* lane i's threads end where (k + 1 + offset) is a multiple of generation */
    long long offset = (long long)L->i * M->generation / M->r->threads;
    bool handed_on = false;
    while (L->round < M->rounds) {
        long long k = L->round++;
        mg_round(L, k);
        if ((k + 1 + offset) % M->generation == 0 && L->round < M->rounds) {
            handed_on = true;
            break;
        }
    }
    if (L->has_prev) pthread_join(L->prev, NULL);
    if (handed_on) {
        pthread_t next;
        L->prev = pthread_self();
        L->has_prev = true;
        L->threads++;
        int e = pthread_create(&next, NULL, mg_thread, L);
        if (e) hb_fail("pthread_create: %s", strerror(e));
        return NULL;
    }
    /* the end: the messages still in flight, then the live set */
    for (long long k = M->rounds; k < M->rounds + M->depth - 1; k++) mg_receive(L, k, true);
    while (L->n > 0) mg_free_at(L, L->n - 1);
    pthread_mutex_lock(&M->mu);
    M->last[L->i] = pthread_self();
    M->done++;
    pthread_cond_signal(&M->cv);
    pthread_mutex_unlock(&M->mu);
    return NULL;
}

int hb_migrating(struct hb_run *r)
{
    struct mg M = { .r = r, .rounds = hb_int(r, "rounds"), .steps = hb_int(r, "steps"),
                    .live = hb_int(r, "live"), .cycles = hb_int(r, "cycles"),
                    .generation = hb_int(r, "generation"), .depth = hb_int(r, "depth"),
                    .trough = hb_real(r, "trough"), .share = hb_real(r, "share"),
                    .keep = hb_real(r, "keep"), .skew = hb_real(r, "skew"),
                    .lo = (uint64_t)hb_int(r, "min_size"), .hi = (uint64_t)hb_int(r, "max_size"),
                    .salt = hb_mix(r->seed ^ 0x3197e5),
                    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    if (M.live < 1 || M.cycles < 1 || M.generation < 1 || M.depth < 2 || M.lo < 1 ||
        M.hi < M.lo || M.trough > 1 || M.share > 1 || M.keep > 1)
        hb_usage("migrating-objects needs live, cycles, generation >= 1, depth >= 2, "
                 "1 <= min_size <= max_size, trough, share and keep <= 1");
    M.ratio = (double)M.hi / (double)M.lo;
    M.keep_below = M.keep >= 1 ? UINT64_MAX : (uint64_t)(M.keep * 0x1p64);
    M.cap = 2 * M.live;
    M.msg_cap = (long long)((double)M.cap * M.share) + 1;
    int T = r->threads;
    M.lanes = calloc((size_t)T, sizeof *M.lanes);
    M.last = calloc((size_t)T, sizeof *M.last);
    if (!M.lanes || !M.last) hb_fail("out of memory");
    for (int i = 0; i < T; i++) {
        struct mg_lane *L = &M.lanes[i];
        *L = (struct mg_lane){ .M = &M, .i = i, .threads = 1 };
        hb_rng_seed(&L->g, r->seed, (uint64_t)i + 5100);
        L->set = calloc((size_t)M.cap, sizeof *L->set);
        L->box = calloc((size_t)M.depth, sizeof *L->box);
        if (!L->set || !L->box) hb_fail("out of memory");
        for (long long d = 0; d < M.depth; d++) {
            if (!(L->box[d].b = calloc((size_t)M.msg_cap, sizeof *L->box[d].b)))
                hb_fail("out of memory");
            atomic_init(&L->box[d].seq, 2 * d);
        }
    }
    hb_begin(r);
    for (int i = 0; i < T; i++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, mg_thread, &M.lanes[i]);
        if (e) hb_fail("pthread_create: %s", strerror(e));   /* joined by its successor */
    }
    pthread_mutex_lock(&M.mu);
    while (M.done < T) pthread_cond_wait(&M.cv, &M.mu);
    pthread_mutex_unlock(&M.mu);
    unsigned long long mallocs = 0, frees = 0, sent = 0, kept = 0, waits = 0, threads = 0;
    long long n_peak = 0;
    size_t bytes_peak = 0;
    for (int i = 0; i < T; i++) {
        struct mg_lane *L = &M.lanes[i];
        pthread_join(M.last[i], NULL);
        mallocs += L->mallocs;
        frees += L->frees;
        sent += L->sent;
        kept += L->kept;
        waits += L->waits;
        threads += L->threads;
        if (L->n_peak > n_peak) n_peak = L->n_peak;
        if (L->bytes_peak > bytes_peak) bytes_peak = L->bytes_peak;
    }
    atomic_fetch_add(&r->ops, mallocs + frees);
    hb_end(r);
    if (mallocs != frees)
        hb_fail("migrating-objects: %llu mallocs but %llu frees: a block was lost", mallocs, frees);
    hb_json_uint(r->extra, "mallocs", mallocs);
    hb_json_uint(r->extra, "frees", frees);
    hb_json_uint(r->extra, "sent", sent);
    hb_json_uint(r->extra, "kept", kept);
    hb_json_uint(r->extra, "threads_created", threads);
    hb_json_int(r->extra, "lane_blocks_peak", n_peak);
    hb_json_uint(r->extra, "lane_bytes_peak", (unsigned long long)bytes_peak);
    hb_json_uint(r->extra, "waits", waits);
    for (int i = 0; i < T; i++) {
        for (long long d = 0; d < M.depth; d++) free(M.lanes[i].box[d].b);
        free(M.lanes[i].box);
        free(M.lanes[i].set);
    }
    free(M.lanes);
    free(M.last);
    return 0;
}
