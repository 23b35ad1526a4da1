/* prodcons.c — cross-thread frees: Michael's producer-consumer benchmark (PLDI 2004 §4.1)
 * and the two blowup patterns of the Hoard paper (§2.2): a producer whose blocks a consumer
 * frees (unbounded blowup for pure private heaps) and a round robin of P threads each freeing
 * its neighbour's blocks (O(P) blowup for ownership heaps). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "../hlbench.h"

/* ---- prodcons ------------------------------------------------------------------------------ */

const struct hb_param hb_prodcons_params[] = {
    { "seconds",     HB_REAL, "30",      true,  "how long the producer produces" },
    { "database",    HB_INT,  "1000000", false, "items in the database the tasks index" },
    { "work",        HB_INT,  "500",     false, "units of local work per task (500/750/1000)" },
    { "min_indexes", HB_INT,  "10",      false, "fewest indexes in a task (4 bytes each)" },
    { "max_indexes", HB_INT,  "20",      false, "most indexes in a task" },
    { "task_size",   HB_INT,  "32",      false, "bytes of a task structure (>= 32)" },
    { "node_size",   HB_INT,  "16",      false, "bytes of a queue node (>= 16)" },
    { "queue_limit", HB_INT,  "1000",    false, "above this many queued tasks the producer "
                                                "helps the consumers" },
    { NULL, 0, NULL, false, NULL },
};

struct task {                  /* 32 bytes */
    uint32_t *index;
    uint32_t n, pad;
    uint64_t sum;              /* checksum of index[] */
    uint64_t stamp;
};
struct node { struct node *next; struct task *task; };

struct prodcons {
    struct hb_run *r;
    uint32_t *db;
    size_t task_size, node_size;
    uint64_t salt;
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    struct node *head, *tail;
    long long queued;
    bool done;
    _Atomic long long helped;
};

static uint64_t index_sum(const uint32_t *x, uint32_t n)
{
    uint64_t s = n;
    for (uint32_t k = 0; k < n; k++) s = hb_mix(s ^ x[k]);
    return s;
}

/* Histogram of database values at the task's indexes, then `work` units of local work. */
static void process(struct prodcons *Q, struct node *node)
{
    struct task *t = node->task;
    if (t->stamp != hb_mix((uintptr_t)t ^ Q->salt) || t->sum != index_sum(t->index, t->n))
        hb_fail("task %p was overwritten while queued", (void *)t);
    uint32_t *hist = calloc(16, sizeof *hist);
    if (!hist) hb_fail("calloc returned NULL");
    for (uint32_t k = 0; k < t->n; k++) hist[Q->db[t->index[k]] & 15]++;
    volatile uint64_t x = hist[0];
    for (long long w = hb_int(Q->r, "work"); w > 0; w--) x = x * 31 + (uint64_t)w;
    free(hist);
    hb_free(t->index);
    hb_free(t);
    hb_free(node);
    atomic_fetch_add(&Q->r->ops, 1);
}

static struct node *dequeue(struct prodcons *Q, bool wait)
{
    pthread_mutex_lock(&Q->lock);
    while (wait && !Q->head && !Q->done) pthread_cond_wait(&Q->nonempty, &Q->lock);
    struct node *n = Q->head;
    if (n) {
        Q->head = n->next;
        if (!Q->head) Q->tail = NULL;
        Q->queued--;
    }
    pthread_mutex_unlock(&Q->lock);
    return n;
}

static void produce(struct prodcons *Q, struct hb_rng *g)
{
    struct hb_run *r = Q->r;
    uint32_t n = (uint32_t)hb_range(g, (uint64_t)hb_int(r, "min_indexes"),
                                    (uint64_t)hb_int(r, "max_indexes"));
    uint32_t *index = hb_malloc(n * sizeof *index);
    struct task *t = hb_malloc(Q->task_size);
    struct node *node = hb_malloc(Q->node_size);
    if (!index || !t || !node) hb_fail("malloc returned NULL");
    uint64_t items = (uint64_t)hb_int(r, "database");
    for (uint32_t k = 0; k < n; k++) index[k] = (uint32_t)(hb_rand(g) % items);
    *t = (struct task){ index, n, 0, index_sum(index, n), hb_mix((uintptr_t)t ^ Q->salt) };
    *node = (struct node){ NULL, t };
    pthread_mutex_lock(&Q->lock);
    if (Q->tail) Q->tail->next = node;
    else Q->head = node;
    Q->tail = node;
    long long queued = ++Q->queued;
    pthread_cond_signal(&Q->nonempty);
    pthread_mutex_unlock(&Q->lock);
    if (queued > hb_int(r, "queue_limit")) {         /* the producer helps */
        struct node *mine = dequeue(Q, false);
        if (mine) {
            process(Q, mine);
            atomic_fetch_add(&Q->helped, 1);
        }
    }
}

static void prodcons_thread(struct hb_run *r, int i, void *arg)
{
    struct prodcons *Q = arg;
    struct node *n;
    if (i == 0) {
        struct hb_rng g;
        hb_rng_seed(&g, r->seed, 0);
        double deadline = r->t0 + hb_real(r, "seconds");
        for (long long k = 0; (k & 15) || hb_now() < deadline; k++) produce(Q, &g);
        pthread_mutex_lock(&Q->lock);
        Q->done = true;
        pthread_cond_broadcast(&Q->nonempty);
        pthread_mutex_unlock(&Q->lock);
    }
    while ((n = dequeue(Q, true))) process(Q, n);   /* consumers; the producer drains last */
}

int hb_prodcons(struct hb_run *r)
{
    struct prodcons Q = { .r = r, .salt = hb_mix(r->seed ^ 0x9c0d),
                          .task_size = (size_t)hb_int(r, "task_size"),
                          .node_size = (size_t)hb_int(r, "node_size") };
    if (Q.task_size < sizeof(struct task) || Q.node_size < sizeof(struct node) ||
        hb_int(r, "database") < 1 || hb_int(r, "min_indexes") < 1 ||
        hb_int(r, "max_indexes") < hb_int(r, "min_indexes"))
        hb_usage("prodcons needs task_size >= 32, node_size >= 16, database >= 1, "
                "1 <= min_indexes <= max_indexes");
    size_t items = (size_t)hb_int(r, "database");
    if (!(Q.db = malloc(items * sizeof *Q.db))) hb_fail("out of memory");
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, 0xdb);
    for (size_t k = 0; k < items; k++) Q.db[k] = (uint32_t)hb_rand(&g);
    pthread_mutex_init(&Q.lock, NULL);
    pthread_cond_init(&Q.nonempty, NULL);
    hb_begin(r);
    hb_parallel(r, r->threads, prodcons_thread, &Q);
    hb_end(r);
    hb_json_uint(r->extra, "tasks", atomic_load(&r->ops));
    hb_json_int(r->extra, "producer_helped", atomic_load(&Q.helped));
    pthread_cond_destroy(&Q.nonempty);
    pthread_mutex_destroy(&Q.lock);
    free(Q.db);
    return 0;
}

/* ---- blowup-prodcons and blowup-roundrobin -------------------------------------------------- */

#define BLOWUP_PARAMS                                                                         \
    { "rounds", HB_INT, "100",   true,  "rounds of allocate / hand over / free" },           \
    { "blocks", HB_INT, "10000", false, "K: blocks each allocating thread allocates a round" },\
    { "size",   HB_INT, "64",    false, "bytes per block" },                                  \
    { NULL, 0, NULL, false, NULL }

const struct hb_param hb_blowup_prodcons_params[] = { BLOWUP_PARAMS };
const struct hb_param hb_blowup_roundrobin_params[] = { BLOWUP_PARAMS };

struct blowup {
    bool roundrobin;
    void ***bucket;            /* bucket[i]: the K blocks thread i allocated this round */
    int producers;
    pthread_barrier_t step;
    uint64_t salt;
};

/* blowup-prodcons, each round: every producer (even thread) fills its bucket, thread 0 records
 * the round at the peak, each consumer (the odd thread after it) frees its producer's bucket.
 * blowup-roundrobin is Hoard §2.2's example, one hand-over a round: thread k mod P allocates K
 * blocks and thread k+1 mod P frees them, so only K blocks are ever live; a heap that keeps
 * what is freed into it ends up holding K blocks' worth per thread: O(P) blowup. */
static void blowup_thread(struct hb_run *r, int i, void *arg)
{
    struct blowup *B = arg;
    long long rounds = hb_int(r, "rounds"), K = hb_int(r, "blocks");
    size_t size = (size_t)hb_int(r, "size");
    int P = r->threads;
    for (long long k = 0; k < rounds; k++) {
        int turn = (int)(k % P);
        bool allocates = B->roundrobin ? i == turn : (i % 2 == 0 && i + 1 < P);
        int frees_of = B->roundrobin ? (i == (turn + 1) % P ? turn : -1)
                                     : (i % 2 == 1 ? i - 1 : -1);
        if (allocates)
            for (long long j = 0; j < K; j++) B->bucket[i][j] = hb_alloc(size, B->salt);
        pthread_barrier_wait(&B->step);
        if (i == 0) hb_round_record(r->extra, (int)k, (size_t)B->producers * (size_t)K * size);
        pthread_barrier_wait(&B->step);
        if (frees_of >= 0)
            for (long long j = 0; j < K; j++) hb_release(B->bucket[frees_of][j], size, B->salt);
        pthread_barrier_wait(&B->step);
        if (allocates) atomic_fetch_add(&r->ops, (unsigned long long)(2 * K));
    }
}

static int blowup(struct hb_run *r, bool roundrobin)
{
    struct blowup B = { .roundrobin = roundrobin, .salt = hb_mix(r->seed ^ 0xb10b),
                        .producers = roundrobin ? 1 : r->threads / 2 };
    size_t K = (size_t)hb_int(r, "blocks");
    if (hb_int(r, "size") < 1) hb_usage("size must be >= 1");
    if (!(B.bucket = calloc((size_t)r->threads, sizeof *B.bucket))) hb_fail("out of memory");
    for (int i = 0; i < r->threads; i++)
        if (!(B.bucket[i] = calloc(K ? K : 1, sizeof(void *)))) hb_fail("out of memory");
    pthread_barrier_init(&B.step, NULL, (unsigned)r->threads);
    hb_json_int(r->extra, "allocating_threads", B.producers);
    hb_floor_record(r->extra);
    hb_json_arr(r->extra, "rounds");
    hb_begin(r);
    hb_parallel(r, r->threads, blowup_thread, &B);
    hb_end(r);
    hb_json_end(r->extra, ']');
    pthread_barrier_destroy(&B.step);
    for (int i = 0; i < r->threads; i++) free(B.bucket[i]);
    free(B.bucket);
    return 0;
}

int hb_blowup_prodcons(struct hb_run *r) { return blowup(r, false); }
int hb_blowup_roundrobin(struct hb_run *r) { return blowup(r, true); }
