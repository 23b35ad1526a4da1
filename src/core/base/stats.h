/* stats.h — counting a block in and out, inline where a strategy hands a block out or takes
 * it back, with the block size it already knows (no usable_size call). Included by base.h.
 *
 * Every count is an add to the calling thread's own counters, which only that thread writes:
 * a plain add to its TLS, one instruction, no locked instruction and no shared cache line.
 * Readers (stats.c) load them with relaxed atomics; a 64-bit aligned word is read whole on
 * every target we build for, so a reader sees the old value or the new one. (Under
 * ThreadSanitizer the add is a relaxed atomic load and store, which it can see is race-free.)
 *
 * U, the bytes in use, changes on every call; a shared counter would put one contended cache
 * line on every fast path. Each thread instead spends a credit of stats_batch bytes in each
 * direction: malloc subtracts the block from malloc_credit, free from free_credit, and when
 * one runs below zero the thread publishes what it spent into the
 * shared U (stats.c, out of line) and takes a new credit. The peak is taken at publication,
 * so it is exact to within threads x stats_batch bytes either way, and exact with
 * stats_batch = 0 (every call publishes). So a pair costs one op count and one subtraction
 * with its borrow test each way: 6 instructions. Under a TLAB the bins' room keeps U for the
 * fast paths, which count only the call (tlab.h's Accounting): 2. */
#ifndef HL_STATS_H
#define HL_STATS_H

/* HL_OWN_ADD(x, n) adds n to x and yields the new value; HL_OWN_SET(x, v) stores v: for a
 * word only one thread writes and others read with relaxed atomic loads (also tlab.h's room). */
/* HL_WORD_LOAD(x): a word that other threads store whole (__atomic_store_n, relaxed), read
 * as a plain operand, so the compiler may fold it into an instruction (an aligned word is
 * read whole on every target we build for); a relaxed atomic load under ThreadSanitizer. */
#ifdef __SANITIZE_THREAD__
#define HL_OWN_ADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_RELAXED)
#define HL_OWN_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define HL_WORD_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#else
#define HL_OWN_ADD(x, n) ((x) += (n))
#define HL_OWN_SET(x, v) ((x) = (v))
#define HL_WORD_LOAD(x) (x)
#endif

/* HL_COUNT: one of the calling thread's counters; HL_COUNT_AT: a counter that one writer at
 * a time updates, e.g. under the lock of the structure it belongs to. */
#ifdef HL_STATS
#define HL_COUNT_AT(x, n) HL_OWN_ADD(x, (n))
#else
#define HL_COUNT_AT(x, n) ((void)0)
#endif
#define HL_COUNT(field, n) HL_COUNT_AT(hl_me.ctr.field, n)

/* *credit -= bytes, by its own thread; true when the credit ran below zero. Written so that
 * the compiler makes it one `sub` to memory and a branch on its sign. */
static inline __attribute__((always_inline)) bool hl_own_spend(int64_t *credit, size_t bytes)
{
    return HL_OWN_ADD(*credit, -(int64_t)bytes) < 0;
}

/* Out of line: publish what the calling thread spent of its malloc (freed = false) or free
 * credit into the shared U and renew the credit; returns p. */
void *hl_stats_publish(void *p, bool freed);

/* Count one block of `bytes` handed out (freed = false) or taken back by the calling thread;
 * true when its credit ran out and hl_stats_publish is due. The caller publishes (at once, or
 * after releasing a lock it holds: hl_release_count_if below). */
static inline __attribute__((always_inline)) bool hl_stats_count(size_t bytes, bool freed)
{
#ifdef HL_STATS
    if (freed) HL_COUNT(frees, 1);
    else HL_COUNT(mallocs, 1);
    return hl_unlikely(hl_own_spend(freed ? &hl_me.ctr.free_credit : &hl_me.ctr.malloc_credit,
                                    bytes));
#else
    (void)bytes, (void)freed;
    return false;
#endif
}

/* U changed by `bytes` (either sign) without a call to count: tlab.c publishes what a bin's
 * room moved by since U last saw it. */
static inline void hl_stats_shift(int64_t bytes)
{
#ifdef HL_STATS
    if (bytes > 0 && hl_own_spend(&hl_me.ctr.malloc_credit, (size_t)bytes))
        hl_stats_publish(NULL, false);
    else if (bytes < 0 && hl_own_spend(&hl_me.ctr.free_credit, (size_t)-bytes))
        hl_stats_publish(NULL, true);
#else
    (void)bytes;
#endif
}

/* Block p of `bytes` handed out; returns p, so that a malloc can end in
 * `return hl_stats_malloc(p, size)` and the rare publication is a tail call. */
static inline void *hl_stats_malloc(void *p, size_t bytes)
{
    if (hl_likely(!hl_stats_count(bytes, false))) return p;
    return hl_stats_publish(p, false);
}

/* A block of `bytes` taken back. */
static inline void hl_stats_free(size_t bytes)
{
    if (hl_unlikely(hl_stats_count(bytes, true))) hl_stats_publish(NULL, true);
}

/* ---- fast paths built twice: counted, and not (key `counting`) ------------------------------
 * A strategy's fast path takes `bool counted` as its last argument, a constant in each of its
 * two builds (HL_MALLOC_PAIR, HL_FREE_PAIR), and counts through the _if forms below, which the
 * compiler folds away in the uncounted build. init.c installs the uncounted pair with
 * counting = off, so the common call carries no statistics at all. Slow paths always count
 * (off the common call, it costs nothing that matters); with counting = off hoardlab_stats
 * reports what the fast paths would have counted (mallocs, frees, U, the per-thread event
 * counts) as not counted. */
static inline __attribute__((always_inline)) void *hl_stats_malloc_if(bool counted, void *p,
                                                                      size_t bytes)
{
    return counted ? hl_stats_malloc(p, bytes) : p;
}

static inline __attribute__((always_inline)) void hl_stats_free_if(bool counted, size_t bytes)
{
    if (counted) hl_stats_free(bytes);
}

#define HL_COUNT_IF(counted, field, n) ((counted) ? (void)HL_COUNT(field, n) : (void)0)

/* NAME(size) and NAME_uncounted(size), calling PATH(size, ARGS..., counted), and each again
 * as NAME_entry and NAME_uncounted_entry, the same with the entry's test first (base.h's
 * struct hl_paths); likewise for free. STORAGE is `static` or empty. The entries are the
 * only callers of hl_entry_takes_malloc / _free (cost.py counts them as the front's). Each use
 * names the functions it defines in a comment beside it, so a grep finds them
 * (tests/tools/test_entries.py checks that every name the library defines is written out). */
#define HL_MALLOC_BUILD(storage, fn, path, counted, ...)                                      \
    storage void *fn(size_t size) { return path(size, ##__VA_ARGS__, counted); }             \
    storage void *fn##_entry(size_t size)                                                     \
    {                                                                                         \
        if (hl_likely(hl_entry_takes_malloc(size))) return path(size, ##__VA_ARGS__, counted);\
        return HL_WORD_LOAD(hl_entry_exit_malloc)(size);                                      \
    }
#define HL_FREE_BUILD(storage, fn, path, counted, ...)                                        \
    storage void fn(void *p) { path(p, ##__VA_ARGS__, counted); }                             \
    storage void fn##_entry(void *p)                                                          \
    {                                                                                         \
        if (hl_likely(hl_entry_takes_free(p))) path(p, ##__VA_ARGS__, counted);               \
        else HL_WORD_LOAD(hl_entry_exit_free)(p);                                             \
    }
#define HL_MALLOC_PAIR(storage, name, path, ...)                                              \
    HL_MALLOC_BUILD(storage, name, path, true, ##__VA_ARGS__)                                 \
    HL_MALLOC_BUILD(storage, name##_uncounted, path, false, ##__VA_ARGS__)
#define HL_FREE_PAIR(storage, name, path, ...)                                                \
    HL_FREE_BUILD(storage, name, path, true, ##__VA_ARGS__)                                   \
    HL_FREE_BUILD(storage, name##_uncounted, path, false, ##__VA_ARGS__)

/* The eight functions HL_MALLOC_PAIR(, m, ...) and HL_FREE_PAIR(, f, ...) define, declared
 * for a row in another file. */
#define HL_DECLARE_PAIR(m, f)                                                                 \
    void *m(size_t size); void *m##_uncounted(size_t size);                                   \
    void *m##_entry(size_t size); void *m##_uncounted_entry(size_t size);                     \
    void f(void *p); void f##_uncounted(void *p);                                             \
    void f##_entry(void *p); void f##_uncounted_entry(void *p);

/* ---- locks, counted ---------------------------------------------------------------------- */

/* Acquire l (lock.h), counting the acquisition, and the contention if it was held. */
static inline void hl_lock_acquire(hl_lock *l)
{
    HL_COUNT(lock_acquisitions, 1);
    if (hl_likely(hl_trylock(l))) return;
    HL_COUNT(lock_contended, 1);
    hl_lock_slow(l);
}

/* The end of a fast path that holds l: count the block (p handed out, or size bytes freed)
 * and release l. Inline when neither needs a call (a spin lock; no publication of U due,
 * stats.h), else one cold call does both (stats.c), so the fast path makes no call that would
 * need registers kept. */
void *hl_release_count_slow(hl_lock *l, void *p, bool publish_due, bool freed);
static inline __attribute__((always_inline)) void *hl_release_count_if(bool counted, hl_lock *l,
                                                                       void *p, size_t size,
                                                                       bool freed)
{
    if (counted && hl_unlikely(hl_stats_count(size, freed)))
        return hl_release_count_slow(l, p, true, freed);
    if (hl_likely(hl_lock_kind == HL_LOCK_SPIN)) {
        atomic_store_explicit(&l->word, 0, memory_order_release);
        return p;
    }
    return hl_release_count_slow(l, p, false, freed);
}

static inline void *hl_release_count(hl_lock *l, void *p, size_t size, bool freed)
{
    return hl_release_count_if(true, l, p, size, freed);
}

/* purge_holes: bytes of hole units given back inside superblocks that still hold blocks
 * (superblock.c moves it as holes open and close; hole_purged_bytes, part of purged_bytes). */
extern _Atomic size_t hl_stats_holes;

/* ---- stats.c -------------------------------------------------------------------------------- */

void hl_stats_init(void);               /* before any thread registers: the thread hooks */
void hl_stats_at_exit(void);            /* HOARD_STATS output */
void hl_stats_sum(struct hoardlab_stats *out);   /* api.c's hoardlab_stats, after init */
void hl_stats_reset_peaks(void);
/* U as published so far (within threads x stats_batch bytes; 0 with counting = off): the
 * heap log's live bytes. */
int64_t hl_stats_in_use_published(void);
/* U's change that no credit holds yet, in bytes: the active front's `unseen` (fronts.c sets
 * it when the front's fast paths leave U to its bins; NULL otherwise). mine: the calling
 * thread's, which it marks seen (stats.c publishes it with the thread's credit); else every
 * live thread's, read only. */
extern int64_t (*hl_stats_unseen_fn)(bool mine);
extern long (*hl_stats_huge_fn)(void);  /* huge_regions, set by arena.c; NULL: 0 */
/* Bytes in large.c's cache of freed mappings, stored by large.c under its lock whenever they
 * change, read by the statistics without it (stats does not call into large.c: large.c sits
 * above it, on the page map and the purge). */
extern _Atomic size_t hl_stats_large_cached;

#endif
