/* test_selector.c — heap selection's rule (src/core/selector.c, selector.h) over slots of the
 * test's own, each heap_select value as selector.h documents it:
 *   thread  a slot per id, made by `make` on the id's first selection and kept for it; ids in
 *           different rows of the directory; threads racing on one new id all get the one
 *           slot made (a loser's is never handed out)
 *   hash    id mod n
 *   cpu     the slot of the CPU the caller runs on, mod n (pinned to each CPU in turn)
 *   home    round-robin at each thread's first selection, then the same slot for its life
 * (test_lfcontainers.c has a shorter check of hash and thread; test_heapselect.c selects
 * real heaps.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include "front.h"
#include "mem.h"
#include "selector.h"

enum { N = 3, MAKES = 4096 };
static int slots[MAKES];
static _Atomic int made;
static bool slow_make;                   /* thread_mode_race: widen the window between the
                                          * empty slot read and the slot's install */
static void *make(void)
{
    for (int i = 0; slow_make && i < 20; i++) sched_yield();
    return &slots[atomic_fetch_add(&made, 1)];
}

static struct hl_selector sel;

/* A selector in mode m with n fixed slots (hash, cpu, home), slots[0 .. n-1]. */
static void start(int m, unsigned n)
{
    hl_cfg.heap_select = m;
    hl_cfg.heaps = (int)n;
    atomic_store(&made, 0);
    hl_selector_init(&sel, make);
    assert_int_equal(sel.n, m == HL_SELECT_THREAD ? 0 : n);
    for (unsigned i = 0; i < sel.n; i++) sel.fixed[i] = &slots[i];
}

static void thread_mode(void **state)
{
    (void)state;
    start(HL_SELECT_THREAD, 0);
    unsigned ids[] = { 0, 1, 255, 256, 4097, 65535 };
    void *got[6];
    for (int i = 0; i < 6; i++) got[i] = hl_select(&sel, ids[i]);
    assert_int_equal(atomic_load(&made), 6);
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < i; j++) assert_ptr_not_equal(got[i], got[j]);
        assert_ptr_equal(hl_select(&sel, ids[i]), got[i]);       /* kept for the id */
    }
    assert_int_equal(atomic_load(&made), 6);
}

static pthread_barrier_t go;
static void *select_42(void *arg)
{
    pthread_barrier_wait(&go);
    *(void **)arg = hl_select(&sel, 42);
    return NULL;
}

static void thread_mode_race(void **state)
{
    (void)state;
    enum { T = 8 };
    slow_make = true;
    for (int round = 0; round < 20; round++) {
        start(HL_SELECT_THREAD, 0);
        pthread_t t[T];
        void *got[T];
        pthread_barrier_init(&go, NULL, T);
        for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, select_42, &got[i]);
        for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&go);
        for (int i = 1; i < T; i++) assert_ptr_equal(got[i], got[0]);
        assert_ptr_equal(hl_select(&sel, 42), got[0]);
    }
    slow_make = false;
}

static void hash_mode(void **state)
{
    (void)state;
    start(HL_SELECT_HASH, N);
    for (unsigned id = 0; id < 40; id++) assert_ptr_equal(hl_select(&sel, id), &slots[id % N]);
    assert_int_equal(atomic_load(&made), 0);             /* fixed slots: nothing made */
}

static void cpu_mode(void **state)
{
    (void)state;
    start(HL_SELECT_CPU, N);
    cpu_set_t was, one;
    assert_int_equal(sched_getaffinity(0, sizeof was, &was), 0);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &was)) continue;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
        for (unsigned id = 0; id < 5; id++)                  /* the id plays no part */
            assert_ptr_equal(hl_select(&sel, id), &slots[(unsigned)c % N]);
    }
    assert_int_equal(sched_setaffinity(0, sizeof was, &was), 0);
}

static void *home_twice(void *arg)
{
    void **got = arg;
    got[0] = hl_select(&sel, 7);
    for (int i = 0; i < 100; i++) sched_yield();
    got[1] = hl_select(&sel, 7);
    return NULL;
}

static void home_mode(void **state)
{
    (void)state;
    start(HL_SELECT_HOME, N);
    void *mine = hl_select(&sel, 0);
    assert_ptr_equal(mine, &slots[0]);                   /* the first thread: the first slot */
    for (int k = 1; k <= 2 * N; k++) {                   /* then one new thread after another */
        void *got[2];
        pthread_t t;
        pthread_create(&t, NULL, home_twice, got);
        pthread_join(t, NULL);
        assert_ptr_equal(got[0], &slots[k % N]);
        assert_ptr_equal(got[1], got[0]);                /* kept for the thread's life */
    }
    for (unsigned id = 0; id < 10; id++) assert_ptr_equal(hl_select(&sel, id), mine);
}

int main(void)
{
    /* the strategy's own selection keeps off home's per-thread slot */
    setenv("HOARD_HEAP_SELECT", "hash", 1);
    hl_init();
    int mode = hl_cfg.heap_select, heaps = hl_cfg.heaps;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thread_mode),
        cmocka_unit_test(thread_mode_race),
        cmocka_unit_test(hash_mode),
        cmocka_unit_test(cpu_mode),
        cmocka_unit_test(home_mode),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hl_cfg.heap_select = mode, hl_cfg.heaps = heaps;
    return failed;
}
