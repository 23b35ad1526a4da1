/* test_hazard.c — hazard pointers (src/core/ds/hazard.c): a retired object is freed only once no
 * slot holds it; records are reused after a thread gives its record back, retired objects and
 * all; a lock-free stack popped under hazard pointers by several threads never hands one
 * object out twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include "front.h"
#include "hazard.h"

struct obj { struct hl_hp_node hp; _Atomic(struct obj *) next; _Atomic int freed, taken; };

static void obj_free(struct hl_hp_node *n) { atomic_fetch_add(&((struct obj *)n)->freed, 1); }

static void retire_waits_for_hazard(void **state)
{
    (void)state;
    static struct obj a, b;
    struct hl_hp_rec *r = hl_hp_mine();
    _Atomic(void *) src = &a;
    assert_ptr_equal(hl_hp_protect(r, 0, &src), &a);
    hl_hp_retire(r, &a.hp, &a, obj_free);
    hl_hp_retire(r, &b.hp, &b, obj_free);
    hl_hp_scan(r);
    assert_int_equal(atomic_load(&a.freed), 0);   /* protected */
    assert_int_equal(atomic_load(&b.freed), 1);
    assert_true(hl_hp_pending() >= 1);
    hl_hp_clear(r, 0);
    hl_hp_scan(r);
    assert_int_equal(atomic_load(&a.freed), 1);
    assert_int_equal(atomic_load(&b.freed), 1);
}

/* A thread that exits gives its record back; the next takes the same record. */
static struct hl_hp_rec *seen[2];
static void *take_and_release(void *arg)
{
    seen[(intptr_t)arg] = hl_hp_mine();
    hl_hp_release();
    return NULL;
}

static void records_are_reused(void **state)
{
    (void)state;
    for (intptr_t i = 0; i < 2; i++) {
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, take_and_release, (void *)i), 0);
        pthread_join(t, NULL);
    }
    assert_ptr_equal(seen[0], seen[1]);
    assert_ptr_not_equal(seen[0], hl_hp_mine());
}

/* A Treiber stack of 64 objects; 4 threads pop (hazard-protected) and push back through
 * retire. An ABA would hand one object to two threads at once: `taken` would reach 2. */
#define NOBJ 64
static struct obj pool[NOBJ];
static _Atomic(struct obj *) top;
static _Atomic int twice;

static void push_back(struct hl_hp_node *n)
{
    struct obj *o = (struct obj *)n;
    atomic_fetch_sub(&o->taken, 1);
    struct obj *t = atomic_load(&top);
    do atomic_store(&o->next, t);
    while (!atomic_compare_exchange_weak(&top, &t, o));
}

static void *popper(void *arg)
{
    (void)arg;
    struct hl_hp_rec *r = hl_hp_mine();
    for (int i = 0; i < 100000; i++) {
        struct obj *o;
        for (;;) {
            o = hl_hp_protect(r, 1, (_Atomic(void *) *)&top);
            if (!o) break;
            struct obj *next = atomic_load(&o->next);
            if (atomic_compare_exchange_strong(&top, &o, next)) break;
        }
        hl_hp_clear(r, 1);
        if (!o) continue;
        if (atomic_fetch_add(&o->taken, 1) != 0) atomic_store(&twice, 1);
        hl_hp_retire(r, &o->hp, o, push_back);
    }
    hl_hp_release();
    return NULL;
}

static void stack_without_aba(void **state)
{
    (void)state;
    for (int i = 0; i < NOBJ; i++) push_back(&pool[i].hp), atomic_fetch_add(&pool[i].taken, 1);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, popper, NULL), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&twice), 0);
}

int main(void)
{
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retire_waits_for_hazard),
        cmocka_unit_test(records_are_reused),
        cmocka_unit_test(stack_without_aba),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
