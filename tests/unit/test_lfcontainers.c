/* test_lfcontainers.c — the generic lock-free containers and heap selection's rule:
 *   lfstack   pushes come off last-in first-out, a pushed chain comes off in chain order, an
 *             empty stack pops NULL;
 *   lfqueue   values come out first-in first-out; under several threads putting and getting
 *             at once, every value comes out exactly once;
 *   selector  hash = id mod n, thread = one slot per id, made once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include "front.h"
#include "config.h"
#include "lfqueue.h"
#include "selector.h"

struct item { _Atomic(void *) next; int v; };

static void stack_order(void **state)
{
    (void)state;
    static _Atomic(void *) top;
    static struct item it[4];
    struct hl_hp_rec *r = hl_hp_mine();
    assert_null(hl_lfs_pop(r, 0, &top, offsetof(struct item, next), NULL));
    for (int i = 0; i < 2; i++) {
        it[i].v = i;
        assert_int_equal(hl_lfs_push(&top, &it[i], &it[i].next), 0);
    }
    atomic_store(&it[2].next, &it[3]);              /* the chain 2 -> 3, pushed at once */
    hl_lfs_push_chain(&top, &it[2], &it[3].next);
    int want[] = {2, 3, 1, 0};
    for (int i = 0; i < 4; i++) {
        unsigned fails = 0;
        struct item *x = hl_lfs_pop(r, 0, &top, offsetof(struct item, next), &fails);
        assert_ptr_equal(x, &it[want[i]]);
        assert_int_equal(fails, 0);
    }
    assert_null(hl_lfs_pop(r, 0, &top, offsetof(struct item, next), NULL));
}

static void count(bool arg, bool ok) { (void)arg, (void)ok; }

static void queue_order(void **state)
{
    (void)state;
    static struct hl_lfqueue q;
    hl_lfq_init(&q);
    struct hl_hp_rec *r = hl_hp_mine();
    assert_null(hl_lfq_get(&q, r, 1, count, false));
    for (intptr_t i = 1; i <= 100; i++) hl_lfq_put(&q, (void *)i, r, 1, 0, count, false);
    for (intptr_t i = 1; i <= 100; i++) assert_ptr_equal(hl_lfq_get(&q, r, 1, count, false), (void *)i);
    assert_null(hl_lfq_get(&q, r, 1, count, false));
}

#define PER 20000
static struct hl_lfqueue mq;
static _Atomic int seen[4 * PER + 1];

static void *put_and_get(void *arg)
{
    intptr_t base = (intptr_t)arg * PER;
    struct hl_hp_rec *r = hl_hp_mine();
    for (intptr_t i = 1; i <= PER; i++) {
        hl_lfq_put(&mq, (void *)(base + i), r, 1, 0, count, false);
        intptr_t v = (intptr_t)hl_lfq_get(&mq, r, 1, count, false);
        if (v) atomic_fetch_add(&seen[v], 1);
    }
    hl_hp_release();
    return NULL;
}

static void queue_threads(void **state)
{
    (void)state;
    hl_lfq_init(&mq);
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, put_and_get, (void *)i), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    struct hl_hp_rec *r = hl_hp_mine();
    intptr_t v;
    while ((v = (intptr_t)hl_lfq_get(&mq, r, 1, count, false))) atomic_fetch_add(&seen[v], 1);
    for (int i = 1; i <= 4 * PER; i++) assert_int_equal(atomic_load(&seen[i]), 1);
}

static int made;
static int slots[8];
static void *make(void) { return &slots[made++]; }

static void selector_rule(void **state)
{
    (void)state;
    static struct hl_selector s;
    int saved_mode = hl_cfg.heap_select, saved_heaps = hl_cfg.heaps;
    hl_cfg.heap_select = HL_SELECT_HASH;
    hl_cfg.heaps = 3;
    hl_selector_init(&s, make);
    assert_int_equal(s.n, 3);
    for (unsigned i = 0; i < 3; i++) s.fixed[i] = &slots[i];
    for (unsigned id = 0; id < 10; id++) assert_ptr_equal(hl_select(&s, id), &slots[id % 3]);
    hl_cfg.heap_select = HL_SELECT_THREAD;
    hl_selector_init(&s, make);
    assert_int_equal(s.n, 0);
    void *a = hl_select(&s, 5), *b = hl_select(&s, 700);
    assert_ptr_not_equal(a, b);
    assert_ptr_equal(hl_select(&s, 5), a);              /* made once, kept for the id */
    assert_ptr_equal(hl_select(&s, 700), b);
    assert_int_equal(made, 2);
    hl_cfg.heap_select = saved_mode;
    hl_cfg.heaps = saved_heaps;
}

int main(void)
{
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stack_order),
        cmocka_unit_test(queue_order),
        cmocka_unit_test(queue_threads),
        cmocka_unit_test(selector_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
