/* fronts.c — a heap row's start (fronts.h): its policy installed in the heap paths, built
 * once in heaps/, and the one table of front caches: the value of `cache` each serves and
 * its start, which builds nothing (each front built its fast paths once, in its own file)
 * but chooses the build that counting and stats_batch ask for and keeps the row. A new front
 * is a line here, its own file beside tlab.c and cpucache.c, and a value of `cache`. */
#include "fronts.h"
#include "cpucache.h"
#include "purge.h"
#include "tlab.h"

static const struct front {
    int cache;                                            /* hl_cfg.cache */
    const struct hl_paths *(*start)(const struct hl_cache_row *row);
} fronts[] = {
    { HL_CACHE_THREAD, hl_tlab_start },                   /* per thread (tlab.h) */
    { HL_CACHE_CPU, hl_cpu_cache_start },                 /* per CPU on rseq (cpucache.h) */
};

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

/* retain_counts = free, on the purge thread: every free byte held outside the parked lists --
 * the thread heaps' a - u, the shards' less what is parked there (kept or purged), the TLABs
 * and per-CPU caches -- less the holes given back, for `retain` to bound with the parked
 * (purge.c). The heaps are read as hoardlab_stats reads them, each under its lock in turn. */
static void count_free(void)
{
    struct hoardlab_stats s = { 0 };
    hl_heaps_stats(&s);
    size_t parked = hl_purge_retained() + hl_purge_purged();
    size_t held = s.heaps_free_bytes + hl_tlab_bytes() + hl_cpu_cache_bytes() +
                  (s.global_free_bytes > parked ? s.global_free_bytes - parked : 0);
    size_t holes = atomic_load_explicit(&hl_stats_holes, memory_order_relaxed);
    hl_purge_count_free(held > holes ? held - holes : 0);
}

void hl_fronts_start(const struct hl_heap_policy *policy)
{
    const struct hl_paths *own = start_row(policy);
    const struct hl_cache_row row = { own->malloc, own->free };
    for (size_t i = 0; i < sizeof fronts / sizeof fronts[0]; i++)
        if (fronts[i].cache == hl_cfg.cache) hl_paths = fronts[i].start(&row);
    if (hl_cfg.retain_counts == HL_RETAIN_FREE) {
        if (!hl_cfg.purge_thread)
            hl_die("retain_counts = free: the free bytes are counted by the purge thread; "
                   "valid with purge_thread = on (retain_counts = parked without it)");
        hl_ticker_every(count_free, HL_PURGE_COUNT_MS);
    }
}

/* Each does nothing for a thread without bins (tlab.c), so it serves every front. */
void hl_fronts_thread_exit(struct hl_thread *t)
{
    hl_tlab_thread_exit();
    hl_heaps_thread_exit(t);
}

/* Fork: the forking thread's TLAB guard, the heaps' locks, then the TLAB registry's (a leaf
 * lock). */
void hl_fronts_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        hl_tlab_fork_guard(phase);
        hl_heaps_fork(phase);
        hl_tlab_fork(phase);
    } else {
        hl_tlab_fork(phase);
        hl_heaps_fork(phase);
        hl_tlab_fork_guard(phase);
    }
}

void hl_fronts_stats(struct hoardlab_stats *s)
{
    hl_heaps_stats(s);
    s->tlab_bytes += hl_tlab_bytes() + hl_cpu_cache_bytes();
    s->rseq_restarts = __atomic_load_n(&hl_rseq_restarts, __ATOMIC_RELAXED);
}
