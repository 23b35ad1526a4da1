/* cpucache.c — the per-CPU caches' paths, built once for every row from cpucache.h's fast
 * halves (the front of cache = cpu: fronts.c; rseq.h has the critical sections), and their
 * slow halves: the slabs and their limits, the check that the kernel restarts the sections,
 * refilling a CPU's stack from the heap and flushing it back, the gauge and U's unseen part.
 *
 * Every change to a stack goes through rseq.h's pop and push, the slow halves' batches too
 * (a block at a time: a batch is one lock acquisition on the heap; pushing or popping its
 * blocks costs a dozen instructions each), so no lock guards a stack. */
#include <sched.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/sysinfo.h>
#include "cpucache.h"
#include "refill.h"

/* A stack's entry in a slab (rseq.h): the head word, and `seen` (cpucache.h's Accounting). */
struct cpu_entry {
    _Atomic uint64_t head;
    _Atomic int32_t seen;
    uint32_t unused;
};
_Static_assert(sizeof(struct cpu_entry) == HL_CACHE_BIN_BYTES, "the entries sit at tlab_slot");

ptrdiff_t hl_rseq_offset;
uint64_t hl_rseq_restarts;
char *hl_cpu_slabs;
char *const *hl_cpu_entry16;
static long ncpus;                      /* configured CPUs: a slab each */
static uint32_t limit[HL_MAX_CLASSES];
static bool u_by_room;                  /* the fast paths leave U to the stacks' room */
static struct hl_cache_row row;         /* the row behind the caches (cache.h) */
/* Under valgrind, which does not run rseq (the kernel never restarts a section), each
 * thread gets a CPU number of its own, its thread id, so that no two threads share a stack
 * and the sections' instructions can be counted (tools/hoardlab cost); ids past the slabs
 * bypass the cache. Never in a real run. The sections then read this area, not glibc's
 * (whose cpu_id >= 0 would make pthread_create register rseq, and fail, in new threads). */
static bool emulated;
static HL_TLS struct rseq emulated_area = { .cpu_id = RSEQ_CPU_ID_REGISTRATION_FAILED };

static struct cpu_entry *entry(long cpu, unsigned c)
{
    return (struct cpu_entry *)(hl_cpu_slabs + ((size_t)cpu << HL_RSEQ_SHIFT) + hl_cache_slot(c));
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
    emulated = __rseq_size == 0 && hl_os_valgrind();
    if (__rseq_size == 0 && !emulated)
        hl_die("cache = cpu: no rseq area registered for this thread (__rseq_size is 0: a "
               "kernel without rseq, a seccomp filter, or GLIBC_TUNABLES=glibc.pthread.rseq=0); "
               "use cache = thread");
    hl_rseq_offset = emulated ? (char *)&emulated_area - (char *)__builtin_thread_pointer()
                              : __rseq_offset;
}

/* rseq.h's slabs: a 4 GiB span, reserved (never written, so never backed, but for the
 * slabs), CPU 0's slab at its start and the two bypass slabs at its end; counted in A as
 * the slabs' bytes. */
char *hl_rseq_slabs_map(long cpus)
{
    if (cpus < 1 || (size_t)cpus > HL_RSEQ_BYPASS / HL_RSEQ_SLAB) return NULL;
    char *all = hl_os_mmap((size_t)1 << 32, MAP_NORESERVE);
    if (all == MAP_FAILED) return NULL;
    hl_os_account(HL_OS_META, (ptrdiff_t)(cpus + 2) << HL_RSEQ_SHIFT);
    return all;
}

/* After the heaps, with cache = cpu: the slabs (one per configured CPU, and the bypass),
 * every stack empty with its limit as room, the superblocks' tlab_slot made addresses in
 * CPU 0's slab; true when U is left to the room. */
static bool init(void)
{
    check_rseq();
    ncpus = get_nprocs_conf();
    if (ncpus < 1) ncpus = 1;
    hl_cpu_slabs = hl_rseq_slabs_map(ncpus);
    if (!hl_cpu_slabs) hl_die("cache = cpu: no address space for the per-CPU slabs (4 GiB)");
    hl_sb_slot_base = (uintptr_t)hl_cpu_slabs;
    for (unsigned c = 0; c < hl_classes->count; c++) {
        size_t n = hl_cfg.cpu_cache_bytes / hl_class_size(c);
        limit[c] = n > HL_RSEQ_MAX_ROOM ? HL_RSEQ_MAX_ROOM : (uint32_t)n;
        for (long cpu = 0; cpu < ncpus; cpu++) {
            atomic_store(&entry(cpu, c)->head, HL_RSEQ_HEAD(NULL, limit[c]));
            atomic_store(&entry(cpu, c)->seen, (int32_t)limit[c]);
        }
    }                                    /* the bypass entry (class count) stays 0 */
    char **entry16 = hl_meta_alloc(hl_classes->granules * sizeof *entry16);
    for (size_t g = 0; g < hl_classes->granules; g++)
        entry16[g] = (char *)entry(0, hl_classes->of16[g]);
    hl_cpu_entry16 = entry16;
    return u_by_room = hl_cache_u_left();
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

/* A batch's moves, told to moved() once for each run of blocks on one CPU's stack (nearly
 * always one run): an atomic add per batch, not one per block (a batch is the tail of the
 * latency: docs/cpu-cache.md). Until it is told, a reader of U may count the batch's moves
 * as the program's: U off by at most a batch for that moment, and right after (the adds are
 * a sum). */
struct tally {
    size_t at;
    int32_t n;
};
static void tally_add(struct tally *t, size_t at, unsigned c, int32_t n)
{
    if (t->n && at != t->at) {
        moved(t->at, c, t->n);
        t->n = 0;
    }
    t->at = at;
    t->n += n;
}
static void tally_done(struct tally *t, unsigned c)
{
    if (t->n) moved(t->at, c, t->n);
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

/* A chain of free blocks back to their superblocks' owners: cache.h's hl_cache_give_back,
 * one copy out of line for this file's slow halves, with the row's policy after a free. */
static void give_back(struct hl_heap *h, void *chain)
{
    hl_cache_give_back(h, chain);
}

/* The thread's heap, cpu selection re-read. */
static struct hl_heap *heap_now(void)
{
    hl_heap_recheck_cpu();
    return hl_heap_mine();
}

/* refill.h's collect: what h's pending remote frees hold goes back into their superblocks
 * (a CPU's stack takes no run whole). */
static void collect(struct hl_heap *h, unsigned c)
{
    (void)c;
    hl_remote_collect(h);
}

/* Never inlined into this file's fast paths, which stay as they were built in the rows'
 * files before (tools/hoardlab cost). */
__attribute__((noinline)) void *hl_cpu_malloc_slow(size_t size)
{
    unsigned c = hl_class_of(size);
    emulate_cpu();
    if (!limit[c] || hl_me.state != 1) return row.malloc(size);
    long cpu = (int32_t)rseq_area()->cpu_id;
    see(cpu, c);
    char *e0 = hl_cpu_slabs + hl_cache_slot(c);     /* the class's entry in CPU 0's slab */
    size_t at;
    void *p = hl_rseq_pop(e0, 0, &at);
    if (p) {                             /* emulate_cpu gave the thread its stack just now */
        HL_CPU_ACQUIRE(p);
        moved(at, c, 1);
        return hl_stats_malloc(p, hl_class_size(c));
    }
    HL_COUNT(cpu_refills, 1);
    void *chain = NULL, *back = NULL;
    hl_cache_refill(c, &chain, limit[c], heap_now, NULL, collect);
    if (!chain) return NULL;
    p = chain;                           /* the first for the caller, the rest to a stack */
    chain = *(void **)p;
    struct tally t = { 0, 0 };
    while (chain) {
        void *q = chain;
        chain = *(void **)q;
        HL_CPU_RELEASE(q);
        if (hl_rseq_push(e0, 0, q, &at)) {
            tally_add(&t, at, c, -1);
        } else {                         /* migrated to a CPU whose stack is full */
            *(void **)q = back;
            back = q;
        }
    }
    tally_done(&t, c);
    if (back) give_back(heap_now(), back);
    return hl_stats_malloc(p, hl_class_size(c));
}

/* Up to k blocks of class c popped from the stack of the CPU the caller runs on (fewer if it
 * empties, or, with only >= 0, once a pop finds the caller moved off CPU `only`), as a chain,
 * their moves told to moved(). Inlined, so a flush's `only` = -1 folds away (out of line it
 * cost the remote pair of cache = cpu 3.4 instructions, tools/hoardlab cost). */
static inline __attribute__((always_inline)) void *pop_chain(char *e0, unsigned c, uint32_t k,
                                                              long only)
{
    void *chain = NULL;
    struct tally t = { 0, 0 };
    for (uint32_t i = 0; i < k; i++) {
        size_t at;
        void *q = hl_rseq_pop(e0, 0, &at);
        if (!q) break;                   /* (migrated to an emptier CPU) */
        HL_CPU_ACQUIRE(q);
        tally_add(&t, at, c, 1);
        *(void **)q = chain;
        chain = q;
        if (only >= 0 && cpu_of(at) != only) break;
    }
    tally_done(&t, c);
    return chain;
}

__attribute__((noinline)) void hl_cpu_free_slow(void *p)
{
    struct hl_sb *sb = hl_sb_of(p);
    unsigned c = sb->cls;
    char *e0 = (char *)HL_WORD_LOAD(sb->tlab_slot);  /* the class's entry in CPU 0's slab */
    size_t at;
    emulate_cpu();
    if (!limit[c] || e0 == hl_cpu_slabs + HL_CACHE_BYPASS || hl_me.state != 1) {
        row.free(p);                     /* interior, no cache for the class, or teardown */
        return;
    }
    long cpu = (int32_t)rseq_area()->cpu_id;
    see(cpu, c);
    /* full: the newest blocks go back, p stays */
    void *chain = pop_chain(e0, c, hl_cache_flush_n(limit[c]), -1);
    if (chain) HL_COUNT(cpu_flushes, 1);
    HL_CPU_RELEASE(p);
    if (hl_rseq_push(e0, 0, p, &at)) {
        moved(at, c, -1);
        hl_stats_free(sb->size);
    } else {
        row.free(p);                     /* (counts itself) */
    }
    if (chain) give_back(heap_now(), chain);
}

/* ---- idle CPUs (cpu_cache_idle_ms) ---------------------------------------------------------
 * A CPU that no thread ran malloc or free on for a while keeps its stacks' blocks for good:
 * nothing but a thread on that CPU may pop them (rseq.h). So the purge thread goes there
 * itself: every cpu_cache_idle_ms it compares each CPU's stacks (their head words, folded)
 * with what it saw a period before, and on a CPU where none moved and some stack holds more
 * than a sixteenth of its limit it pins itself to that CPU and pops the excess, in the same
 * restartable sections as any thread there, so a program thread waking on that CPU meanwhile
 * restarts its section or ours, never both in one (as TCMalloc's background thread reclaims
 * idle CPUs' caches). The blocks go back to their superblocks' owners as a flush's do. A CPU
 * is taken back after one to two periods of rest. Its affinity is restored after. */
static uint64_t *seen_heads;             /* per CPU: its stacks' heads folded, a period ago */

static uint64_t heads_of(long cpu)
{
    uint64_t h = 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        h = (h ^ atomic_load_explicit(&entry(cpu, c)->head, memory_order_relaxed)) *
            0x9e3779b97f4a7c15ull;
    return h;
}

/* The blocks of class c on `cpu`'s stack beyond the floor (a sixteenth of the limit). */
static uint32_t beyond_floor(long cpu, unsigned c)
{
    uint32_t held = limit[c] - (uint32_t)HL_RSEQ_ROOM(atomic_load_explicit(&entry(cpu, c)->head,
                                                                         memory_order_relaxed));
    return held > limit[c] / 16 ? held - limit[c] / 16 : 0;
}

/* The purge thread, pinned to `cpu`: its stacks down to the floor, given back. */
static void take_back(long cpu)
{
    for (unsigned c = 0; c < hl_classes->count; c++) {
        /* (moved off it, a CPU taken offline: enough) */
        void *chain = pop_chain(hl_cpu_slabs + hl_cache_slot(c), c, beyond_floor(cpu, c), cpu);
        if (chain) give_back(atomic_load_explicit(&hl_sb_of(chain)->owner, memory_order_relaxed),
                             chain);
    }
}

static void idle_sweep(void)
{
    cpu_set_t was, one;
    if (sched_getaffinity(0, sizeof was, &was)) return;
    bool pinned = false;
    for (long cpu = 0; cpu < ncpus && cpu < CPU_SETSIZE; cpu++) {
        uint64_t h = heads_of(cpu);
        bool rested = h == seen_heads[cpu];
        seen_heads[cpu] = h;
        bool excess = false;
        for (unsigned c = 0; c < hl_classes->count && !excess; c++) excess = beyond_floor(cpu, c);
        if (!rested || !excess) continue;
        /* (any CPU, not only those in its mask, which is its creator's: a pinned thread's) */
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one)) continue;
        pinned = true;
        take_back(cpu);
        seen_heads[cpu] = heads_of(cpu);
    }
    if (pinned) sched_setaffinity(0, sizeof was, &was);
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

/* The per-CPU cache's fast paths, built once for every row (stats.h's pairs over
 * cpucache.h's inline halves): uncounted, counted with U left to the stacks' room, and exact
 * (stats_batch = 0). They define cpu_malloc, cpu_malloc_entry, cpu_malloc_uncounted,
 * cpu_malloc_uncounted_entry, cpu_malloc_exact, cpu_malloc_exact_entry, cpu_free,
 * cpu_free_entry, cpu_free_uncounted, cpu_free_uncounted_entry, cpu_free_exact and
 * cpu_free_exact_entry. */
HL_MALLOC_PAIR(static, cpu_malloc, hl_cpu_malloc, false)
HL_FREE_PAIR(static, cpu_free, hl_cpu_free, false)
HL_MALLOC_BUILD(static, cpu_malloc_exact, hl_cpu_malloc, true, true)
HL_FREE_BUILD(static, cpu_free_exact, hl_cpu_free, true, true)
static const struct hl_paths paths[3] = {
    HL_PATHS(cpu_malloc_uncounted, cpu_free_uncounted),
    HL_PATHS(cpu_malloc, cpu_free), HL_PATHS(cpu_malloc_exact, cpu_free_exact),
};

static const struct hl_paths *start(const struct hl_cache_row *behind)
{
    row = *behind;
    bool by_room = init();
    if (hl_cfg.cpu_cache_idle_ms && !emulated) {   /* (valgrind runs no rseq: none to pin) */
        seen_heads = hl_meta_alloc((size_t)ncpus * sizeof *seen_heads);
        hl_ticker_every(idle_sweep, hl_cfg.cpu_cache_idle_ms);
    }
    return &paths[!hl_cfg.counting ? 0 : by_room ? 1 : 2];
}

static void stats(struct hoardlab_stats *s)
{
    s->rseq_restarts = __atomic_load_n(&hl_rseq_restarts, __ATOMIC_RELAXED);
}

/* The per-CPU cache's line of fronts.c's table. Nothing is per thread (cpucache.h): no
 * thread exit, fork or flush of its own. */
const struct hl_front hl_cpu_cache_front = {
    .cache = HL_CACHE_CPU,
    .start = start,
    .refill = hl_cpu_malloc_slow,
    .bytes = hl_cpu_cache_bytes,
    .unseen = unseen,
    .stats = stats,
};
