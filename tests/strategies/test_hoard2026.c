/* test_hoard2026.c — the 2026 Hoard's knobs of `hoard`, alone and together (`hoard2026`), one
 * configuration per meson run (HOARD_STRATEGY, HOARD_TLAB, HOARD_GLOBAL_SHARDS,
 * HOARD_HEAP_SELECT). Each test checks what applies to the configuration it finds:
 *   tlab            a freed block comes back from the TLAB; U uncounts it, the heap's u keeps
 *                   it, the tlab_bytes gauge shows it; flushed at thread exit; blocks whose
 *                   superblock moved to the global heap while they sat in a TLAB go back to
 *                   their current owner; fork keeps the forking thread's TLAB only
 *   global_shards   put() parks a superblock in the shard of the thread's CPU (or thread, by
 *                   global_shard_key); get() finds a
 *                   superblock in any shard before it asks the OS
 *   heap_select=cpu threads on one CPU share a heap; threads exiting leave no heaps behind;
 *                   a thread that changes CPU follows it at its next batch
 *   all             the blowup workloads stay bounded (as test_blowup.c's, for these rows) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "hoard.h"
#include "tlab.h"

#define SZ 64
#define CS hl_class_size(hl_class_of(SZ))      /* its block size */

/* Free bytes in the calling thread's TLAB. */
static size_t my_tlab_bytes(void)
{
    size_t n = 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        n += (size_t)(hl_me.tlab_bins[c].limit - hl_me.tlab_bins[c].room) * hl_class_size(c);
    return n;
}

static size_t tlab_bytes(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return (size_t)s.tlab_bytes;
}

static void add_u(struct hl_heap *h, void *arg) { *(size_t *)arg += hl_heap_u(h); }
static size_t heaps_u(void)
{
    size_t u = 0;
    hl_heaps_foreach(add_u, &u);
    return u;
}

static void check_heap(struct hl_heap *h, void *arg) { (void)arg; hl_heap_check(h, -1); }

/* ---- tlab ---------------------------------------------------------------------------------- */

static void tlab_pair_and_accounting(void **state)
{
    (void)state;
    hl_free(hl_malloc(SZ));                             /* the bins exist */
    void *p = hl_malloc(SZ);
    size_t u = heaps_u(), gauge = tlab_bytes();
    struct hoardlab_stats a, b;
    hoardlab_stats(&a);
    hl_free(p);
    hoardlab_stats(&b);
    if (!hl_cfg.tlab) {
        assert_int_equal(b.tlab_bytes, 0);
        return;
    }
    assert_int_equal(heaps_u(), u);                     /* still out of its superblock */
    assert_int_equal(tlab_bytes(), gauge + CS);         /* and free in the TLAB */
    assert_int_equal(a.in_use - b.in_use, CS);          /* U: given back (stats_batch = 0) */
    assert_ptr_equal(hl_malloc(SZ), p);                 /* LIFO: the same block comes back */
    assert_int_equal(tlab_bytes(), gauge);
    hl_free(p);
}

/* With stats_batch > 0 the fast paths leave U to the bins' room (tlab.h's Accounting): a
 * malloc the bin serves spends no credit, yet U read counts it at once, and the bin's slow
 * paths publish it, so U's peak misses at most what the bin holds and one credit. */
static void tlab_bins_keep_u(void **state)
{
    (void)state;
#ifdef HL_STATS
    if (!hl_cfg.tlab || !hl_cfg.counting || !hl_cfg.stats_batch) skip();
    enum { N = 20000 };
    static void *v[N];
    hl_free(hl_malloc(SZ));                             /* a block in the bin */
    struct hoardlab_stats a, b;
    hoardlab_stats_reset_peaks();
    hoardlab_stats(&a);
    int64_t credit = hl_me.ctr.malloc_credit;
    void *p = hl_malloc(SZ);
    assert_int_equal(hl_me.ctr.malloc_credit, credit);  /* the fast path counted no U */
    hoardlab_stats(&b);
    assert_int_equal(b.in_use - a.in_use, CS);          /* but U read has it */
    assert_int_equal(b.mallocs - a.mallocs, 1);
    hl_free(p);
    for (int i = 0; i < N; i++) v[i] = hl_malloc(SZ);
    hoardlab_stats(&b);
    assert_int_equal(b.in_use - a.in_use, N * CS);
    for (int i = 0; i < N; i++) hl_free(v[i]);
    hoardlab_stats(&b);
    assert_int_equal(b.in_use, a.in_use);
    assert_int_equal(b.frees - a.frees, N + 1);
    size_t bin = (size_t)hl_me.tlab_bins[hl_class_of(SZ)].limit * CS, batch = hl_cfg.stats_batch;
    assert_true(b.in_use_peak + bin + batch >= a.in_use + N * CS);
    assert_true(b.in_use_peak <= a.in_use + N * CS + bin + 2 * batch);
#endif
}

/* Frees past the budget overflow to the heap in batches; the TLAB never holds more. */
static void tlab_budget_bounds_the_buffer(void **state)
{
    (void)state;
    enum { N = 4096 };
    static void *v[N];
    for (int i = 0; i < N; i++) v[i] = hl_malloc(SZ);
    size_t u = heaps_u();
    for (int i = 0; i < N; i++) hl_free(v[i]);
    const struct hl_tlab_bin *b = &hl_me.tlab_bins[hl_class_of(SZ)];
    size_t held = (size_t)(b->limit - b->room) * CS;
    if (hl_cfg.tlab) {
        size_t budget = hl_tlab_of(hl_me.tlab_bins)->budget;  /* tlab_adaptive: grown */
        assert_true(held <= budget);
        /* A batch went back, not more (one overflow's worth at most: half the bin, or up to
         * 64 blocks with tlab_flush = batch). tlab_adaptive: the budget grew while the bin
         * filled, so what went back depends on when; only the bound above holds. */
        uint32_t k = hl_cfg.tlab_flush == HL_TLAB_BATCH ? 64 : b->limit / 2;
        if (!hl_cfg.tlab_adaptive) assert_true(held + CS > budget - (size_t)k * CS);
        assert_int_equal(u - heaps_u(), N * CS - held);    /* the rest is back in the heap */
    } else {
        assert_int_equal(tlab_bytes(), 0);
    }
    hl_heaps_foreach(check_heap, NULL);
}

static void *alloc_free_exit(void *arg)
{
    (void)arg;
    void *v[100];
    for (int i = 0; i < 100; i++) v[i] = hl_malloc(SZ);
    for (int i = 0; i < 100; i++) hl_free(v[i]);
    return (void *)tlab_bytes();
}

static void tlab_flushed_at_thread_exit(void **state)
{
    (void)state;
    size_t u = heaps_u(), gauge = tlab_bytes();
    pthread_t t;
    void *inside;
    pthread_create(&t, NULL, alloc_free_exit, NULL);
    pthread_join(t, &inside);
    if (hl_cfg.tlab) assert_true((size_t)inside >= gauge + 100 * CS);  /* held while alive */
    assert_int_equal(tlab_bytes(), gauge);              /* flushed at its exit */
    assert_int_equal(heaps_u(), u);                     /* every block back in its superblock */
    hl_heaps_foreach(check_heap, NULL);
}

/* A holds in its TLAB one block of each of its superblocks; B frees all the others and exits,
 * so A's heap crosses the emptiness threshold and gives those superblocks, each still counting
 * A's block in use, to the global heap. A's exit must free its blocks to the global heap. */
#define MB 2048
static void *mv[MB];
static struct hl_sb *held_sb[MB];
static int nheld;
static sem_t a_done, b_done;
static _Atomic int moved;

static void *holder(void *arg)
{
    (void)arg;
    for (int i = 0; i < MB; i++) mv[i] = hl_malloc(SZ);
    for (int i = 0; i < MB; i++)                        /* the first block of each superblock */
        if (nheld == 0 || hl_sb_of(mv[i]) != held_sb[nheld - 1]) {
            held_sb[nheld++] = hl_sb_of(mv[i]);
            hl_free(mv[i]);
            mv[i] = NULL;
        }
    sem_post(&a_done);
    sem_wait(&b_done);
    for (int k = 0; k < nheld; k++)
        if (hl_heap_is_shard(atomic_load(&held_sb[k]->owner))) atomic_fetch_add(&moved, 1);
    return NULL;
}

static void *freer(void *arg)
{
    (void)arg;
    for (int i = 0; i < MB; i++)
        if (mv[i]) hl_free(mv[i]);
    return NULL;
}

static void tlab_blocks_of_moved_superblocks(void **state)
{
    (void)state;
    size_t u = heaps_u(), gauge = tlab_bytes();
    pthread_t a, b;
    sem_init(&a_done, 0, 0);
    sem_init(&b_done, 0, 0);
    pthread_create(&a, NULL, holder, NULL);
    sem_wait(&a_done);
    pthread_create(&b, NULL, freer, NULL);
    pthread_join(b, NULL);
    sem_post(&b_done);
    pthread_join(a, NULL);
    printf("# superblocks moved to the global heap while a block of theirs sat in a TLAB: %d\n",
           atomic_load(&moved));
    if (hl_cfg.tlab) assert_true(atomic_load(&moved) > 0);   /* the case happened */
    assert_int_equal(tlab_bytes(), gauge);
    assert_int_equal(heaps_u(), u);
    hl_heaps_foreach(check_heap, NULL);
}

/* Fork: the forking thread's TLAB lives on in the child; another thread's is dropped there. */
static sem_t other_ready, other_go;
static void *other_holds(void *arg)
{
    void **v = arg;
    for (int i = 0; i < 10; i++) v[i] = hl_malloc(SZ);
    for (int i = 0; i < 10; i++) hl_free(v[i]);
    sem_post(&other_ready);
    sem_wait(&other_go);
    return NULL;
}

static void tlab_across_fork(void **state)
{
    (void)state;
    void *v[10];
    pthread_t t;
    sem_init(&other_ready, 0, 0);
    sem_init(&other_go, 0, 0);
    pthread_create(&t, NULL, other_holds, v);
    sem_wait(&other_ready);
    void *mine = hl_malloc(272);          /* a class of its own: its superblock is our heap's */
    hl_free(mine);
    size_t all = tlab_bytes(), others = all - my_tlab_bytes();
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        void *again = hl_malloc(272);
        if (hl_cfg.tlab && again != mine) bad |= 1;           /* our TLAB survived */
        hl_free(again);
        if (tlab_bytes() != all - others) bad |= 2;         /* the other's is gone */
        if (bad) fprintf(stderr, "# child: got %p, freed %p; tlab bytes %zu, expected %zu - %zu\n",
                        again, mine, tlab_bytes(), all, others);
        for (int i = 0; i < 10000; i++) hl_free(hl_malloc(16 + i % 2000));   /* locks work */
        hl_heaps_foreach(check_heap, NULL);
        _exit(bad);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    sem_post(&other_go);
    pthread_join(t, NULL);
}

/* ---- global_shards ---------------------------------------------------------------------- */

static void shards_put_local_get_anywhere(void **state)
{
    (void)state;
    unsigned n = hl_heap_nshards;
    assert_int_equal(n, (unsigned)hl_cfg.global_shards);
    assert_ptr_equal(hl_heap_shards[0], hl_heap_global);
    for (unsigned i = 0; i < n; i++) assert_true(hl_heap_is_shard(hl_heap_shards[i]));
    assert_false(hl_heap_is_shard(hl_heap_mine()));
    unsigned c = hl_class_of(3000);
    /* What the shards could give class c, parked aside meanwhile. */
    struct hl_heap *park = hl_heap_new(999, true);
    for (unsigned k = 0; k < n; k++) {
        struct hl_sb *sb;
        hl_heap_lock(hl_heap_shards[k]);
        while ((sb = hl_heap_take(hl_heap_shards[k], c))) hl_heap_attach(park, sb);
        hl_heap_unlock(hl_heap_shards[k]);
    }
    /* get(): a superblock parked in shard k is found from a heap of no superblocks, whatever
     * k, without asking the OS. */
    for (unsigned k = 0; k < n; k++) {
        struct hl_heap *h = hl_heap_new(1000 + k, true), *g = hl_heap_shards[k];
        struct hl_sb *sb = hl_sb_new(c);
        assert_non_null(sb);
        hl_heap_lock(g);
        hl_global_attach(k, sb);                        /* (get's hint told) */
        hl_heap_unlock(g);
        size_t os = hl_os_bytes();
        void *p = hl_stats_malloc(hl_hoard_malloc_in(h, 3000), hl_class_size(c));
        assert_ptr_equal(hl_sb_of(p), sb);
        assert_ptr_equal(atomic_load(&sb->owner), h);
        assert_int_equal(hl_os_bytes(), os);
        /* put(): freed, its heap crosses the threshold (K = 0) and parks it in the shard of
         * this thread's CPU (global_shard_key = thread: of this thread). */
        int cpu = sched_getcpu();
        hl_heap_row_free(p);
        struct hl_heap *now = atomic_load(&sb->owner);
        assert_true(hl_heap_is_shard(now));
        if (hl_cfg.global_shard_key == HL_SHARD_THREAD)
            assert_ptr_equal(now, hl_heap_shards[hl_self()->id % n]);
        else if (sched_getcpu() == cpu)
            assert_ptr_equal(now, hl_heap_shards[(unsigned)cpu % n]);
        hl_heap_lock(now);                              /* out of the way of the next k */
        hl_heap_detach(now, sb);
        hl_purge_unpark(sb);                            /* (purge: it parked empty) */
        hl_heap_unlock(now);
        hl_sb_release(sb);
    }
    struct hl_sb *sb;
    while ((sb = hl_heap_take(park, c))) hl_global_attach(0, sb);
    hl_heaps_foreach(check_heap, NULL);
}

/* ---- heap_select = cpu -------------------------------------------------------------------- */

static void *on_cpu(void *arg)
{
    int cpu = *(int *)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    hl_free(hl_malloc(SZ));
    return hl_heap_mine();
}

static void count_heap(struct hl_heap *h, void *arg) { (void)h; ++*(unsigned *)arg; }

static void cpu_selection(void **state)
{
    (void)state;
    if (hl_cfg.heap_select != HL_SELECT_CPU) skip();
    int cpu = sched_getcpu();
    pthread_t t1, t2;
    void *h1, *h2;
    unsigned before = 0, after = 0;
    hl_heaps_foreach(count_heap, &before);
    pthread_create(&t1, NULL, on_cpu, &cpu);
    pthread_create(&t2, NULL, on_cpu, &cpu);
    pthread_join(t1, &h1);
    pthread_join(t2, &h2);
    assert_ptr_equal(h1, h2);                                /* one CPU, one heap */
    assert_int_equal(((struct hl_heap *)h1)->index, (unsigned)cpu % hl_cfg.heaps + 1);
    for (int i = 0; i < 50; i++) {                           /* churn */
        pthread_create(&t1, NULL, on_cpu, &cpu);
        pthread_join(t1, NULL);
    }
    hl_heaps_foreach(count_heap, &after);
    assert_int_equal(after, before);                         /* no idle heaps left behind */
}

/* A thread that moves to another CPU uses that CPU's heap once it next leaves the fast path
 * (a TLAB batch, or a superblock from the global heap). */
static void *migrate(void *arg)
{
    int *cpus = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[0], &set);
    sched_setaffinity(0, sizeof set, &set);
    void *p = hl_malloc(SZ);
    struct hl_heap *first = hl_heap_mine();
    CPU_ZERO(&set);
    CPU_SET(cpus[1], &set);
    sched_setaffinity(0, sizeof set, &set);
    enum { N = 20000 };
    static void *v[N];
    for (int i = 0; i < N; i++) v[i] = hl_malloc(48);    /* past a batch and a superblock */
    struct hl_heap *second = hl_heap_mine();
    for (int i = 0; i < N; i++) hl_free(v[i]);
    hl_free(p);
    cpus[2] = (int)first->index;
    cpus[3] = (int)second->index;
    return NULL;
}

static void cpu_follows_migration(void **state)
{
    (void)state;
    cpu_set_t all;
    if (hl_cfg.heap_select != HL_SELECT_CPU || sched_getaffinity(0, sizeof all, &all) ||
        CPU_COUNT(&all) < 2)
        skip();
    int cpus[4] = { -1, -1, 0, 0 };
    for (int i = 0, k = 0; i < CPU_SETSIZE && k < 2; i++)
        if (CPU_ISSET(i, &all)) cpus[k++] = i;
    pthread_t t;
    pthread_create(&t, NULL, migrate, cpus);
    pthread_join(t, NULL);
    assert_int_equal(cpus[2], cpus[0] % hl_cfg.heaps + 1);
    assert_int_equal(cpus[3], cpus[1] % hl_cfg.heaps + 1);
}

/* ---- blowup (test_blowup.c's workloads, bounds for these rows) --------------------------- */

#define N_LIVE 16384
#define LIVE ((size_t)N_LIVE * SZ)
#define P 4
static void *blocks[N_LIVE];
struct worker { pthread_t tid; sem_t go, done; int cmd; };

static void *work(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        sem_wait(&w->go);
        if (w->cmd == 0) break;
        for (int i = 0; i < N_LIVE; i++) {
            if (w->cmd == 1) memset(blocks[i] = hl_malloc(SZ), i, SZ);
            else hl_free(blocks[i]);
        }
        sem_post(&w->done);
    }
    return NULL;
}

static void run(struct worker *w, int cmd)
{
    w->cmd = cmd;
    sem_post(&w->go);
    if (cmd) sem_wait(&w->done);
}

static void blowup_bounded(void **state)
{
    (void)state;
    struct worker w[P];
    for (int i = 0; i < P; i++) {
        sem_init(&w[i].go, 0, 0);
        sem_init(&w[i].done, 0, 0);
        pthread_create(&w[i].tid, NULL, work, &w[i]);
    }
    /* Free memory a TLAB may keep beside the bound: the budget, per thread, for this class. */
    size_t slack = hl_cfg.tlab ? P * hl_cfg.tlab_budget : 0, base = hl_os_bytes();
    for (int r = 0; r < 4 * P; r++) {                        /* round-robin: O(1) */
        run(&w[r % P], 1);
        run(&w[(r + 1) % P], 2);
    }
    size_t rr = hl_os_bytes() - base;
    base = hl_os_bytes();
    size_t after2 = 0;
    for (int r = 1; r <= 16; r++) {                          /* producer-consumer */
        run(&w[0], 1);
        run(&w[1], 2);
        if (r == 2) after2 = hl_os_bytes();
    }
    size_t pc = hl_os_bytes() - after2;
    for (int i = 0; i < P; i++) {
        run(&w[i], 0);
        pthread_join(w[i].tid, NULL);
    }
    printf("# %s: round-robin held %.2f MiB, producer-consumer grew %.2f MiB after round 2 "
           "(live %.2f MiB)\n", hoardlab_strategy(), rr / 1048576.0, pc / 1048576.0,
           LIVE / 1048576.0);
    assert_true(rr <= 2 * LIVE + slack + 2 * hl_sb_size * hl_cfg.global_shards);
    /* The consumer's TLAB may keep the producer's blocks up to its budget (tlab_sb_cache: a
     * hit lets another heap's block into the bin), which the producer then replaces once:
     * hoard202607 grew one 256K superblock after round 2 (tlab_sb_cache = 16, 2026-11-28). */
    assert_true(pc <= LIVE / 8 + slack);
}

int main(void)
{
    setenv("HOARD_STATS_BATCH", "0", 0);     /* U exact (every call counts it), but for the
                                              * run that sets it: tlab_bins_keep_u */
    setenv("HOARD_RELEASE_THRESHOLD", "0", 0);
    setenv("HOARD_RELEASE_EMPTY", "off", 0);
    setenv("HOARD_HEAPS", "8", 0);           /* threads on distinct heaps (hash) */
    /* Exact u after remote frees: locked frees (test_remote.c covers list and queue here). */
    setenv("HOARD_REMOTE_FREE", "lock", 1);
    hl_init();
    hl_free(hl_malloc(1));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shards_put_local_get_anywhere),   /* first: on empty shards */
        cmocka_unit_test(tlab_pair_and_accounting),
        cmocka_unit_test(tlab_budget_bounds_the_buffer),
        cmocka_unit_test(tlab_bins_keep_u),
        cmocka_unit_test(tlab_flushed_at_thread_exit),
        cmocka_unit_test(tlab_blocks_of_moved_superblocks),
        cmocka_unit_test(tlab_across_fork),
        cmocka_unit_test(cpu_selection),
        cmocka_unit_test(cpu_follows_migration),
        cmocka_unit_test(blowup_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
