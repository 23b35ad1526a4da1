/* test_thread.c — the thread registry (src/core/thread.c):
 *   dense_ids       a thread's id is the lowest no live thread holds: a thread that starts
 *                   after another exited takes over its id; hl_thread_count is the highest
 *                   id ever + 1
 *   foreach_live    hl_thread_foreach visits every live thread once, the calling one too,
 *                   and none that exited (the exited ones unlinked from anywhere in the list)
 *   racing_starts   sixteen threads registering at once get sixteen distinct ids
 *   exit_hook       the exit hook runs once per thread, with the thread still live (state 1)
 *                   when the observer sees it; a TLS destructor that runs after it finds the
 *                   thread in state 2, and may still allocate */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include "front.h"

enum { MAX = 16 };

struct worker {
    pthread_barrier_t *started, *leave;  /* all registered; may exit */
    struct hl_thread *self;
    unsigned id;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    hl_free(hl_malloc(40));              /* registers */
    w->self = hl_self();
    w->id = w->self->id;
    if (w->started) pthread_barrier_wait(w->started);
    if (w->leave) pthread_barrier_wait(w->leave);
    return NULL;
}

/* n workers started, registered and waiting on `leave` (NULL: exit at once). */
static void start(struct worker *w, pthread_t *t, int n, pthread_barrier_t *started,
                  pthread_barrier_t *leave)
{
    for (int i = 0; i < n; i++) {
        w[i] = (struct worker){ started, leave, NULL, 0 };
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    if (started) pthread_barrier_wait(started);
}

static void dense_ids(void **state)
{
    (void)state;
    assert_int_equal(hl_self()->id, 0);                  /* main registered first */
    pthread_barrier_t started, leave_a, leave_b;
    pthread_barrier_init(&started, NULL, 2);
    pthread_barrier_init(&leave_a, NULL, 2);
    pthread_barrier_init(&leave_b, NULL, 2);
    struct worker a, b, c;
    pthread_t ta, tb, tc;
    start(&a, &ta, 1, &started, &leave_a);
    start(&b, &tb, 1, &started, &leave_b);
    assert_int_equal(a.id, 1);
    assert_int_equal(b.id, 2);
    pthread_barrier_wait(&leave_a);                      /* a exits, b lives on */
    pthread_join(ta, NULL);
    start(&c, &tc, 1, NULL, NULL);
    pthread_join(tc, NULL);
    assert_int_equal(c.id, 1);                           /* a's id, reused */
    assert_true(hl_thread_count() >= 3);
    pthread_barrier_wait(&leave_b);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&started);
    pthread_barrier_destroy(&leave_a);
    pthread_barrier_destroy(&leave_b);
}

struct seen { struct hl_thread *t[4 * MAX]; int n; };
static void note(struct hl_thread *t, void *arg)
{
    struct seen *s = arg;
    if (s->n < 4 * MAX) s->t[s->n] = t;
    s->n++;
}
static int times_seen(const struct seen *s, const struct hl_thread *t)
{
    int k = 0;
    for (int i = 0; i < s->n && i < 4 * MAX; i++) k += s->t[i] == t;
    return k;
}

static void foreach_live(void **state)
{
    (void)state;
    enum { N = 6 };
    pthread_barrier_t started, leave;
    pthread_barrier_init(&started, NULL, N + 1);
    pthread_barrier_init(&leave, NULL, N + 1);
    struct worker w[N];
    pthread_t t[N];
    start(w, t, N, &started, &leave);
    struct seen live = { .n = 0 };
    hl_thread_foreach(note, &live);
    assert_int_equal(live.n, N + 1);
    assert_int_equal(times_seen(&live, hl_self()), 1);
    for (int i = 0; i < N; i++) assert_int_equal(times_seen(&live, w[i].self), 1);
    pthread_barrier_wait(&leave);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    struct seen after = { .n = 0 };
    hl_thread_foreach(note, &after);
    assert_int_equal(after.n, 1);                        /* main alone */
    assert_ptr_equal(after.t[0], hl_self());
    pthread_barrier_destroy(&started);
    pthread_barrier_destroy(&leave);
}

static void racing_starts(void **state)
{
    (void)state;
    pthread_barrier_t started, leave;
    pthread_barrier_init(&started, NULL, MAX + 1);
    pthread_barrier_init(&leave, NULL, MAX + 1);
    struct worker w[MAX];
    pthread_t t[MAX];
    start(w, t, MAX, &started, &leave);
    bool taken[MAX + 1] = { true };                      /* 0: main's */
    for (int i = 0; i < MAX; i++) {
        assert_true(w[i].id >= 1 && w[i].id <= MAX);     /* dense: 1 .. MAX */
        assert_false(taken[w[i].id]);
        taken[w[i].id] = true;
    }
    pthread_barrier_wait(&leave);
    for (int i = 0; i < MAX; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&started);
    pthread_barrier_destroy(&leave);
}

static _Atomic int observed, observed_live;
static struct hl_thread *_Atomic observed_t;
static void observer(struct hl_thread *t)
{
    atomic_fetch_add(&observed, 1);
    atomic_fetch_add(&observed_live, t->state == 1);
    atomic_store(&observed_t, t);
}

static pthread_key_t late_key;
static _Atomic int late_state;
static void late(void *arg)             /* made after the registry's key: runs after its hook */
{
    (void)arg;
    atomic_store(&late_state, hl_me.state);
    hl_free(hl_malloc(100));
}
static void *with_late(void *arg)
{
    struct hl_thread **self = arg;
    hl_free(hl_malloc(40));
    *self = hl_self();
    pthread_setspecific(late_key, (void *)1);
    return NULL;
}

static void exit_hook(void **state)
{
    (void)state;
    assert_int_equal(pthread_key_create(&late_key, late), 0);
    hl_thread_exit_observer = observer;
    struct hl_thread *self;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, with_late, &self), 0);
    pthread_join(t, NULL);
    hl_thread_exit_observer = NULL;
    assert_int_equal(observed, 1);
    assert_int_equal(observed_live, 1);
    assert_ptr_equal(observed_t, self);
    assert_int_equal(late_state, 2);
    pthread_key_delete(late_key);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);   /* (no thread of its own: the registry is the test's) */
    hl_init();
    hl_free(hl_malloc(1));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dense_ids),
        cmocka_unit_test(foreach_live),
        cmocka_unit_test(racing_starts),
        cmocka_unit_test(exit_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
