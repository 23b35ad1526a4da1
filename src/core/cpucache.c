/* cpucache.c — the slow halves of the per-CPU caches (cpucache.h has the fast ones and the
 * design, rseq.h the critical sections): the slabs and their limits, the check that the
 * kernel restarts the sections, refilling a CPU's stack from the heap and flushing it back,
 * the gauge and U's unseen part.
 *
 * Every change to a stack goes through rseq.h's pop and push, the slow halves' batches too
 * (a block at a time: a batch is one lock acquisition on the heap; pushing or popping its
 * blocks costs a dozen instructions each), so no lock guards a stack. */
#include <sys/rseq.h>
#include <sys/sysinfo.h>
#include "cpucache.h"
#include "purge.h"
#include "sharded.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* A stack's entry in a slab (rseq.h): the head word, and `seen` (cpucache.h's Accounting). */
struct cpu_entry {
    _Atomic uint64_t head;
    _Atomic int32_t seen;
    uint32_t unused;
};
_Static_assert(sizeof(struct cpu_entry) == HL_TLAB_BIN_BYTES, "the entries sit at tlab_slot");

ptrdiff_t hl_rseq_offset;
char *hl_cpu_slabs;
char *const *hl_cpu_entry16;
static long ncpus;                      /* slabs after the two bypass slabs */
static uint32_t limit[HL_MAX_CLASSES];
static bool u_by_room;                  /* the fast paths leave U to the stacks' room */
/* Under valgrind, which does not run rseq (the kernel never restarts a section), each
 * thread gets a CPU number of its own, its thread id, so that no two threads share a stack
 * and the sections' instructions can be counted (tools/hoardlab cost); ids past the slabs
 * bypass the cache. Never in a real run. The sections then read this area, not glibc's
 * (whose cpu_id >= 0 would make pthread_create register rseq, and fail, in new threads). */
static bool emulated;
static HL_TLS struct rseq emulated_area = { .cpu_id = RSEQ_CPU_ID_REGISTRATION_FAILED };

static struct cpu_entry *entry(long cpu, unsigned c)
{
    return (struct cpu_entry *)(hl_cpu_slabs + ((size_t)cpu << HL_RSEQ_SHIFT) + hl_tlab_slot(c));
}
static long cpu_of(size_t slab_off) { return (long)(slab_off >> HL_RSEQ_SHIFT); }
static struct rseq *rseq_area(void)
{
    return (struct rseq *)((char *)__builtin_thread_pointer() + hl_rseq_offset);
}

/* rseq.h's sections need the kernel to restart them: glibc must have registered the
 * thread's rseq area (it sets __rseq_size to 0 when it could not: a kernel before 4.18, a
 * seccomp filter, GLIBC_TUNABLES=glibc.pthread.rseq=0). Without it two threads could
 * interleave on one stack, so start-up stops, as for any configuration that cannot run. */
static void check_rseq(void)
{
    if (!HL_RSEQ_SUPPORTED)
        hl_die("cache = cpu: the per-CPU cache's restartable sequences are written for x86-64 "
               "only; use cache = thread");
    emulated = __rseq_size == 0 && RUNNING_ON_VALGRIND;
    if (__rseq_size == 0 && !emulated)
        hl_die("cache = cpu: no rseq area registered for this thread (__rseq_size is 0: a "
               "kernel without rseq, a seccomp filter, or GLIBC_TUNABLES=glibc.pthread.rseq=0); "
               "use cache = thread");
    hl_rseq_offset = emulated ? (char *)&emulated_area - (char *)__builtin_thread_pointer()
                              : __rseq_offset;
}

/* After the heaps, with cache = cpu: the slabs (two bypass slabs of zeros, then one per
 * configured CPU), every stack empty with its limit as room; true when U is left to the room. */
static bool init(void)
{
    check_rseq();
    ncpus = get_nprocs_conf();
    if (ncpus < 1) ncpus = 1;
    char *all = hl_meta_alloc((size_t)(ncpus + 2) << HL_RSEQ_SHIFT);
    hl_cpu_slabs = all + 2 * HL_RSEQ_SLAB;
    for (unsigned c = 0; c < hl_classes->count; c++) {
        size_t n = hl_cfg.cpu_cache_bytes / hl_class_size(c);
        limit[c] = n > 0xffff ? 0xffff : (uint32_t)n;
        for (long cpu = 0; cpu < ncpus; cpu++) {
            atomic_store(&entry(cpu, c)->head, (uint64_t)limit[c] << 48);
            atomic_store(&entry(cpu, c)->seen, (int32_t)limit[c]);
        }
    }                                    /* the bypass entry (class count) stays 0 */
    char **entry16 = hl_meta_alloc(hl_classes->granules * sizeof *entry16);
    for (size_t g = 0; g < hl_classes->granules; g++)
        entry16[g] = (char *)entry(0, hl_classes->of16[g]);
    hl_cpu_entry16 = entry16;
#ifdef HL_STATS
    u_by_room = hl_cfg.counting && hl_cfg.stats_batch > 0;
#endif
    return u_by_room;
}

/* valgrind only (emulated): give the calling thread its CPU number if it has none yet. */
static void emulate_cpu(void)
{
    struct rseq *r = rseq_area();
    if (emulated && (int32_t)r->cpu_id < 0 && hl_me.state == 1 && hl_me.id < ncpus)
        r->cpu_id = r->cpu_id_start = hl_me.id;
}

/* ---- U: what the fast paths moved (cpucache.h's Accounting) ------------------------------ */

static int64_t take_unseen(long cpu, unsigned c)
{
    struct cpu_entry *e = entry(cpu, c);
    int32_t room = (int32_t)HL_RSEQ_ROOM(atomic_load_explicit(&e->head, memory_order_relaxed));
    int32_t was = atomic_exchange_explicit(&e->seen, room, memory_order_relaxed);
    return (int64_t)(room - was) * (int64_t)hl_class_size(c);
}
static void see(long cpu, unsigned c)
{
    if (u_by_room && cpu >= 0 && cpu < ncpus) hl_stats_shift(take_unseen(cpu, c));
}
/* A slow path changed the room of the stack at `at` by n: not the program's doing. */
static void moved(size_t at, unsigned c, int32_t n)
{
    atomic_fetch_add_explicit(&entry(cpu_of(at), c)->seen, n, memory_order_relaxed);
}

/* hl_stats_unseen_fn. mine: the stacks of the CPU the thread runs on, marked seen (a CPU's
 * stack that no slow path visits again would otherwise keep its last moves out of the peak). */
static int64_t unseen(bool mine)
{
    int64_t bytes = 0;
    long now = (int32_t)rseq_area()->cpu_id;
    for (long cpu = 0; cpu < ncpus; cpu++) {
        if (mine && cpu != now) continue;
        for (unsigned c = 0; c < hl_classes->count; c++) {
            struct cpu_entry *e = entry(cpu, c);
            if (mine) {
                bytes += take_unseen(cpu, c);
                continue;
            }
            int32_t room = (int32_t)HL_RSEQ_ROOM(atomic_load_explicit(&e->head,
                                                                      memory_order_relaxed));
            bytes += (int64_t)(room - atomic_load_explicit(&e->seen, memory_order_relaxed))
                     * (int64_t)hl_class_size(c);
        }
    }
    return bytes;
}

/* ---- batches to and from the heaps ------------------------------------------------------ */

/* Blocks moved per refill or flush (tlab_refill, tlab_flush): at least 1, at most 64. */
static uint32_t clamp(uint32_t n) { return n < 1 ? 1 : n > 64 ? 64 : n; }

/* A chain of free blocks back to their superblocks' owners, h's under one acquisition of its
 * lock, each other one under its owner's (as tlab.c gives a TLAB's back). */
static void give_back(struct hl_heap *h, void *chain, hl_after_free_fn after)
{
    void *away = NULL;
    hl_heap_lock(h);
    if (hl_remote_pending(h)) hl_remote_collect(h);
    while (chain) {
        void *p = chain;
        chain = *(void **)p;
        struct hl_sb *sb = hl_sb_of(p);
        if (atomic_load_explicit(&sb->owner, memory_order_relaxed) != h) {
            *(void **)p = away;
            away = p;
            continue;
        }
        if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
        hl_heap_free(h, sb, p);
        if (hl_heap_policy_due(h, sb)) after(h, sb);
    }
    hl_heap_unlock(h);
    while (away) {
        void *p = away;
        away = *(void **)p;
        struct hl_sb *sb = hl_sb_of(p);
        struct hl_heap *o = hl_heap_lock_owner(sb);
        if (HL_INVARIANT_CHECKS) hl_sb_check_free(sb, p);
        hl_heap_free(o, sb, p);
        if (hl_heap_policy_due(o, sb)) after(o, sb);
        hl_heap_unlock(o);
    }
    hl_purge_poll();                     /* no lock held: the purge thread may start */
}

/* The thread's heap, cpu selection re-read. */
static struct hl_heap *heap_now(void)
{
    hl_heap_recheck_cpu();
    return hl_heap_mine();
}

/* Up to want blocks of class c from h (locked) as a chain; how many. */
static inline __attribute__((always_inline)) uint32_t fill(struct hl_heap *h, unsigned c,
                                                           hl_refill_fn refill, void **chain,
                                                           uint32_t want, bool sharded)
{
    uint32_t n = 0;
    for (; n < want; n++) {
        void *p = sharded ? hl_sharded_alloc(h, c, refill) : hl_heap_alloc_sb(h, c);
        if (!p && (sharded || !(p = refill(h, c)))) break;
        *(void **)p = *chain;
        *chain = p;
    }
    return n;
}

void *hl_cpu_malloc_slow(size_t size, hl_refill_fn refill, void *(*plain)(size_t))
{
    unsigned c = hl_class_of(size);
    emulate_cpu();
    if (!limit[c] || hl_me.state != 1) return plain(size);
    long cpu = (int32_t)rseq_area()->cpu_id;
    see(cpu, c);
    uintptr_t slot = hl_tlab_slot(c);
    size_t at;
    void *p = hl_rseq_pop(hl_cpu_slabs, slot, &at);
    if (p) {                             /* emulate_cpu gave the thread its stack just now */
        HL_CPU_ACQUIRE(p);
        moved(at, c, 1);
        return hl_stats_malloc(p, hl_class_size(c));
    }
    if (hl_remote_mode == HL_REMOTE_BATCH) hl_remote_flush();  /* the sender's slow path */
    struct hl_heap *h = heap_now();
    uint32_t want = clamp(hl_cfg.tlab_refill == HL_TLAB_BATCH ? limit[c] / 8 : limit[c] / 2);
    void *chain = NULL, *back = NULL;
    hl_heap_lock(h);
    if (hl_remote_pending(h)) hl_remote_collect(h);     /* the owner's slow path collects */
    if (hl_unlikely(hl_sb_sharded)) fill(h, c, refill, &chain, want, true);
    else fill(h, c, refill, &chain, want, false);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, (int)c);
    hl_heap_unlock(h);
    if (!chain) return NULL;
    p = chain;                           /* the first for the caller, the rest to a stack */
    chain = *(void **)p;
    while (chain) {
        void *q = chain;
        chain = *(void **)q;
        HL_CPU_RELEASE(q);
        if (hl_rseq_push(hl_cpu_slabs, slot, q, &at)) {
            moved(at, c, -1);
        } else {                         /* migrated to a CPU whose stack is full */
            *(void **)q = back;
            back = q;
        }
    }
    if (back) give_back(heap_now(), back, hl_heap_after_free);
    return hl_stats_malloc(p, hl_class_size(c));
}

void hl_cpu_free_slow(void *p, hl_after_free_fn after, void (*plain)(void *))
{
    struct hl_sb *sb = hl_sb_of(p);
    unsigned c = sb->cls;
    uintptr_t slot = HL_WORD_LOAD(sb->tlab_slot);
    size_t at;
    emulate_cpu();
    if (!limit[c] || slot == HL_TLAB_BYPASS || hl_me.state != 1) {
        plain(p);                        /* interior, no cache for the class, or teardown */
        return;
    }
    long cpu = (int32_t)rseq_area()->cpu_id;
    see(cpu, c);
    void *chain = NULL;
    uint32_t k = clamp(hl_cfg.tlab_flush == HL_TLAB_BATCH ? limit[c] : limit[c] / 2);
    for (uint32_t i = 0; i < k; i++) {   /* full: the newest blocks go back, p stays */
        void *q = hl_rseq_pop(hl_cpu_slabs, slot, &at);
        if (!q) break;                   /* (migrated to an emptier CPU) */
        HL_CPU_ACQUIRE(q);
        moved(at, c, 1);
        *(void **)q = chain;
        chain = q;
    }
    HL_CPU_RELEASE(p);
    if (hl_rseq_push(hl_cpu_slabs, slot, p, &at)) {
        moved(at, c, -1);
        hl_stats_free(sb->size);
    } else {
        plain(p);                        /* (counts itself) */
    }
    if (chain) give_back(heap_now(), chain, after);
}

size_t hl_cpu_cache_bytes(void)
{
    size_t bytes = 0;
    for (long cpu = 0; hl_cpu_slabs && cpu < ncpus; cpu++)
        for (unsigned c = 0; c < hl_classes->count; c++) {
            uint64_t w = atomic_load_explicit(&entry(cpu, c)->head, memory_order_relaxed);
            bytes += (size_t)(limit[c] - HL_RSEQ_ROOM(w)) * hl_class_size(c);
        }
    return bytes;
}

const struct hl_paths *hl_cpu_cache_start(const struct hl_paths paths[3])
{
    bool by_room = init();
    if (by_room) hl_stats_unseen_fn = unseen;
    return &paths[!hl_cfg.counting ? 0 : by_room ? 1 : 2];
}

void hl_cache_heaps_stats(struct hoardlab_stats *s)
{
    hl_tlab_heaps_stats(s);
    s->tlab_bytes += hl_cpu_cache_bytes();
}
