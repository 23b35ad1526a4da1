/* test_heapselect.c — heap selection (heap_select, set by meson per run):
 *   thread  a live thread has a heap of its own; an exited thread's heap goes to the next new
 *           thread; allocations during TLS teardown still work (teardown heap)
 *   hash    thread id mod `heaps`
 *   cpu     the heap of the CPU the thread runs on
 *   home    the next heap, round-robin, at a thread's first call */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "front.h"
#include "mem.h"
#include "heapselect.h"

static struct hl_heap *seen;
static pthread_key_t late_key;

static void *note_heap(void *arg)
{
    (void)arg;
    void *p = hl_malloc(24);
    seen = hl_heap_mine();
    hl_free(p);
    return NULL;
}

static void *note_heap_and_id(void *arg)
{
    struct { struct hl_heap *h; unsigned id; } *out = arg;
    hl_free(hl_malloc(24));
    out->h = hl_heap_mine();
    out->id = hl_self()->id;
    return NULL;
}

/* A TLS destructor that allocates after hoardlab's own exit hook may have run. */
static _Atomic int late_after_exit_hook;

static void late(void *arg)
{
    if (hl_self()->state == 2) atomic_fetch_add(&late_after_exit_hook, 1);
    char *p = hl_malloc(100);
    memset(p, 1, 100);
    hl_free(arg);
    hl_free(p);
}

static void *allocate_in_teardown(void *arg)
{
    (void)arg;
    hl_free(hl_malloc(8));
    pthread_setspecific(late_key, hl_malloc(50));
    return NULL;
}

static void selection(void **state)
{
    (void)state;
    pthread_t t;
    int mode = hl_cfg.heap_select;
    struct hl_heap *main_heap = hl_heap_mine();
    if (mode == HL_SELECT_THREAD) {
        pthread_create(&t, NULL, note_heap, NULL);
        pthread_join(t, NULL);
        struct hl_heap *first = seen;
        assert_ptr_not_equal(first, main_heap);          /* not the main thread's */
        pthread_create(&t, NULL, note_heap, NULL);
        pthread_join(t, NULL);
        assert_ptr_equal(seen, first);                   /* reused from the pool */
    } else if (mode == HL_SELECT_HASH) {
        struct { struct hl_heap *h; unsigned id; } a, b;
        pthread_create(&t, NULL, note_heap_and_id, &a);
        pthread_join(t, NULL);
        pthread_create(&t, NULL, note_heap_and_id, &b);
        pthread_join(t, NULL);
        assert_int_equal(a.h->index, a.id % hl_cfg.heaps + 1);
        assert_int_equal(b.h->index, b.id % hl_cfg.heaps + 1);
        assert_int_equal(main_heap->index, hl_self()->id % hl_cfg.heaps + 1);
    } else if (mode == HL_SELECT_HOME) {
        pthread_create(&t, NULL, note_heap, NULL);
        pthread_join(t, NULL);
        struct hl_heap *first = seen;
        pthread_create(&t, NULL, note_heap, NULL);
        pthread_join(t, NULL);
        assert_int_equal(seen->index - 1, first->index % hl_cfg.heaps);   /* the next one */
        assert_ptr_equal(hl_heap_mine(), main_heap);                      /* kept */
    } else {
        (void)main_heap;
        int cpu = sched_getcpu();
        struct hl_heap *h = hl_heap_mine();
        if (sched_getcpu() == cpu)                       /* not migrated in between */
            assert_int_equal(h->index, (unsigned)cpu % hl_cfg.heaps + 1);
    }
    for (int i = 0; i < 50; i++) {                       /* teardown allocations */
        pthread_create(&t, NULL, allocate_in_teardown, NULL);
        pthread_join(t, NULL);
    }
    assert_int_equal(atomic_load(&late_after_exit_hook), 50);
}

int main(void)
{
    hl_init();
    hl_free(hl_malloc(1));              /* hoardlab's exit key first: ours runs after it */
    pthread_key_create(&late_key, late);
    const struct CMUnitTest tests[] = { cmocka_unit_test(selection) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
