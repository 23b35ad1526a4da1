/* test_globalheap.c — hoard's global heap (src/core/globalheap.c) as four shards keyed by
 * thread (global_shards = 4, global_shard_key = thread: a thread's shard is its id mod 4),
 * driven directly with superblocks made by hand and heaps of the test's own:
 *   round_trip     put moves a superblock from its heap into the thread's shard (its owner
 *                  then), get moves it back and it is gone from the shard; a second get
 *                  finds nothing; global_to and global_from count each move
 *   shard_by_key   threads with ids 1, 2, 3 put into shards 1, 2, 3
 *   get_anywhere   a thread whose own shard is empty finds what others parked in theirs,
 *                  and a superblock alone in any other shard (placed by hl_global_attach):
 *                  none is stranded before the OS is asked
 *   fullest_first  get takes the fullest superblock of the class, then an empty one of any
 *                  class, never a full one */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "front.h"
#include "mem.h"
#include "globalheap.h"
#include "heapselect.h"

#define SHARDS 4

static struct hl_heap *fresh_heap(void)
{
    static unsigned index = 1000;
    return hl_heap_new(index++, true);
}

/* A superblock of class c in h with `used` blocks handed out. */
static struct hl_sb *sb_in(struct hl_heap *h, unsigned c, uint32_t used)
{
    struct hl_sb *sb = hl_sb_new(c);
    assert_non_null(sb);
    hl_heap_attach(h, sb);
    for (uint32_t i = 0; i < used; i++) hl_heap_alloc_from(h, sb);
    return sb;
}

static struct hl_heap *owner(struct hl_sb *sb) { return atomic_load(&sb->owner); }

static uint32_t parked(void)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < hl_heap_nshards; k++) n += hl_heap_shards[k]->nsb;
    return n;
}

static void put(struct hl_heap *h, struct hl_sb *sb)
{
    hl_heap_lock(h);
    hl_global_put(h, sb);
    hl_heap_unlock(h);
}
static struct hl_sb *get(struct hl_heap *h, unsigned c)
{
    hl_heap_lock(h);
    struct hl_sb *sb = hl_global_get(h, c);
    hl_heap_unlock(h);
    return sb;
}

static void round_trip(void **state)
{
    (void)state;
    assert_int_equal(hl_heap_nshards, SHARDS);
    assert_int_equal(parked(), 0);
    unsigned c = hl_class_of(64), me = hl_self()->id;
    struct hl_heap *h = fresh_heap();
    struct hl_sb *sb = sb_in(h, c, 3);
    uint64_t to = hl_me.ctr.global_to, from = hl_me.ctr.global_from;
    put(h, sb);
    assert_ptr_equal(owner(sb), hl_heap_shards[me % SHARDS]);
    assert_int_equal(h->nsb, 0);
    assert_int_equal(hl_heap_shards[me % SHARDS]->nsb, 1);
    assert_int_equal(hl_me.ctr.global_to - to, 1);
    assert_ptr_equal(get(h, c), sb);
    assert_ptr_equal(owner(sb), h);
    assert_int_equal(h->nsb, 1);
    assert_int_equal(sb->used, 3);
    assert_int_equal(parked(), 0);
    assert_int_equal(hl_me.ctr.global_from - from, 1);
    assert_null(get(h, c));                              /* taken, not copied */
}

struct putter { pthread_barrier_t *all_live; struct hl_sb *sb; struct hl_heap *h; unsigned id; };

static void *put_from_thread(void *arg)
{
    struct putter *p = arg;
    p->id = hl_self()->id;
    pthread_barrier_wait(p->all_live);                   /* ids 1, 2, 3 held at once */
    put(p->h, p->sb);
    return NULL;
}

static struct hl_sb *parked_by_threads[SHARDS - 1];

static void shard_by_key(void **state)
{
    (void)state;
    pthread_barrier_t all_live;
    pthread_barrier_init(&all_live, NULL, SHARDS - 1);
    struct putter p[SHARDS - 1];
    pthread_t t[SHARDS - 1];
    for (int i = 0; i < SHARDS - 1; i++) {
        p[i] = (struct putter){ &all_live, NULL, fresh_heap(), 0 };
        p[i].sb = parked_by_threads[i] = sb_in(p[i].h, hl_class_of(96), 1 + (uint32_t)i);
        assert_int_equal(pthread_create(&t[i], NULL, put_from_thread, &p[i]), 0);
    }
    for (int i = 0; i < SHARDS - 1; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&all_live);
    for (int i = 0; i < SHARDS - 1; i++) {
        assert_true(p[i].id >= 1 && p[i].id < SHARDS);
        assert_ptr_equal(owner(p[i].sb), hl_heap_shards[p[i].id % SHARDS]);
    }
}

static void get_anywhere(void **state)
{
    (void)state;
    assert_int_equal(hl_self()->id % SHARDS, 0);
    assert_int_equal(hl_heap_shards[0]->nsb, 0);         /* nothing in the thread's own */
    struct hl_heap *h = fresh_heap();
    bool found[SHARDS - 1] = { false };
    for (int n = 0; n < SHARDS - 1; n++) {
        struct hl_sb *sb = get(h, hl_class_of(96));
        assert_non_null(sb);
        for (int i = 0; i < SHARDS - 1; i++) found[i] |= sb == parked_by_threads[i];
    }
    for (int i = 0; i < SHARDS - 1; i++) assert_true(found[i]);
    assert_int_equal(parked(), 0);
    assert_null(get(h, hl_class_of(96)));
    for (unsigned i = 0; i < 32; i++) {                  /* one alone in another shard */
        unsigned k = 1 + i % (SHARDS - 1);
        struct hl_sb *sb = hl_sb_new(hl_class_of(96));
        hl_heap_lock(hl_heap_shards[k]);
        hl_global_attach(k, sb);
        hl_heap_unlock(hl_heap_shards[k]);
        if (get(h, hl_class_of(96)) != sb) fail_msg("round %u: not found in shard %u", i, k);
    }
}

static void fullest_first(void **state)
{
    (void)state;
    unsigned c = hl_class_of(200), other = hl_class_of(3000);
    uint32_t cap = hl_sb_capacity_of(c);
    struct hl_heap *h = fresh_heap();
    struct hl_sb *light = sb_in(h, c, 1), *full = sb_in(h, c, cap), *heavy = sb_in(h, c, cap - 1),
                 *empty = sb_in(h, other, 0);
    put(h, light), put(h, full), put(h, heavy), put(h, empty);
    assert_int_equal(parked(), 4);
    assert_ptr_equal(get(h, c), heavy);
    assert_ptr_equal(get(h, c), light);
    assert_ptr_equal(get(h, c), empty);                  /* recycled for any class */
    assert_null(get(h, c));                              /* the full one is no use */
    assert_ptr_equal(owner(full), hl_heap_shards[0]);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_GLOBAL_SHARDS", "4", 1);
    setenv("HOARD_GLOBAL_SHARD_KEY", "thread", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    setenv("HOARD_RELEASE_EMPTY", "off", 1);
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(shard_by_key),
        cmocka_unit_test(get_anywhere),
        cmocka_unit_test(fullest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
