/* thread.c — the thread registry: every thread that allocates gets a dense id (the lowest no
 * live thread holds, so heaps indexed by id are reused, not leaked, under thread churn), its
 * per-thread state in initial-exec TLS, and an exit hook through a pthread key destructor.
 *
 * A thread may still allocate after its destructor ran (other TLS destructors run later):
 * it is then in state 2, keeps its id's counters out of the registry, and strategies serve it
 * from shared structures. */
#include <pthread.h>
#include "hl.h"

HL_TLS struct hl_thread hl_me;

#define MAX_IDS 65536
static hl_lock reg_lock = HL_LOCK_INIT;
static struct hl_thread *live;
static uint64_t id_used[MAX_IDS / 64];
static unsigned ids_high;                /* highest id ever + 1 */
static pthread_key_t exit_key;
static bool key_made;
void (*hl_thread_exit_observer)(struct hl_thread *t);

static unsigned take_lowest_id(void)
{
    for (unsigned w = 0; w < MAX_IDS / 64; w++) {
        if (id_used[w] == ~0ull) continue;
        unsigned bit = (unsigned)__builtin_ctzll(~id_used[w]);
        id_used[w] |= 1ull << bit;
        return w * 64 + bit;
    }
    hl_die("more than %d threads alive at once", MAX_IDS);
}

static void on_thread_exit(void *arg)
{
    struct hl_thread *t = arg;
    if (hl_thread_exit_observer) hl_thread_exit_observer(t);
    if (hl_active->thread_exit) hl_active->thread_exit(t);
    hl_lock_acquire(&reg_lock);
    hl_stats_fold(t);
    for (struct hl_thread **p = &live; *p; p = &(*p)->next)
        if (*p == t) { *p = t->next; break; }
    id_used[t->id / 64] &= ~(1ull << (t->id % 64));
    t->state = 2;
    hl_lock_release(&reg_lock);
}

void hl_thread_register(void)
{
    hl_lock_acquire(&reg_lock);
    if (!key_made && pthread_key_create(&exit_key, on_thread_exit))
        hl_die("pthread_key_create failed");
    key_made = true;
    hl_me.id = take_lowest_id();
    if (hl_me.id + 1 > ids_high) ids_high = hl_me.id + 1;
    hl_me.next = live;
    live = &hl_me;
    hl_stats_thread_start(&hl_me);
    hl_me.state = 1;
    hl_lock_release(&reg_lock);
    pthread_setspecific(exit_key, &hl_me);
}

void hl_thread_foreach(void (*fn)(struct hl_thread *t, void *arg), void *arg)
{
    hl_lock_acquire(&reg_lock);
    for (struct hl_thread *t = live; t; t = t->next) fn(t, arg);
    hl_lock_release(&reg_lock);
}

unsigned hl_thread_count(void) { return __atomic_load_n(&ids_high, __ATOMIC_RELAXED); }


/* In the child only the forking thread runs on; the others' TLS blocks stay mapped, so their
 * entries (and counts) stay, but their ids are never freed: a child's heaps stay consistent. */
void hl_thread_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) hl_lock_acquire(&reg_lock);
    else if (phase == HL_FORK_PARENT) hl_lock_release(&reg_lock);
    else hl_lock_init(&reg_lock);
}
