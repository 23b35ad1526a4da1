/* test_remote.c — remote frees (remote_free = lock | list | queue, set by meson per run, under
 * ownership and hoard): pending frees are collected, whoever exits, forks or stays idle.
 *   to_exited     a thread allocates and exits; another frees its blocks: the thread that
 *                 takes the exited thread's heap collects them (its first malloc, of a class
 *                 the heap has no room in, takes the slow path)
 *   from_exited   a thread frees the main thread's blocks and exits: what it still buffered
 *                 reaches the main heap, whose next malloc collects it
 *   bounded       a superblock whose blocks are all freed by another thread is empty (hoard
 *                 with K = 0: in the global heap) after HL_COLLECT_EVERY fast mallocs of its
 *                 owner (tlab = on: after mallocs that make the TLAB refill from the heap;
 *                 batch: or all its blocks in use are in the owner's TLAB)
 *   fork_pending  fork while another thread holds frees pending and buffered; the child
 *                 allocates, the parent collects afterwards
 *   collected_into_tlab  tlab = on, list: a collected list goes into the owner's empty bin
 *                 whole (not walked), still counted in its superblock's `used`; the next
 *                 mallocs are its blocks
 *   collected_into_spare  the same into a bin that has blocks: the list waits as the bin's
 *                 spare chain, handed out when the bin runs dry
 *   drained_without_lock  tlab = on, batch: the owner's slow path takes the runs sent to it
 *                 into its empty bin without its heap's lock (the lock count does not move)
 *   drained_in_free_order  tlab = on, batch: the owner's mallocs hand the blocks back in the
 *                 order another thread freed them, over several runs
 *   drained_cut   tlab = on, batch: more is pending than the bin holds: the drain fills the
 *                 bin to its limit less one, cutting the run where it is full (the owner's way
 *                 back, issue 51: before, a run longer than the room went back into its
 *                 superblock whole, and the bin took 3 runs of 256 of its 1024 blocks), the
 *                 rest back into their superblocks under the lock
 *   sent_on_slow_path  tlab = on, queue, batch: a block buffered for another heap is sent when
 *                 the thread's malloc takes the TLAB's slow path
 *   batch_budget  batch: a bucket is sent whole, once it holds remote_batch_bytes, and not
 *                 before (the owner's inbox stays empty until then)
 *   batch_hashed  batch: blocks of 17 heaps freed one each go into 16 buckets: at most 16
 *                 messages, none sent before the flush (no eviction, unlike queue), and each
 *                 block reaches its owner (a shared bucket's foreign runs are forwarded)
 *   batch_runs    batch: a message's runs, read as the owner reads them, are each one
 *                 superblock's blocks, no longer than the cap, and hold every block once
 *   list_run_elsewhere  list: a run a collection kept, settled by a heap that no longer owns
 *                 its superblock (hoard's policy moved it during that collection), goes back
 *                 onto the superblock's list, which its owner collects; before, it went to the
 *                 owner's inbox as batch's message of blocks, and the owner's collection read
 *                 the block as a superblock (rel-stress-hoard-tlab-single-list-pfree-selhash
 *                 crashed in about 1 run of 30 so)
 * After each: remote_pending is 0 and every heap's lists and counts agree (hl_heap_check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "tlab.h"

#define N 3000                  /* blocks per test: several superblocks of 64 bytes */

/* bounded uses two superblocks' worth: room for 256 KiB superblocks (hoard2026's). */
#define MAX_BLOCKS (2 * (256 << 10) / 64)
static void *blocks[MAX_BLOCKS];
static int nblocks = N;         /* how many of blocks[] alloc_all and free_all handle */

static void check_heap(struct hl_heap *h, void *arg) { (void)arg; hl_heap_check(h, -1); }

/* What this thread still buffers is posted (a block of a superblock that moved to hoard's
 * global heap is a remote free too). The global heap collects when a heap next takes from
 * it; blocks of a superblock that moved there while pending are forwarded to it. Collect
 * it, as that take would. */
static void expect_settled(void)
{
    hl_remote_flush();
    for (unsigned i = 0; i < hl_heap_nshards; i++) {
        hl_heap_lock(hl_heap_shards[i]);
        hl_remote_collect(hl_heap_shards[i]);
        hl_heap_unlock(hl_heap_shards[i]);
    }
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    assert_int_equal(s.remote_pending, 0);
    hl_heaps_foreach(check_heap, NULL);
}

static void *alloc_all(void *arg)
{
    (void)arg;
    for (int i = 0; i < nblocks; i++) memset(blocks[i] = hl_malloc(64), 0x5a, 64);
    return NULL;
}

static void *free_all(void *arg)
{
    (void)arg;
    for (int i = 0; i < nblocks; i++) hl_free(blocks[i]);
    return NULL;
}

static void *malloc_once(void *arg)
{
    *(struct hl_heap **)arg = NULL;
    hl_free(hl_malloc(1000));            /* another class: collection alone empties class 64 */
    *(struct hl_heap **)arg = hl_heap_mine();
    return NULL;
}

/* Operations of the calling thread's heap that its collection is bound to: HL_COLLECT_EVERY
 * mallocs (fast ones: the class has room after the first); with tlab = on, enough mallocs
 * without frees that its TLAB refills from the heap (a TLAB serves pairs alone). */
static void owner_mallocs(void)
{
    if (!hl_cfg.tlab) {
        void *keep = hl_malloc(1000);    /* then its class has room: the rest are fast */
        for (int i = 0; i < HL_COLLECT_EVERY; i++) hl_free(hl_malloc(1000));
        hl_free(keep);
        return;
    }
    /* 200, or what the bin holds and one more (tlab_adaptive: it may hold thousands). */
    hl_free(hl_malloc(1000));
    const struct hl_tlab_bin *b = &hl_me.tlab_bins[hl_class_of(1000)];
    int n = (int)(b->limit - (uint32_t)b->room) + 2;
    if (n < 200) n = 200;
    void **q = malloc((size_t)n * sizeof *q);
    for (int i = 0; i < n; i++) q[i] = hl_malloc(1000);
    for (int i = 0; i < n; i++) hl_free(q[i]);
    free(q);
}

static void run(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* Nothing of class `size` in use in h. With tlab = on blocks held in TLABs (taken from the
 * heap in batches) count in u as in use, so there the check is remote_pending and the heaps'
 * consistency (expect_settled) alone. */
static void expect_class_free(struct hl_heap *h, size_t size)
{
    if (!hl_cfg.tlab) assert_int_equal(h->cls[hl_class_of(size)].acct->u, 0);
}

static void to_exited(void **state)
{
    (void)state;
    run(alloc_all, NULL);                /* its heap goes to the pool (thread mode) */
    struct hl_heap *owner = atomic_load(&hl_sb_of(blocks[0])->owner);
    free_all(NULL);                      /* remote frees into the exited thread's heap */
    hl_remote_flush();                   /* queue: what this thread still buffers */
    struct hl_heap *taker;
    run(malloc_once, &taker);            /* takes the pooled heap: collects at its malloc */
    if (hl_cfg.heap_select == HL_SELECT_THREAD && !hl_heap_is_shard(owner))
        assert_ptr_equal(taker, owner);  /* (with a TLAB, its flush at exit may move them) */
    if (taker != owner) {                /* hash, cpu: the owner collects at its next malloc */
        hl_heap_lock(owner);
        hl_remote_collect(owner);
        hl_heap_unlock(owner);
    }
    expect_class_free(owner, 64);
    expect_settled();
}

static void from_exited(void **state)
{
    (void)state;
    alloc_all(NULL);
    struct hl_heap *mine = hl_heap_mine();
    run(free_all, NULL);                 /* its buffers are posted when it exits */
    owner_mallocs();
    expect_class_free(mine, 64);
    expect_settled();
}

static void bounded(void **state)
{
    (void)state;
    /* Whole superblocks, so that the last one holds only these blocks. */
    nblocks = 2 * (int)hl_sb_capacity_of(hl_class_of(64));
    assert_true(nblocks <= MAX_BLOCKS);
    alloc_all(NULL);
    struct hl_sb *sb = hl_sb_of(blocks[nblocks - 1]);
    struct hl_heap *mine = hl_heap_mine();
    run(free_all, NULL);
    nblocks = N;
    owner_mallocs();                     /* the bound */
    hl_heap_lock(mine);                  /* read under the lock, assert after it */
    struct hl_heap *owner = atomic_load(&sb->owner);
    uint32_t used = sb->used;
    hl_heap_unlock(mine);
    /* Without a global heap (ownership) the superblock is empty but for the blocks this
     * thread's TLAB holds (they count as used: tlab.h): on the bin's chain, or in its spare
     * chain (a collected list taken whole, remote_free = list), which is all the rest of
     * what the bin holds. */
    const struct hl_tlab_bin *bin = &hl_me.tlab_bins[hl_class_of(64)];
    uint32_t on_chain = 0, of_sb = 0;
    for (void *p = bin->head; p; p = *(void **)p, on_chain++) of_sb += hl_sb_of(p) == sb;
    uint32_t spare = hl_cfg.tlab ? bin->limit - (uint32_t)bin->room - on_chain : 0;
    bool in_tlab = used >= of_sb && used <= of_sb + spare;
    /* batch with a TLAB: runs of the superblock's blocks may have gone into the bin whole
     * (inbox.c's collect_blocks), which keeps it from emptying, as any TLAB's blocks do. */
    if (hl_heap_global && hl_cfg.tlab && hl_remote_mode == HL_REMOTE_BATCH)
        assert_true(hl_heap_is_shard(owner) || in_tlab);
    else if (hl_heap_global) assert_true(hl_heap_is_shard(owner));
    else assert_true(in_tlab);
    expect_settled();
}

static pthread_barrier_t freed, forked;

static void *free_half_and_wait(void *arg)
{
    (void)arg;
    for (int i = 0; i < N / 2; i++) hl_free(blocks[i]);
    pthread_barrier_wait(&freed);       /* frees pending (list) or buffered (queue) now */
    pthread_barrier_wait(&forked);
    for (int i = N / 2; i < N; i++) hl_free(blocks[i]);
    return NULL;
}

static void fork_pending(void **state)
{
    (void)state;
    alloc_all(NULL);
    pthread_barrier_init(&freed, NULL, 2);
    pthread_barrier_init(&forked, NULL, 2);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_half_and_wait, NULL), 0);
    pthread_barrier_wait(&freed);
    pid_t pid = fork();
    if (pid == 0) {
        void *p[500];
        for (int r = 0; r < 20; r++) {
            for (int i = 0; i < 500; i++) memset(p[i] = hl_malloc(64), r, 64);
            for (int i = 0; i < 500; i++) hl_free(p[i]);
        }
        _exit(0);
    }
    assert_true(pid > 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pthread_barrier_wait(&forked);
    assert_int_equal(pthread_join(t, NULL), 0);
    owner_mallocs();
    expect_class_free(hl_heap_mine(), 64);
    expect_settled();
}

/* tlab = on, list: a superblock's collected list goes into the owner's bin whole, unwalked,
 * in front of its spare chain, which the bin takes as its chain when it is empty (at once if
 * it is, else when it runs dry). Either way the superblock's `used` does not change (a block
 * in a TLAB counts as in use, as a pending one does). The two tests share this setup and
 * these checks. */
#define K 20
static const struct hl_tlab_bin *bin64;
static void *drained[1 << 16];           /* blocks taken to empty the bin, freed at the end */
static int nd;
static void *mine[K];                    /* freed by another thread, pending on their lists */
static uint32_t used_before[K];          /* their superblocks' `used` before collection */

static void *free_k(void *arg)
{
    (void)arg;
    hl_free(hl_malloc(64));              /* a heap of its own: its frees are remote ones */
    for (int i = 0; i < K; i++) hl_free(mine[i]);
    return NULL;
}

static void drain(void)
{
    while (bin64->head) drained[nd++] = hl_malloc(64);
}

/* Skips unless collected lists can be taken (free_lists = sharded walks them back into their
 * superblock: sharded.h); else: the bin emptied, mine[] from a refill (of
 * superblocks the thread's heap owns) freed by another thread, `used` recorded. */
static void hand_over(void)
{
    if (!hl_cfg.tlab || hl_remote_mode != HL_REMOTE_LIST || hl_cfg.heap_select != HL_SELECT_THREAD
        || hl_sb_sharded)
        skip();
    expect_settled();                    /* nothing else pending */
    hl_free(hl_malloc(64));              /* the thread's bins */
    bin64 = &hl_me.tlab_bins[hl_class_of(64)];
    nd = 0;
    drain();
    for (int i = 0; i < K; i++) mine[i] = hl_malloc(64);
    assert_ptr_equal(atomic_load(&hl_sb_of(mine[0])->owner), hl_heap_mine());
    run(free_k, NULL);
    for (int i = 0; i < K; i++) used_before[i] = hl_sb_of(mine[i])->used;
}

static int times_in_mine(const void *p)
{
    int k = 0;
    for (int i = 0; i < K; i++) k += mine[i] == p;
    return k;
}

static int mine_in_sb(const struct hl_sb *sb)
{
    int k = 0;
    for (int i = 0; i < K; i++) k += hl_sb_of(mine[i]) == sb;
    return k;
}

/* p, the first block of a list taken whole, and the list's superblock still counts them. */
static void expect_taken(const void *p)
{
    assert_int_equal(times_in_mine(p), 1);
    const struct hl_sb *sb = hl_sb_of(p);
    for (int i = 0; i < K; i++)
        if (hl_sb_of(mine[i]) == sb) assert_int_equal(sb->used, used_before[i]);
}

static void finish(void *p)
{
    hl_free(p);
    while (nd) hl_free(drained[--nd]);
    expect_settled();
}

static void collected_into_tlab(void **state)
{
    (void)state;
    hand_over();
    drain();                             /* the bin empty again */
    void *p = hl_malloc(64);             /* slow path: collects, the list lands in the bin */
    struct hl_sb *sb = hl_sb_of(p);
    int in_sb = mine_in_sb(sb);
    expect_taken(p);
    assert_int_equal(bin64->limit - (uint32_t)bin64->room, in_sb - 1);
    void *rest[K];
    for (int i = 0; i < in_sb - 1; i++) {                   /* the rest of that list */
        rest[i] = hl_malloc(64);
        assert_ptr_equal(hl_sb_of(rest[i]), sb);
        assert_int_equal(times_in_mine(rest[i]), 1);
    }
    for (int i = 0; i < in_sb - 1; i++) hl_free(rest[i]);
    finish(p);
}

static void collected_into_spare(void **state)
{
    (void)state;
    hand_over();
    assert_non_null(bin64->head);        /* the refill's rest stays in the bin */
    struct hl_heap *h = hl_heap_mine();
    uint32_t held = bin64->limit - (uint32_t)bin64->room;
    hl_heap_lock(h);
    hl_tlab_remote_collect(h);           /* as the thread's slow path of another class does */
    hl_heap_unlock(h);
    int taken = (int)(bin64->limit - (uint32_t)bin64->room - held);
    assert_true(taken > 0);
    while (held--) {                     /* the bin's own blocks first: none of the list */
        void *q = drained[nd++] = hl_malloc(64);
        assert_int_equal(times_in_mine(q), 0);
    }
    assert_null(bin64->head);
    void *p = hl_malloc(64);             /* the spare, without the heap's lock */
    expect_taken(p);
    assert_int_equal(mine_in_sb(hl_sb_of(p)), taken);
    assert_int_equal(bin64->limit - (uint32_t)bin64->room, taken - 1);
    finish(p);
}

/* The batch tests' start: skips unless tlab = on, batch and a heap per thread (and, with
 * fixed_limit, a TLAB that is not adaptive, whose limit moves at a refill); else bin64 set and
 * empty: its chain, then its spare (an earlier test's runs) if any, which the slow path
 * takes. */
static void batch_bin_emptied(bool fixed_limit)
{
    if (!hl_cfg.tlab || hl_remote_mode != HL_REMOTE_BATCH || hl_cfg.heap_select != HL_SELECT_THREAD
        || (fixed_limit && hl_cfg.tlab_adaptive))
        skip();
    expect_settled();
    hl_free(hl_malloc(64));              /* the thread's bins */
    bin64 = &hl_me.tlab_bins[hl_class_of(64)];
    nd = 0;
    drain();
    drained[nd++] = hl_malloc(64);
    drain();
}

/* tlab = on, batch: the owner's malloc slow path drains its inbox without its heap's lock
 * (inbox.c's hl_remote_drain): the runs fit in the empty bin, so it takes them whole, its
 * superblocks' `used` untouched, and the lock is not taken at all (its acquisitions, counted
 * in the stats build, do not move). */
static void drained_without_lock(void **state)
{
    (void)state;
    batch_bin_emptied(false);
    for (int i = 0; i < K; i++) mine[i] = hl_malloc(64);     /* a refill from the heap */
    struct hl_heap *h = hl_heap_mine();
    assert_ptr_equal(atomic_load(&hl_sb_of(mine[0])->owner), h);
    run(free_k, NULL);                   /* its buckets are sent to h when it exits */
    assert_true(hl_remote_pending(h));
    for (int i = 0; i < K; i++) used_before[i] = hl_sb_of(mine[i])->used;
    drain();
    uint64_t locks = __atomic_load_n(&h->acquisitions, __ATOMIC_RELAXED);
    void *p = hl_malloc(64);             /* slow path: the runs land in the bin */
    expect_taken(p);
    assert_false(hl_remote_pending(h));
#ifdef HL_STATS
    assert_int_equal(__atomic_load_n(&h->acquisitions, __ATOMIC_RELAXED), locks);
#else
    (void)locks;
#endif
    assert_int_equal(bin64->limit - (uint32_t)bin64->room, K - 1);
    void *rest[K];
    for (int i = 0; i < K - 1; i++) {    /* the bin holds exactly the rest of them */
        rest[i] = hl_malloc(64);
        assert_int_equal(times_in_mine(rest[i]), 1);
    }
    for (int i = 0; i < K - 1; i++) hl_free(rest[i]);
    finish(p);
}

static void *free_blocks(void *arg)
{
    (void)arg;
    hl_free(hl_malloc(64));              /* a heap of its own: its frees are remote ones */
    for (int i = 0; i < nblocks; i++) hl_free(blocks[i]);
    return NULL;
}

static int times_in_blocks(const void *p)
{
    int k = 0;
    for (int i = 0; i < nblocks; i++) k += blocks[i] == p;
    return k;
}

static void drained_cut(void **state)
{
    (void)state;
    batch_bin_emptied(true);
    uint32_t limit = bin64->limit;
    nblocks = (int)(limit + limit / 2 + 7);
    assert_true(nblocks <= MAX_BLOCKS);
    for (int i = 0; i < nblocks; i++) blocks[i] = hl_malloc(64);
    struct hl_heap *h = hl_heap_mine();
    run(free_blocks, NULL);              /* its buckets are sent to h when it exits */
    assert_true(hl_remote_pending(h));
    drain();
    void *p = hl_malloc(64);             /* slow path: the bin filled from the runs */
    assert_int_equal(times_in_blocks(p), 1);
    assert_false(hl_remote_pending(h));  /* the rest settled */
    assert_int_equal(bin64->limit, limit);
    assert_int_equal(bin64->room, 2);    /* limit - 1 taken, one handed out */
    for (uint32_t i = 0; i < limit - 2; i++) {               /* each a block freed remotely */
        void *q = drained[nd++] = hl_malloc(64);
        assert_int_equal(times_in_blocks(q), 1);
    }
    finish(p);
    nblocks = N;
}

/* tlab = on, batch: the blocks another thread freed come back out of the owner's bin in the
 * order they were freed -- here a shuffled order, over several runs (a run holds a quarter of
 * the bin's limit) -- so a consumer that frees a batch as it received it gives its producer the
 * same neighbours again (sender.h builds a run in free order; take_runs puts a message's runs,
 * newest first, each in front of the last, in the spare chain). Before, runs were built
 * newest first and placed as the chain, the spare, then in front of the chain. */
static void drained_in_free_order(void **state)
{
    (void)state;
    batch_bin_emptied(false);
    nblocks = (int)(bin64->limit / 2);   /* two runs and more, and room for all (an */
    if (nblocks > 1000) nblocks = 1000;  /* adaptive limit may have grown past blocks[]) */
    assert_true(nblocks >= 8);
    for (int i = 0; i < nblocks; i++) blocks[i] = hl_malloc(64);
    uint64_t x = 42;
    for (int i = nblocks - 1; i > 0; i--) {          /* a fixed shuffle: the free order */
        x = x * 6364136223846793005u + 1442695040888963407u;
        int j = (int)((x >> 33) % (uint64_t)(i + 1));
        void *t = blocks[i];
        blocks[i] = blocks[j];
        blocks[j] = t;
    }
    struct hl_heap *h = hl_heap_mine();
    run(free_blocks, NULL);              /* frees blocks[0], [1], ...; sent when it exits */
    assert_true(hl_remote_pending(h));
    drain();
    for (int i = 0; i < nblocks; i++) {
        void *q = drained[nd++] = hl_malloc(64);
        assert_ptr_equal(q, blocks[i]);
    }
    finish(drained[--nd]);
    nblocks = N;
}

/* ---- batch: the freeing thread's remote cache (sender.c) ------------------------------------ */

/* One block of 64 bytes out of h, a heap this thread does not use, so that its free is remote. */
static void *alloc_in_size(struct hl_heap *h, size_t size)
{
    unsigned c = hl_class_of(size);
    hl_heap_lock(h);
    void *p = hl_heap_alloc_sb(h, c);
    if (!p) p = hl_heaps_refill_from_os(h, c);
    hl_heap_unlock(h);
    assert_non_null(p);
    return p;
}

static void *alloc_in(struct hl_heap *h) { return alloc_in_size(h, 64); }

static size_t inbox_bytes(struct hl_heap *h) { return atomic_load(&h->inbox_bytes); }

/* Collect h, and the heaps its collection forwarded to, until nothing is pending in hs. */
static void collect_all(struct hl_heap **hs, int n)
{
    for (bool again = true; again; ) {
        again = false;
        for (int i = 0; i < n; i++) {
            if (!hl_remote_pending(hs[i])) continue;
            again = true;
            hl_heap_lock(hs[i]);
            hl_remote_collect(hs[i]);
            hl_heap_unlock(hs[i]);
        }
    }
}

#define FRESH_HEAP0 1000u                /* heap numbers no other heap has */

/* tlab = on, queue and batch: what the thread buffers for another heap is sent when its
 * malloc takes the TLAB's slow path (docs/remote-free.md), not only at its exit. */
static void sent_on_slow_path(void **state)
{
    (void)state;
    if (!hl_cfg.tlab || hl_remote_mode < HL_REMOTE_QUEUE) skip();
    expect_settled();
    struct hl_heap *h = hl_heap_new(FRESH_HEAP0 + 100, true);
    hl_free(alloc_in(h));                /* a remote free, buffered: one block */
    assert_false(hl_remote_pending(h));
    hl_free(hl_malloc(64));              /* the thread's bins */
    bin64 = &hl_me.tlab_bins[hl_class_of(64)];
    /* (tlab_adaptive: the bin may hold thousands; its chain and spare are at most 2 limits) */
    size_t most = 3 * (size_t)bin64->limit + 3, n = 0;
    void **v = malloc(most * sizeof *v);
    while (!hl_remote_pending(h) && n < most) v[n++] = hl_malloc(64);
    assert_true(hl_remote_pending(h));   /* an empty bin's malloc sent it */
    collect_all(&h, 1);
    assert_int_equal(hl_heap_u(h), 0);
    while (n) hl_free(v[--n]);
    free(v);
    expect_settled();
}

static void batch_budget(void **state)
{
    (void)state;
    if (hl_remote_mode != HL_REMOTE_BATCH) skip();
    expect_settled();
    struct hl_heap *h = hl_heap_new(FRESH_HEAP0, true);
    size_t budget = hl_cfg.remote_batch_bytes, size = hl_class_size(hl_class_of(64));
    size_t n = (budget + size - 1) / size;          /* the free that reaches it sends */
    assert_true(n <= MAX_BLOCKS);
    for (size_t i = 0; i < n; i++) blocks[i] = alloc_in(h);
    for (size_t i = 0; i + 1 < n; i++) hl_free(blocks[i]);
    assert_false(hl_remote_pending(h));             /* held in the bucket */
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    assert_int_equal(s.remote_pending, (n - 1) * size);
    hl_free(blocks[n - 1]);
    /* Sent whole: what is pending is in h's inbox, all of it, unless the send reached the
     * bound on a heap's pending bytes (K x S, help_bytes: hoard's 8 KiB superblocks) and the
     * freeing thread collected it for h at once. */
    hoardlab_stats(&s);
    assert_int_equal(s.remote_pending, inbox_bytes(h));
    if (inbox_bytes(h) == 0) assert_true(n * size >= hl_sb_size);
    else assert_int_equal(inbox_bytes(h), n * size);
    collect_all(&h, 1);
    assert_int_equal(inbox_bytes(h), 0);
    assert_int_equal(hl_heap_u(h), 0);
    expect_settled();
}

static void batch_hashed(void **state)
{
    (void)state;
    if (hl_remote_mode != HL_REMOTE_BATCH) skip();
    expect_settled();
    enum { H = 17 };                     /* one heap more than sender.c's 16 buckets */
    struct hl_heap *hs[H];
    void *p[H];
    for (int i = 0; i < H; i++) p[i] = alloc_in(hs[i] = hl_heap_new(FRESH_HEAP0 + 1 + i, true));
    for (int i = 0; i < H; i++) hl_free(p[i]);
    for (int i = 0; i < H; i++) assert_false(hl_remote_pending(hs[i]));   /* nothing evicted */
    hl_remote_flush();
    int sent = 0;
    size_t bytes = 0;
    for (int i = 0; i < H; i++) {
        sent += hl_remote_pending(hs[i]);
        bytes += inbox_bytes(hs[i]);
    }
    assert_true(sent >= 1 && sent < H);  /* a message per bucket used, at least two heaps share one */
    assert_int_equal(bytes, H * hl_class_size(hl_class_of(64)));
    collect_all(hs, H);                  /* forwarding included */
    for (int i = 0; i < H; i++) {
        assert_int_equal(inbox_bytes(hs[i]), 0);
        assert_int_equal(hl_heap_u(hs[i]), 0);
        assert_int_equal(hl_sb_of(p[i])->used, 0);
    }
    expect_settled();
}

/* The runs of the message in h's inbox, read as its owner reads them (inbox.c's route_runs): a
 * run's first block's second word holds its last block (bits 0..47) and its length (48..63).
 * Each run is of 1..cap blocks of one superblock and starts at one of blocks[0..n); together
 * they hold n blocks. The message goes back into the inbox for its owner to collect. */
static size_t message_runs(struct hl_heap *h, size_t cap, size_t n)
{
    void *p = (void *)atomic_exchange(&h->inbox, 0), *all = p;
    size_t seen = 0, runs = 0;
    while (p) {
        uintptr_t meta = ((uintptr_t *)p)[1];
        void *last = (void *)(meta & (((uintptr_t)1 << 48) - 1)), *q = p;
        size_t k = (size_t)(meta >> 48), heads = 0;
        assert_true(k >= 1 && k <= cap);
        for (size_t i = 1; i < k; i++)                /* k blocks of one superblock, to last */
            assert_ptr_equal(hl_sb_of(q = *(void **)q), hl_sb_of(p));
        assert_ptr_equal(q, last);
        for (size_t i = 0; i < n; i++) heads += blocks[i] == p;
        assert_int_equal(heads, 1);
        seen += k;
        runs++;
        p = *(void **)last;
    }
    assert_int_equal(seen, n);
    atomic_store(&h->inbox, (uintptr_t)all);
    return runs;
}

/* batch: the runs of a message as its owner reads them (message_runs). Blocks of
 * one superblock freed in a row go as runs of at most run_cap blocks (with a TLAB a quarter
 * of a bin's first limit, else 65535), each of one superblock, which together hold every
 * block once. */
static void batch_runs(void **state)
{
    (void)state;
    if (hl_remote_mode != HL_REMOTE_BATCH) skip();
    expect_settled();
    struct hl_heap *h = hl_heap_new(FRESH_HEAP0 + 200, true);
    size_t size = hl_class_size(hl_class_of(64));
    size_t cap = hl_cfg.tlab ? hl_cfg.tlab_budget / size / 4 : 0xffff;
    if (cap < 1) cap = 1;
    if (cap > 0xffff) cap = 0xffff;
    size_t n = 2 * 256 + 3;              /* (with a TLAB of 64 KiB: runs of 3, 256 and 256) */
    assert_true(n * size < hl_cfg.remote_batch_bytes);        /* sent by the flush only */
    for (size_t i = 0; i < n; i++) blocks[i] = alloc_in(h);
    for (size_t i = 0; i < n; i++) hl_free(blocks[i]);
    hl_remote_flush();
    size_t runs = message_runs(h, cap, n);
    assert_true(runs >= (n + cap - 1) / cap);
    collect_all(&h, 1);
    assert_int_equal(inbox_bytes(h), 0);
    assert_int_equal(hl_heap_u(h), 0);
    expect_settled();
}

/* batch, mixed sizes (issue 51): blocks of two classes freed alternately still go as runs of
 * many blocks, one open run per class (sender.h's hl_remote_runs); with a single open run per
 * bucket every run was one block long (80 runs here). */
static void batch_mixed_runs(void **state)
{
    (void)state;
    if (hl_remote_mode != HL_REMOTE_BATCH) skip();
    expect_settled();
    struct hl_heap *h = hl_heap_new(FRESH_HEAP0 + 201, true);
    enum { EACH = 40 };
    assert_true(2 * EACH <= MAX_BLOCKS);
    assert_int_not_equal(hl_class_of(64), hl_class_of(128));
    assert_true(EACH * (64 + 128) < hl_cfg.remote_batch_bytes);   /* sent by the flush only */
    for (int i = 0; i < EACH; i++) {
        blocks[2 * i] = alloc_in_size(h, 64);
        blocks[2 * i + 1] = alloc_in_size(h, 128);
    }
    for (int i = 0; i < 2 * EACH; i++) hl_free(blocks[i]);
    hl_remote_flush();
    /* one run per class and superblock: 2, or a few more where a class's blocks came from
     * two superblocks or a run reached its cap */
    assert_true(message_runs(h, 0xffff, 2 * EACH) <= 8);
    collect_all(&h, 1);
    assert_int_equal(inbox_bytes(h), 0);
    assert_int_equal(hl_heap_u(h), 0);
    expect_settled();
}

/* list: the run {p} kept by a collection of h, settled by h2, which does not own p's
 * superblock: back onto the superblock's list, which h's collection takes. */
static void list_run_elsewhere(void **state)
{
    (void)state;
    if (hl_remote_mode != HL_REMOTE_LIST || hl_sb_sharded) skip();
    expect_settled();
    struct hl_heap *h = hl_heap_new(FRESH_HEAP0 + 200, true);
    struct hl_heap *h2 = hl_heap_new(FRESH_HEAP0 + 201, true);
    void *p = alloc_in(h);
    hl_free(p);                          /* a remote free: pending on its superblock's list */
    hl_remote_flush();
    assert_true(hl_remote_pending(h));
    hl_heap_lock(h);
    void *runs = hl_remote_collect_runs(h);
    hl_heap_unlock(h);
    assert_ptr_equal(runs, p);           /* the list, kept as a run of one */
    hl_heap_lock(h2);
    hl_remote_settle(h2, runs);
    hl_heap_unlock(h2);
    assert_false(hl_remote_pending(h2));
    assert_true(hl_remote_pending(h)); /* announced to its owner again, as a superblock */
    collect_all(&h, 1);
    assert_int_equal(hl_heap_u(h), 0);
    expect_settled();
}

int main(void)
{
    /* Strategy, remote_free, heap_select, heaps and K come from meson.build. */
    hl_free(hl_malloc(1));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(to_exited),
        cmocka_unit_test(from_exited),
        cmocka_unit_test(bounded),
        cmocka_unit_test(fork_pending),
        cmocka_unit_test(collected_into_tlab),
        cmocka_unit_test(collected_into_spare),
        cmocka_unit_test(drained_without_lock),
        cmocka_unit_test(drained_cut),
        cmocka_unit_test(drained_in_free_order),
        cmocka_unit_test(sent_on_slow_path),
        cmocka_unit_test(batch_budget),
        cmocka_unit_test(batch_hashed),
        cmocka_unit_test(batch_runs),
        cmocka_unit_test(batch_mixed_runs),
        cmocka_unit_test(list_run_elsewhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
