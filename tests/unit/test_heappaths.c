/* test_heappaths.c — the heap rows' malloc and free (src/core/heaps/heappaths.c, heappaths.h)
 * called directly with hooks of the test's own (a refill and an after-free policy that count
 * their calls, installed as heap.h's hl_heap_refill and hl_heap_after_free), under
 * ownership with a heap per thread; each test uses size classes no other code here
 * allocates, so the heap's counts are the test's:
 *   fast_paths      malloc takes a block of the thread's heap, u rises by the class size and
 *                   a by the superblock the refill brought; free puts it back, u as before
 *   one_refill      the fullest superblock serves until full: cap + 1 blocks take exactly
 *                   two new superblocks; freeing them all brings u back, the superblocks
 *                   stay (a kept)
 *   general_paths   the general paths do the same steps with blocking locks, and the general
 *                   free runs the row's policy once per free
 *   remote_to_owner a block freed by a thread whose heap does not own it goes back to its
 *                   owner (remote_free = lock): the owner's u falls, remote_frees counts it
 *   heaps_stats     hl_heaps_stats: a - u and the empty superblocks of every heap summed, and
 *                   a superblock with one block out adds one live superblock
 * A superblock a class lacks comes from the refill or is an empty one of the heap recycled
 * (the empty ones earlier calls left): the tests count both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "front.h"
#include "mem.h"
#include "heappaths.h"

static int refills, afters;
static void *refill(struct hl_heap *h, unsigned c)
{
    refills++;
    return hl_heaps_refill_from_os(h, c);
}
static void after(struct hl_heap *h, struct hl_sb *sb) { (void)h, (void)sb; afters++; }

static struct hl_account *acct(struct hl_heap *h, size_t size)
{
    return h->cls[hl_class_of(size)].acct;
}
static struct hl_heap *owner(void *p) { return atomic_load(&hl_sb_of(p)->owner); }

static void check(struct hl_heap *h)
{
    hl_heap_lock(h);
    hl_heap_check(h, -1);
    hl_heap_unlock(h);
}

static void fast_paths(void **state)
{
    (void)state;
    struct hl_heap *h = hl_heap_mine();
    size_t u = acct(h, 3000)->u, a = acct(h, 3000)->a, size = hl_class_size(hl_class_of(3000));
    uint32_t empty = h->nempty;
    refills = 0;
    void *p = hl_heap_malloc_fast(3000, true);
    assert_non_null(p);
    assert_ptr_equal(owner(p), h);
    assert_int_equal(refills + (empty - h->nempty), 1);  /* no superblock of the class yet */
    assert_int_equal(acct(h, 3000)->u, u + size);
    assert_int_equal(acct(h, 3000)->a, a + hl_sb_bytes(hl_sb_of(p)));
    void *q = hl_heap_malloc_fast(3000, true);
    assert_int_equal(refills + (empty - h->nempty), 1);
    assert_ptr_equal(hl_sb_of(q), hl_sb_of(p));
    hl_heap_free_fast(q, true);
    hl_heap_free_fast(p, true);
    assert_int_equal(acct(h, 3000)->u, u);
    check(h);
}

static void one_refill(void **state)
{
    (void)state;
    struct hl_heap *h = hl_heap_mine();
    unsigned c = hl_class_of(1500);
    uint32_t cap = hl_sb_capacity_of(c);
    size_t u = h->cls[c].acct->u, a = h->cls[c].acct->a;
    void **p = calloc(cap + 1, sizeof *p);
    uint32_t empty = h->nempty;
    refills = 0;
    for (uint32_t i = 0; i <= cap; i++)
        assert_non_null(p[i] = hl_heap_malloc_fast(1500, true));
    assert_int_equal(refills + (empty - h->nempty), 2);  /* new, or empty ones recycled */
    for (uint32_t i = 1; i < cap; i++) assert_ptr_equal(hl_sb_of(p[i]), hl_sb_of(p[0]));
    assert_ptr_not_equal(hl_sb_of(p[cap]), hl_sb_of(p[0]));
    assert_int_equal(h->cls[c].acct->u, u + (cap + 1) * hl_class_size(c));
    assert_int_equal(h->cls[c].acct->a, a + 2 * hl_sb_bytes(hl_sb_of(p[0])));
    for (uint32_t i = 0; i <= cap; i++) hl_heap_free_fast(p[i], true);
    assert_int_equal(h->cls[c].acct->u, u);
    assert_int_equal(h->cls[c].acct->a, a + 2 * hl_sb_bytes(hl_sb_of(p[0])));
    check(h);
    free(p);
}

static void general_paths(void **state)
{
    (void)state;
    struct hl_heap *h = hl_heap_mine();
    unsigned c = hl_class_of(2500);
    size_t u = h->cls[c].acct->u;
    uint32_t empty = h->nempty;
    refills = afters = 0;
    void *p = hl_heap_malloc_general(c), *q = hl_heap_malloc_general(c);
    assert_int_equal(refills + (empty - h->nempty), 1);
    assert_ptr_equal(owner(p), h);
    assert_ptr_equal(hl_sb_of(q), hl_sb_of(p));
    assert_int_equal(h->cls[c].acct->u, u + 2 * hl_class_size(c));
    hl_heap_free_general(p);
    hl_heap_free_general(q);
    assert_int_equal(afters, 2);
    assert_int_equal(h->cls[c].acct->u, u);
    check(h);
}

struct other { void *p; struct hl_heap *h; pthread_barrier_t freed; };

static void *malloc_and_wait(void *arg)
{
    struct other *o = arg;
    o->p = hl_heap_malloc_fast(700, true);
    o->h = hl_heap_mine();
    pthread_barrier_wait(&o->freed);                     /* handed over */
    pthread_barrier_wait(&o->freed);                     /* main freed it */
    return NULL;
}

static void remote_to_owner(void **state)
{
    (void)state;
    struct other o;
    pthread_barrier_init(&o.freed, NULL, 2);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, malloc_and_wait, &o), 0);
    pthread_barrier_wait(&o.freed);
    assert_ptr_not_equal(o.h, hl_heap_mine());
    assert_ptr_equal(owner(o.p), o.h);
    size_t u = acct(o.h, 700)->u;
    uint64_t remote = hl_me.ctr.remote_frees;
    hl_heap_free_fast(o.p, true);
    assert_int_equal(acct(o.h, 700)->u, u - hl_class_size(hl_class_of(700)));
    assert_int_equal(hl_me.ctr.remote_frees - remote, 1);
    pthread_barrier_wait(&o.freed);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&o.freed);
    check(o.h);
}

/* What hl_heaps_stats should say, summed here heap by heap (no shards under ownership). */
static void sum_heap(struct hl_heap *h, void *arg)
{
    struct hoardlab_stats *s = arg;
    assert_false(hl_heap_is_shard(h));
    s->heaps_free_bytes += hl_heap_a(h) - hl_heap_u(h);
    s->heaps_empty_bytes += (size_t)h->nempty * hl_sb_size;
    s->sb_live += h->nsb - h->nempty;
    s->sb_live_used_bytes += hl_heap_u(h);
}

static void heaps_stats(void **state)
{
    (void)state;
    struct hoardlab_stats s0 = { 0 }, s1 = { 0 }, want = { 0 };
    hl_heaps_stats(&s0);
    void *p = hl_heap_malloc_fast(5000, true);
    hl_heaps_stats(&s1);
    hl_heaps_foreach(sum_heap, &want);
    assert_int_equal(s1.heaps_free_bytes, want.heaps_free_bytes);
    assert_int_equal(s1.heaps_empty_bytes, want.heaps_empty_bytes);
    assert_int_equal(s1.sb_live, want.sb_live);
    assert_int_equal(s1.sb_live_used_bytes, want.sb_live_used_bytes);
    assert_int_equal(s1.global_free_bytes, 0);
    assert_int_equal(s1.sb_live - s0.sb_live, 1);        /* p's superblock, new or recycled */
    assert_int_equal(s1.sb_live_used_bytes - s0.sb_live_used_bytes,
                     hl_class_size(hl_class_of(5000)));
    hl_heap_free_fast(p, true);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "ownership", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    setenv("HOARD_REMOTE_FREE", "lock", 1);
    setenv("HOARD_TLAB", "off", 1);
    setenv("HOARD_CACHE", "none", 1);
    hl_init();
    hl_free(hl_malloc(1));                               /* the main thread's heap */
    hl_heap_refill = refill;                             /* the row's hooks, the test's own */
    hl_heap_after_free = after;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_paths),
        cmocka_unit_test(one_refill),
        cmocka_unit_test(general_paths),
        cmocka_unit_test(remote_to_owner),
        cmocka_unit_test(heaps_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
