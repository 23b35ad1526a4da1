/* test_sharded.c — free_lists = sharded (src/core/heaps/sharded.h), mimalloc's three lists per
 * superblock, under the strategy meson names (hoard or ownership, a heap per thread, tlab off):
 *   three_lists    an owner's free goes onto local_free (not the list malloc pops), another
 *                  thread's onto thread_free (the superblock's `remote` list, still counted in
 *                  `used`); the current superblock serves its free list, then local_free
 *                  swapped in, then (when that has run dry too) thread_free taken with one
 *                  atomic operation; the inbox that announced it then finds the list empty
 *   stays_on_one   malloc stays on one superblock per class until it is used up, whatever
 *                  another superblock of the class gets back
 *   threshold      hoard: local frees are out of u at once, so once the program frees all,
 *                  the heap keeps at most K superblocks of the class (Hoard's bookkeeping kept)
 *   refusals       sharded with remote_free = lock or queue, or free_list = fifo, stops at
 *                  start-up with exit status 2 */
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
#include "hoard.h"

#define TOP(w) ((void *)((w) & (((uintptr_t)1 << 48) - 16)))    /* remote.h's list word */

static struct hl_heap *owner_of(void *p)
{
    return atomic_load_explicit(&hl_sb_of(p)->owner, memory_order_relaxed);
}

static void *no_refill(struct hl_heap *h, unsigned c)
{
    (void)h, (void)c;
    fail_msg("the current superblock had blocks left, but the next was asked for");
    return NULL;
}

static void *free_it(void *p) { hl_free(p); return NULL; }

static void three_lists(void **state)
{
    (void)state;
    void *first = hl_malloc(64), *a = hl_malloc(64), *b = hl_malloc(64);
    struct hl_sb *sb = hl_sb_of(first);
    struct hl_heap *h = owner_of(first);
    unsigned c = sb->cls;
    assert_ptr_equal(*hl_heap_sharded_sb(&h->cls[c]), sb);
    assert_ptr_equal(hl_sb_of(a), sb);
    assert_ptr_equal(hl_sb_of(b), sb);

    uint32_t used = sb->used;
    size_t u = h->cls[c].acct->u;
    hl_free(a);                                         /* the owner's free: local_free */
    assert_ptr_equal(sb->local_free, a);
    assert_int_equal(sb->used, used - 1);               /* out of used and u at once */
    assert_int_equal(h->cls[c].acct->u, u - sb->size);
    for (void *q = sb->free_head; q; q = *(void **)q) assert_ptr_not_equal(q, a);

    pthread_t t;                                        /* another thread's: thread_free */
    assert_int_equal(pthread_create(&t, NULL, free_it, b), 0);
    pthread_join(t, NULL);
    assert_ptr_equal(TOP(atomic_load(&sb->remote)), b);
    assert_int_equal(sb->used, used - 1);               /* counted in used until taken */

    /* Under the lock nothing is asserted (a failure would leave it held): the blocks the
     * slow half hands out are recorded, in order, and looked at afterwards. */
    enum { MAX = 4096 };
    static void *seq[MAX];
    uint32_t n = 0, dry[2];
    hl_heap_lock(h);
    for (int round = 0; round < 2 && n < MAX; round++) {
        while (sb->free_head && n + 1 < MAX) seq[n++] = hl_sharded_alloc(h, c, no_refill);
        dry[round] = n;                 /* the free list ran dry before seq[n] */
        seq[n++] = hl_sharded_alloc(h, c, no_refill);
    }
    void *remote_left = TOP(atomic_load(&sb->remote));
    hl_remote_collect(h);               /* the inbox: sb, its list now empty */
    hl_heap_check(h, -1);
    hl_heap_unlock(h);

    for (uint32_t i = 0; i < dry[0]; i++) {            /* 1: the free list */
        assert_ptr_not_equal(seq[i], a);
        assert_ptr_not_equal(seq[i], b);
        assert_ptr_equal(hl_sb_of(seq[i]), sb);
    }
    assert_ptr_equal(seq[dry[0]], a);                   /* 2: local_free, swapped in */
    for (uint32_t i = dry[0] + 1; i < dry[1]; i++) assert_ptr_not_equal(seq[i], b);
    assert_ptr_equal(seq[dry[1]], b);                   /* 3: thread_free, taken at once */
    assert_null(remote_left);
    hl_free(first);
    for (uint32_t i = 0; i < n; i++) hl_free(seq[i]);
    h = owner_of(seq[0]);
    hl_heap_lock(h);
    hl_heap_check(h, -1);
    hl_heap_unlock(h);
}

static void stays_on_one(void **state)
{
    (void)state;
    /* Two superblocks of a class: fill the first, start the second, then give the first
     * blocks back; malloc keeps taking the second's until it is used up. */
    void *p = hl_malloc(128);
    struct hl_sb *one = hl_sb_of(p);
    uint32_t cap = one->capacity, n = 0;
    void **blocks = calloc(3 * (size_t)cap, sizeof *blocks);
    blocks[n++] = p;
    while (hl_sb_of(blocks[n - 1]) == one || n < 2) blocks[n++] = hl_malloc(128);
    struct hl_sb *two = hl_sb_of(blocks[n - 1]);
    assert_ptr_not_equal(one, two);
    for (uint32_t i = 0; i < 8; i++) hl_free(blocks[i]);    /* one gets blocks back */
    while (two->used < two->capacity) {
        void *q = hl_malloc(128);
        assert_ptr_equal(hl_sb_of(q), two);
        blocks[n++] = q;
    }
    void *q = hl_malloc(128);                           /* two used up: on to one's */
    assert_ptr_equal(hl_sb_of(q), one);
    blocks[n++] = q;
    for (uint32_t i = 8; i < n; i++) hl_free(blocks[i]);
    free(blocks);
    struct hl_heap *h = hl_heap_mine();
    hl_heap_lock(h);
    hl_heap_check(h, -1);
    hl_heap_unlock(h);
}

static void threshold(void **state)
{
    (void)state;
    if (strcmp(hl_active->name, "hoard")) skip();
    size_t K = (size_t)hl_cfg.release_threshold, n = (K + 3) * hl_sb_capacity_of(hl_class_of(256)) + 5;
    void **blocks = calloc(n, sizeof *blocks);
    for (size_t i = 0; i < n; i++) blocks[i] = hl_malloc(256);
    struct hl_heap *h = owner_of(blocks[0]);
    unsigned c = hl_sb_of(blocks[0])->cls;
    size_t sb_bytes = hl_sb_bytes(hl_sb_of(blocks[0]));
    assert_true(h->cls[c].acct->a >= (K + 3) * sb_bytes);
    for (size_t i = 0; i < n; i++) hl_free(blocks[i]);
    free(blocks);
    /* u = 0, and Hoard's invariant u >= a - K S leaves at most K superblocks' worth. */
    assert_int_equal(h->cls[c].acct->u, 0);
    assert_true(h->cls[c].acct->a <= K * sb_bytes);
}

/* This program again, only to start the allocator with one more key: it must exit 2. */
static void refused(const char *key, const char *value)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv(key, value, 1);
        execl("/proc/self/exe", "test_sharded", "--init-only", (char *)NULL);
        _exit(99);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2)
        fail_msg("free_lists = sharded with %s=%s was not refused at start-up", key, value);
}

static void refusals(void **state)
{
    (void)state;
    refused("HOARD_REMOTE_FREE", "lock");
    refused("HOARD_REMOTE_FREE", "queue");
    refused("HOARD_FREE_LIST", "fifo");
}

int main(int argc, char **argv)
{
    setenv("HOARD_STRATEGY", "hoard", 0);
    setenv("HOARD_FREE_LISTS", "sharded", 0);         /* (refused's child sets its own) */
    setenv("HOARD_REMOTE_FREE", "list", 0);
    setenv("HOARD_HEAP_SELECT", "thread", 0);
    hl_init();
    if (argc > 1 && !strcmp(argv[1], "--init-only")) return 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_lists),
        cmocka_unit_test(stays_on_one),
        cmocka_unit_test(threshold),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
