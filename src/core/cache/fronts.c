/* fronts.c — a heap row's start (fronts.h): its policy installed in the heap paths, built
 * once in heaps/, and the one table of front caches, a struct hl_front each (cache.h), whose
 * members this file calls and nothing else names. A new front is a line in the table
 * (FRONTS), its own file(s) beside tlab.c and cpucache.c with its struct hl_front, and a
 * value of `cache` (config.h).
 * Invariant: every member is called for every front in the table (each does nothing where it
 * has no state), so a row's thread exit, fork and statistics need not know the key. */
#include "fronts.h"
#include "heap.h"
#include "refill.h"

/* The table: a line per front, its struct hl_front (declared and listed from here). */
#define FRONTS(X)                                                                             \
    X(hl_tlab_front)                     /* cache = thread: per thread (tlab.c) */            \
    X(hl_cpu_cache_front)                /* cache = cpu: per CPU on rseq (cpucache.c) */
#define DECLARE(f) extern const struct hl_front f;
#define LIST(f) &f,
FRONTS(DECLARE)
static const struct hl_front *const fronts[] = { FRONTS(LIST) };
#define EACH(f) for (const struct hl_front *const *f = fronts; f < fronts + \
                     sizeof fronts / sizeof fronts[0]; f++)

/* The row's hooks and floor installed, its heaps made, its own paths (plain, or sharded
 * with free_lists = sharded) installed: the counted ones, which the front falls back to. */
static const struct hl_paths *start_row(const struct hl_heap_policy *policy)
{
    hl_heap_refill = policy->refill;
    hl_heap_after_free = policy->after_free;
    hl_heap_floor = policy->floor;
    hl_heaps_init(policy->global_heap, false);
    if (!hl_sb_sharded) return &hl_active->counted;
    hl_paths = hl_sharded_start();
    return &hl_sharded_paths[1];
}

static size_t fronts_bytes(void)
{
    size_t bytes = 0;
    EACH(f) bytes += (*f)->bytes();
    return bytes;
}

/* retain_counts = free, on the purge thread: every free byte held outside the parked lists --
 * the thread heaps' a - u, the shards' less what is parked there (kept or purged), the fronts'
 * caches -- less the holes given back, for `retain` to bound with the parked (purge.c). The
 * heaps are read as hoardlab_stats reads them, each under its lock in turn. */
static void count_free(void)
{
    struct hoardlab_stats s = { 0 };
    hl_heaps_stats(&s);
    size_t parked = hl_purge_retained() + hl_purge_purged();
    size_t held = s.heaps_free_bytes + fronts_bytes() +
                  (s.global_free_bytes > parked ? s.global_free_bytes - parked : 0);
    size_t holes = atomic_load_explicit(&hl_stats_holes, memory_order_relaxed);
    hl_purge_count_free(held > holes ? held - holes : 0);
}

void hl_fronts_start(const struct hl_heap_policy *policy)
{
    const struct hl_paths *own = start_row(policy);
    const struct hl_cache_row row = { own->malloc, own->free };
    EACH(f)
        if ((*f)->cache == hl_cfg.cache) {
            hl_paths = (*f)->start(&row);
            if ((*f)->unseen && hl_cache_u_left()) hl_stats_unseen_fn = (*f)->unseen;
        }
    if (hl_cfg.retain_counts == HL_RETAIN_FREE) {
        if (!hl_cfg.purge_thread)
            hl_die("retain_counts = free: the free bytes are counted by the purge thread; "
                   "valid with purge_thread = on (retain_counts = parked without it)");
        hl_ticker_every(count_free, HL_PURGE_COUNT_MS);
    }
}

/* The fronts' blocks first: what they give back goes to the heaps. */
void hl_fronts_thread_exit(struct hl_thread *t)
{
    EACH(f) if ((*f)->thread_exit) (*f)->thread_exit();
    hl_heaps_thread_exit(t);
}

/* Fork: the fronts' outer locks (the TLAB's guard, which the purge thread may hold while it
 * takes heaps' locks), the heaps' locks, then the fronts' inner ones (the TLAB registry's, a
 * leaf lock); released in the reverse order. */
void hl_fronts_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        EACH(f) if ((*f)->fork_outer) (*f)->fork_outer(phase);
        hl_heaps_fork(phase);
        EACH(f) if ((*f)->fork) (*f)->fork(phase);
    } else {
        EACH(f) if ((*f)->fork) (*f)->fork(phase);
        hl_heaps_fork(phase);
        EACH(f) if ((*f)->fork_outer) (*f)->fork_outer(phase);
    }
}

void hl_fronts_flush(void)
{
    EACH(f) if ((*f)->flush) (*f)->flush();
}

void hl_fronts_stats(struct hoardlab_stats *s)
{
    hl_heaps_stats(s);
    s->tlab_bytes += fronts_bytes();
    EACH(f) if ((*f)->stats) (*f)->stats(s);
}
