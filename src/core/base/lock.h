/* lock.h — the allocator's one lock: a 4-byte word, spin (test-and-test-and-set with yield)
 * or a futex mutex, chosen by the `lock` key for every lock at once. It counts nothing: the
 * statistics count acquisitions and contention where they take a lock (stats.h's
 * hl_lock_acquire), so this base file uses none of the layers above it. Included by base.h;
 * not on its own. */
#ifndef HL_LOCK_H
#define HL_LOCK_H

typedef struct { _Atomic int word; } hl_lock;   /* 0 free, 1 held, 2 held with waiters */
#define HL_LOCK_INIT { 0 }

extern int hl_lock_kind;                /* HL_LOCK_SPIN or _MUTEX, set once at init */
void hl_lock_slow(hl_lock *l);          /* lock.c: the contended path */
void hl_unlock_wake(hl_lock *l);        /* lock.c: futex wake */

static inline void hl_lock_init(hl_lock *l) { atomic_store_explicit(&l->word, 0, memory_order_relaxed); }

static inline bool hl_trylock(hl_lock *l)
{
    int expect = 0;
    return atomic_compare_exchange_strong_explicit(&l->word, &expect, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* Acquire l, uncounted: the thread registry's lock (thread.c), below the statistics. */
static inline void hl_lock_take(hl_lock *l)
{
    if (hl_unlikely(!hl_trylock(l))) hl_lock_slow(l);
}

/* A spin lock has no sleepers to wake: a plain release store frees it, no locked instruction. */
static inline void hl_lock_release(hl_lock *l)
{
    if (hl_likely(hl_lock_kind == HL_LOCK_SPIN))
        atomic_store_explicit(&l->word, 0, memory_order_release);
    else if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
        hl_unlock_wake(l);
}

#endif
