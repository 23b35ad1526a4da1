/* stress.c — integrity under a random mix of every call of the malloc family.
 *
 * stress [--threads N] [--duration SECONDS] [--seed S] [--slots N]
 *
 * Each thread keeps a table of live blocks and, for the duration, picks a random slot and
 * replaces, reallocates or verifies its block with a random call (malloc, calloc, realloc,
 * reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, usable size), with
 * sizes from 1 byte to 4 MiB (mostly small). About a third of the blocks are freed by another
 * thread: posted to its mailbox, which it drains, verifies and frees. Every block is stamped
 * over its full length (content = f(seed, offset)) and verified before it is freed or
 * reallocated, and at the end. Any damage prints the block and exits 1. The closing line
 * counts operations, remote frees and bytes verified (`hoardlab soak` reads it).
 * RELIABILITY_DURATION (set by `meson test --setup soak`) overrides --duration. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "rel.h"

struct block { void *p; size_t len; uint64_t seed; };

struct mailbox {
    pthread_mutex_t lock;
    struct block *items;
    size_t count, cap;
} __attribute__((aligned(64)));

static unsigned nthreads = 4;
static double duration = 2.0;
static size_t nslots = 2000;
static uint64_t base_seed = 42;
static struct mailbox *boxes;
static atomic_bool stop;
static atomic_ulong total_ops, total_remote, total_verified;
static _Thread_local unsigned long verified;      /* bytes this thread checked against stamps */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void verify(const struct block *b, size_t n, const char *when)
{
    long bad = rel_damaged(b->p, n, b->seed);
    verified += n;
    if (bad >= 0)
        rel_fail("%s: block %p (%zu bytes, seed %#llx) damaged at byte %ld: %#x", when, b->p,
                 b->len, (unsigned long long)b->seed, bad, ((unsigned char *)b->p)[bad]);
}

/* 1 .. 4 MiB, mostly small: 88% up to 256 bytes, 11.7% up to 64 KiB, 0.3% up to 4 MiB. */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = rel_rand(rng);
    unsigned c = (unsigned)(r % 1000);
    r >>= 10;
    if (c < 880) return 1 + r % 256;
    if (c < 997) return 1 + r % 65536;
    return 1 + r % (4u << 20);
}

static void post(unsigned to, struct block b)
{
    struct mailbox *m = &boxes[to];
    pthread_mutex_lock(&m->lock);
    if (m->count == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        struct block *items = r_realloc(m->items, cap * sizeof *items);
        if (!items) rel_fail("out of memory for a mailbox");
        m->items = items;
        m->cap = cap;
    }
    m->items[m->count++] = b;
    pthread_mutex_unlock(&m->lock);
}

static void drain(unsigned me)
{
    struct mailbox *m = &boxes[me];
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->count; i++) {
        verify(&m->items[i], m->items[i].len, "freed by another thread");
        r_free(m->items[i].p);
    }
    atomic_fetch_add_explicit(&total_remote, m->count, memory_order_relaxed);
    m->count = 0;
    pthread_mutex_unlock(&m->lock);
}

static void check_alignment(void *p, size_t a, const char *call)
{
    if ((uintptr_t)p % a) rel_fail("%s(align %zu) returned misaligned %p", call, a, p);
}

/* A new block by a random call; stamped. */
static struct block fresh(uint64_t *rng, uint64_t seed)
{
    size_t n = pick_size(rng);
    uint64_t r = rel_rand(rng);
    size_t align = (size_t)16 << (r % 9);                 /* 16 .. 4096 */
    void *p = NULL;
    const char *call = "malloc";
    switch ((r >> 8) % 10) {
    case 0: case 1: case 2: p = r_malloc(n); break;
    case 3: {
        call = "calloc";
        size_t k = 1 + (r >> 16) % 8, each = n / k + 1;
        n = k * each;
        p = r_calloc(k, each);
        if (p)
            for (size_t i = 0; i < n; i++)
                if (((unsigned char *)p)[i]) rel_fail("calloc(%zu, %zu) = %p: byte %zu not 0",
                                                      k, each, p, i);
        break;
    }
    case 4: call = "posix_memalign";
        if (r_posix_memalign(&p, align, n)) p = NULL;
        else check_alignment(p, align, call);
        break;
    case 5: call = "aligned_alloc"; p = r_aligned_alloc(align, n);
        if (p) check_alignment(p, align, call);
        break;
    case 6: call = "memalign"; p = r_memalign(align, n);
        if (p) check_alignment(p, align, call);
        break;
    case 7: call = "valloc"; p = r_valloc(n);
        if (p) check_alignment(p, 4096, call);
        break;
    case 8: call = "pvalloc"; p = r_pvalloc(n);
        if (p) check_alignment(p, 4096, call);
        break;
    default: call = "reallocarray"; p = r_reallocarray(NULL, n, 1); break;
    }
    if (!p) rel_fail("%s of %zu bytes failed", call, n);
    if ((uintptr_t)p % 16) rel_fail("%s returned %p, not 16-aligned", call, p);
    size_t u = r_usable(p);
    if (u < n) rel_fail("%s(%zu) = %p has usable size %zu", call, n, p, u);
    if (r % 7 == 0 && u < (64u << 10)) n = u;            /* sometimes use it to its end */
    struct block b = { p, n, seed };
    rel_stamp(p, n, seed);
    return b;
}

static void *worker(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    uint64_t rng = base_seed * 0x100000001b3ull + me + 1, seed = (uint64_t)me << 48;
    struct block *slot = calloc(nslots, sizeof *slot);
    unsigned long ops = 0;
    if (!slot) rel_fail("out of memory");
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (unsigned burst = 0; burst < 64; burst++, ops++) {
            size_t i = rel_rand(&rng) % nslots;
            struct block *b = &slot[i];
            unsigned what = (unsigned)(rel_rand(&rng) % 16);
            if (!b->p) {
                *b = fresh(&rng, ++seed);
            } else if (what < 5 && nthreads > 1) {        /* a third: another thread frees it */
                verify(b, b->len, "before handing off");
                unsigned to = (unsigned)((me + 1 + rel_rand(&rng) % (nthreads - 1)) % nthreads);
                post(to, *b);
                b->p = NULL;
            } else if (what < 10) {
                verify(b, b->len, "before free");
                r_free(b->p);
                b->p = NULL;
            } else if (what < 14) {                       /* realloc: grow or shrink */
                size_t n = what == 13 ? b->len + 1 + rel_rand(&rng) % 64 : pick_size(&rng);
                void *q = (what & 1) ? r_realloc(b->p, n) : r_reallocarray(b->p, 1, n);
                if (!q) rel_fail("realloc(%p, %zu) failed", b->p, n);
                struct block nb = { q, n, b->seed };
                verify(&nb, n < b->len ? n : b->len, "after realloc");
                nb.seed = ++seed;
                rel_stamp(q, n, nb.seed);
                *b = nb;
            } else {
                verify(b, b->len, "while live");
                if (r_usable(b->p) < b->len) rel_fail("usable size of %p shrank", b->p);
            }
        }
        drain(me);
    }
    for (size_t i = 0; i < nslots; i++)
        if (slot[i].p) {
            verify(&slot[i], slot[i].len, "at the end");
            if (i % 3 == 0 && nthreads > 1) post((me + 1) % nthreads, slot[i]);
            else r_free(slot[i].p);
        }
    free(slot);
    atomic_fetch_add(&total_ops, ops);
    atomic_fetch_add(&total_verified, verified);
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) nthreads = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--duration")) duration = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) base_seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--slots")) nslots = strtoull(argv[i + 1], NULL, 0);
        else {
            fprintf(stderr, "usage: stress [--threads N] [--duration S] [--seed S] "
                            "[--slots N]\n");
            return 2;
        }
    }
    const char *env = getenv("RELIABILITY_DURATION");    /* a soak overrides the default */
    if (env && atof(env) > 0) duration = atof(env);
    if (nthreads < 1 || nthreads > 256 || nslots < 1) { fprintf(stderr, "bad arguments\n"); return 2; }
    const char *strategy = rel_require_hoardlab();
    boxes = calloc(nthreads, sizeof *boxes);
    for (unsigned t = 0; t < nthreads; t++) pthread_mutex_init(&boxes[t].lock, NULL);
    pthread_t tid[256];
    double t0 = now();
    for (unsigned t = 0; t < nthreads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)t))
            rel_fail("pthread_create");
    while (now() - t0 < duration) usleep(20000);
    atomic_store(&stop, true);
    for (unsigned t = 0; t < nthreads; t++) pthread_join(tid[t], NULL);
    for (unsigned t = 0; t < nthreads; t++) {             /* what the last posts left */
        drain(t);
        r_free(boxes[t].items);
    }
    free(boxes);
    printf("ok: stress under %s: %u threads, %.1f s, %lu operations, %lu freed remotely, "
           "%lu bytes verified\n", strategy, nthreads, duration, atomic_load(&total_ops),
           atomic_load(&total_remote), atomic_load(&total_verified) + verified);
    return 0;
}
