/* test_mt.c — a multithreaded stress of one strategy (HOARD_STRATEGY): threads allocate blocks
 * of many classes, write them, pass some to a neighbour through a mailbox, free their own and
 * their neighbours' blocks, and check that no block changed under them. Built twice: plainly,
 * and against a ThreadSanitizer build of the whole allocator, where any unsynchronised access
 * inside the allocator (a heap touched without its lock, an owner read racing a transfer)
 * is reported and fails the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "front.h"

#define THREADS 4
#define OPS     20000
#define SLOTS   64
#define MAILBOX 32

struct mailbox {
    pthread_mutex_t lock;
    unsigned char *box[MAILBOX];
    int n;
} mail[THREADS];

static _Atomic int corrupt;

static void stamp(unsigned char *p, size_t n, unsigned char v) { memset(p, v, n); }

static void verify(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) { atomic_store(&corrupt, 1); return; }
}

/* Blocks carry their size and stamp in their first bytes. */
static unsigned char *make(unsigned seed)
{
    size_t n = 16 + seed % 2500;
    unsigned char *p = hl_malloc(n);
    stamp(p, n, (unsigned char)n);
    memcpy(p, &n, sizeof n);
    return p;
}

static void check_and_free(unsigned char *p)
{
    size_t n;
    memcpy(&n, p, sizeof n);
    verify(p + sizeof n, n - sizeof n, (unsigned char)n);
    hl_free(p);
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    unsigned seed = 12345u + (unsigned)me * 7919u;
    unsigned char *slot[SLOTS] = {0};
    for (int op = 0; op < OPS; op++) {
        seed = seed * 1103515245u + 12345u;
        unsigned i = (seed >> 8) % SLOTS;
        if (slot[i]) {
            if ((seed >> 20) % 3 == 0) {                 /* hand it to the neighbour */
                struct mailbox *m = &mail[(me + 1) % THREADS];
                pthread_mutex_lock(&m->lock);
                if (m->n < MAILBOX) { m->box[m->n++] = slot[i]; slot[i] = NULL; }
                pthread_mutex_unlock(&m->lock);
            }
            if (slot[i]) { check_and_free(slot[i]); slot[i] = NULL; }
        } else {
            slot[i] = make(seed >> 4);
        }
        if (op % 16 == 0) {                               /* free what others handed us */
            struct mailbox *m = &mail[me];
            pthread_mutex_lock(&m->lock);
            while (m->n) check_and_free(m->box[--m->n]);
            pthread_mutex_unlock(&m->lock);
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (slot[i]) check_and_free(slot[i]);
    return NULL;
}

static void threads_exchange_blocks(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_mutex_init(&mail[i].lock, NULL);
    for (int round = 0; round < 2; round++) {            /* second round: reused heaps */
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i), 0);
        for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    }
    for (int i = 0; i < THREADS; i++)
        while (mail[i].n) check_and_free(mail[i].box[--mail[i].n]);
    assert_int_equal(atomic_load(&corrupt), 0);
}

/* hoardlab_heap_contention: every heap up to the last answers, the one after says -1 (and the
 * first, under a strategy without private heaps: skipped); heaps that are locked (all but `private`'s per-thread heaps) count acquisitions. */
static void per_heap_lock_counts(void **state)
{
    (void)state;
    uint64_t acq, cont, total = 0, contended = 0;
    unsigned n = 0;
    if (hoardlab_heap_contention(0, &acq, &cont) != 0) {
        skip();                     /* a single-heap strategy (one made by `hoardlab new`) */
        return;
    }
    while (hoardlab_heap_contention(n, &acq, &cont) == 0 && n < 100000) {
        assert_true(cont <= acq);
        total += acq;
        contended += cont;
        n++;
    }
    assert_true(n >= 2 && n < 100000);
    /* Every heap operation locks, except in `private` heaps and behind a cache (TLAB, CPU). */
    if (strcmp(hoardlab_strategy(), "private") != 0 && hl_cfg.cache == HL_CACHE_NONE)
        assert_true(total > 2 * OPS);
    printf("# %s: %u heaps, %llu lock acquisitions, %llu contended\n", hoardlab_strategy(), n,
           (unsigned long long)total, (unsigned long long)contended);
}

int main(void)
{
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_exchange_blocks),
        cmocka_unit_test(per_heap_lock_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
