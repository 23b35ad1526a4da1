/* thread.c — the thread registry: every thread that allocates gets a dense id (the lowest no
 * live thread holds, so heaps indexed by id are reused, not leaked, under thread churn), its
 * per-thread state in initial-exec TLS, and an exit hook through a pthread key destructor.
 *
 * Registration (a thread's first call) takes no lock, so that a lock-free strategy stays
 * lock-free on that call too: the id is a CAS on a word of the id bitmap, the highest id a CAS
 * loop, and the thread joins the live list by a CAS push at its head. The exit hook keeps the
 * registry lock: it unlinks the thread from anywhere in the list and folds its counts into the
 * retired ones, which hl_thread_foreach (statistics) must see as one step; a thread that
 * registers meanwhile only pushes at the head, which the unlink copes with (it unlinks the
 * head by CAS, any other entry through its predecessor, whose link only the lock holder
 * writes). The pthread key is made once, by the first registration ever; a thread that
 * registers while that one is making it waits for it (once per process).
 *
 * A thread may still allocate after its destructor ran (other TLS destructors run later):
 * it is then in state 2, keeps its id's counters out of the registry, and strategies serve it
 * from shared structures. */
#include <pthread.h>
#include <sched.h>
#include "base.h"

HL_TLS struct hl_thread hl_me;

#define MAX_IDS 65536
static hl_lock reg_lock = HL_LOCK_INIT;  /* exit and foreach: the list's interior, the fold */
static _Atomic(struct hl_thread *) live;
static _Atomic uint64_t id_used[MAX_IDS / 64];
static _Atomic unsigned ids_high;        /* highest id ever + 1 */
static pthread_key_t exit_key;
static _Atomic int key_state;            /* 0 none, 1 being made, 2 made */
void (*hl_thread_exit_observer)(struct hl_thread *t);
void (*hl_thread_start_hook)(struct hl_thread *t);
void (*hl_thread_fold_hook)(struct hl_thread *t);

static unsigned take_lowest_id(void)
{
    for (unsigned w = 0; w < MAX_IDS / 64; w++) {
        uint64_t used = atomic_load_explicit(&id_used[w], memory_order_relaxed);
        while (used != ~0ull) {
            unsigned bit = (unsigned)__builtin_ctzll(~used);
            if (atomic_compare_exchange_weak_explicit(&id_used[w], &used, used | 1ull << bit,
                                                      memory_order_acq_rel,
                                                      memory_order_relaxed))
                return w * 64 + bit;
        }
    }
    hl_die("more than %d threads alive at once", MAX_IDS);
}

static void make_key_once(void (*destructor)(void *))
{
    int st = atomic_load_explicit(&key_state, memory_order_acquire);
    if (hl_likely(st == 2)) return;
    if (st == 0 && atomic_compare_exchange_strong(&key_state, &st, 1)) {
        if (pthread_key_create(&exit_key, destructor)) hl_die("pthread_key_create failed");
        atomic_store_explicit(&key_state, 2, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&key_state, memory_order_acquire) != 2) sched_yield();
}

static void on_thread_exit(void *arg)
{
    struct hl_thread *t = arg;
    if (hl_thread_exit_observer) hl_thread_exit_observer(t);
    if (hl_active->thread_exit) hl_active->thread_exit(t);
    hl_lock_take(&reg_lock);
    hl_thread_fold_hook(t);
    struct hl_thread *head = t;
    if (!atomic_compare_exchange_strong(&live, &head, t->next)) {
        /* Not the head (or no longer): its predecessor's link is only written here. */
        for (struct hl_thread *p = atomic_load(&live); p; p = p->next)
            if (p->next == t) { p->next = t->next; break; }
    }
    atomic_fetch_and_explicit(&id_used[t->id / 64], ~(1ull << (t->id % 64)),
                              memory_order_release);
    t->state = 2;
    hl_lock_release(&reg_lock);
}

void hl_thread_register(void)
{
    make_key_once(on_thread_exit);
    hl_me.id = take_lowest_id();
    unsigned high = atomic_load_explicit(&ids_high, memory_order_relaxed);
    while (hl_me.id + 1 > high &&
           !atomic_compare_exchange_weak_explicit(&ids_high, &high, hl_me.id + 1,
                                                  memory_order_relaxed, memory_order_relaxed)) {}
    hl_thread_start_hook(&hl_me);
    hl_me.state = 1;
    struct hl_thread *head = atomic_load_explicit(&live, memory_order_relaxed);
    do hl_me.next = head;
    while (!atomic_compare_exchange_weak_explicit(&live, &head, &hl_me, memory_order_release,
                                                  memory_order_relaxed));
    pthread_setspecific(exit_key, &hl_me);
}

void hl_thread_foreach(void (*fn)(struct hl_thread *t, void *arg), void *arg)
{
    hl_lock_take(&reg_lock);
    for (struct hl_thread *t = atomic_load_explicit(&live, memory_order_acquire); t; t = t->next)
        fn(t, arg);
    hl_lock_release(&reg_lock);
}

unsigned hl_thread_count(void) { return atomic_load_explicit(&ids_high, memory_order_relaxed); }


/* In the child only the forking thread runs on; the others' TLS blocks stay mapped, so their
 * entries (and counts) stay, but their ids are never freed: a child's heaps stay consistent.
 * A thread that was registering at the fork is, in the child, either in the list or not yet
 * (its id bit then stays set: one id lost in the child). */
void hl_thread_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) hl_lock_take(&reg_lock);
    else if (phase == HL_FORK_PARENT) hl_lock_release(&reg_lock);
    else hl_lock_init(&reg_lock);
}
