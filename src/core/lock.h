/* lock.h — the allocator's one lock: a 4-byte word, spin (test-and-test-and-set with yield)
 * or a futex mutex, chosen by the `lock` key for every lock at once. Every acquisition is
 * counted, and so is every acquisition that found the lock held (contended), per thread.
 * Included by hl.h; not on its own. */
#ifndef HL_LOCK_H
#define HL_LOCK_H

typedef struct { _Atomic int word; } hl_lock;   /* 0 free, 1 held, 2 held with waiters */
#define HL_LOCK_INIT { 0 }

extern int hl_lock_kind;                /* enum hl_lock_kind, set once at init */
void hl_lock_slow(hl_lock *l);          /* lock.c: the contended path */
void hl_unlock_wake(hl_lock *l);        /* lock.c: futex wake */

static inline void hl_lock_init(hl_lock *l) { atomic_store_explicit(&l->word, 0, memory_order_relaxed); }

static inline bool hl_trylock(hl_lock *l)
{
    int expect = 0;
    return atomic_compare_exchange_strong_explicit(&l->word, &expect, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void hl_lock_acquire(hl_lock *l)
{
    HL_COUNT(lock_acquisitions, 1);
    if (hl_likely(hl_trylock(l))) return;
    HL_COUNT(lock_contended, 1);
    hl_lock_slow(l);
}

/* A spin lock has no sleepers to wake: a plain release store frees it, no locked instruction. */
static inline void hl_lock_release(hl_lock *l)
{
    if (hl_likely(hl_lock_kind == HL_LOCK_SPIN))
        atomic_store_explicit(&l->word, 0, memory_order_release);
    else if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
        hl_unlock_wake(l);
}

/* The end of a fast path that holds l: count the block (p handed out, or size bytes freed)
 * and release l. Inline when neither needs a call (a spin lock; no publication of U due,
 * stats.h), else one cold call does both (stats.c), so the fast path makes no call that would
 * need registers kept. */
void *hl_release_count_slow(hl_lock *l, void *p, bool publish_due, bool freed);
static inline void *hl_release_count(hl_lock *l, void *p, size_t size, bool freed)
{
    if (hl_unlikely(hl_stats_count(size, freed))) return hl_release_count_slow(l, p, true, freed);
    if (hl_likely(hl_lock_kind == HL_LOCK_SPIN)) {
        atomic_store_explicit(&l->word, 0, memory_order_release);
        return p;
    }
    return hl_release_count_slow(l, p, false, freed);
}

#endif
