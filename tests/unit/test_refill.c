/* test_refill.c — the refill every front cache shares (src/core/cache/refill.h), under
 * hoard2026 with the front and remote_free meson gives (cache = thread | cpu, remote_free =
 * queue | batch):
 *   posted_on_refill  a thread frees a few blocks of another heap (fewer than a queue post,
 *                 less than a batch bucket: they stay in its buffers), then only mallocs: its
 *                 front's refills post them (the sender's slow path, remote.h), so the owner
 *                 collects every one. Before the one refill routine, cache = cpu posted only
 *                 under batch: with queue the blocks stayed unposted until the thread freed 32
 *                 more to that heap or exited (docs/cpu-cache.md).
 * The freed blocks are of a class that bypasses the per-CPU cache (cpu_cache_bytes = 4K
 * under cache = cpu), so their free is the row's, a remote free, as the TLAB's is.
 * Exits 77 (skipped) under cache = cpu when no rseq area is registered, and only then. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include "front.h"
#include "mem.h"
#include "cache.h"

#define FREED 31                         /* fewer than a queue post (sender.c's BATCH) */
#define SIZE 5000                        /* over cpu_cache_bytes: the class bypasses it */
#define MALLOCS 20000                    /* small mallocs: many refills of every front */

static void *alloc_in(struct hl_heap *h)
{
    unsigned c = hl_class_of(SIZE);
    hl_heap_lock(h);
    void *p = hl_heap_alloc_sb(h, c);
    if (!p) p = hl_heaps_refill_from_os(h, c);
    hl_heap_unlock(h);
    assert_non_null(p);
    return p;
}

static void posted_on_refill(void **state)
{
    (void)state;
    struct hl_heap *h = hl_heap_new(1000u, true);      /* a heap no thread uses */
    void *freed[FREED];
    for (int i = 0; i < FREED; i++) freed[i] = alloc_in(h);
    for (int i = 0; i < FREED; i++) hl_free(freed[i]);
    void **v = malloc(MALLOCS * sizeof *v);
    for (int i = 0; i < MALLOCS; i++) v[i] = hl_malloc(64);
    /* what reached h's inbox, collected: the rest is still in this thread's buffers, counted
     * in h's u */
    while (hl_remote_pending(h)) {
        hl_heap_lock(h);
        hl_remote_collect(h);
        hl_heap_unlock(h);
    }
    size_t unposted = hl_heap_u(h) / hl_class_size(hl_class_of(SIZE));
    printf("cache = %s, remote_free = %s: %zu of %d remote frees unposted after %d mallocs\n",
           getenv("HOARD_CACHE"), getenv("HOARD_REMOTE_FREE"), unposted, FREED, MALLOCS);
    assert_int_equal(unposted, 0);
    for (int i = 0; i < MALLOCS; i++) hl_free(v[i]);
    free(v);
}

int main(void)
{
    const char *cache = getenv("HOARD_CACHE");
    if (cache && !strcmp(cache, "cpu") && __rseq_size == 0) {
        fprintf(stderr, "test_refill: no rseq area registered (__rseq_size == 0): skipped\n");
        return 77;                       /* rseq unavailable, and nothing else, skips */
    }
    setenv("HOARD_STRATEGY", "hoard2026", 1);
    if (cache && !strcmp(cache, "cpu")) setenv("HOARD_CPU_CACHE_BYTES", "4K", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    hl_init();
    hl_free(hl_malloc(1));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(posted_on_refill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
