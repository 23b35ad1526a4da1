/* heapselect.c — which heap a thread allocates from, and the set of heaps behind it.
 *
 *   thread  a heap per live thread. A thread's heap goes back to a pool when it exits and
 *           the next new thread takes it, with whatever it holds, so thread churn reuses
 *           heaps instead of leaking them. A thread in TLS teardown (state 2, after its exit
 *           hook) uses one shared `teardown` heap.
 *   hash    thread id onto `heaps` fixed heaps. Ids are dense (the lowest free id), so id mod
 *           heaps spreads live threads evenly: the paper's hash with no collisions up to
 *           `heaps` live threads.
 *   cpu     sched_getcpu() mod `heaps`: threads running on one CPU share a heap. A thread
 *           caches its CPU's heap in hl_me.heap, so heap.h's fast paths serve it, and
 *           re-reads its CPU where it leaves them anyway (hl_heap_recheck_cpu: a TLAB batch,
 *           a superblock to or from the global heap): a thread that migrates follows its CPU
 *           within a batch, at no cost on the common call. The heaps are fixed, so exited
 *           threads leave none idle.
 * Heap numbers: 0 is hoard's global heap (shard 0); per-thread / per-processor heaps are
 * 1, 2, ...; with global_shards = n > 1, shards 1 .. n-1 come after the heaps made at init.
 */
#include <sched.h>
#include "tlab.h"

struct hl_heap *hl_heap_global;
struct hl_heap **hl_heap_shards;
unsigned hl_heap_nshards;
static unsigned shard_lo;                 /* the number of shard 1 */

static int mode;                          /* enum hl_heap_select */
static bool exclusive_heaps;
static struct hl_heap **fixed;            /* hash, cpu: heaps 1 .. nfixed */
static unsigned nfixed;
static struct hl_heap *teardown;          /* thread: heap of threads past their exit hook */
static hl_lock pool_lock = HL_LOCK_INIT;  /* guards pool, next_index, creation */
static struct hl_heap *pool;
static unsigned next_index;
static _Atomic(struct hl_heap *) all;     /* every heap, newest first */

static struct hl_heap *make(bool shared)
{
    struct hl_heap *h = hl_heap_new(next_index++, shared);
    h->all_next = atomic_load_explicit(&all, memory_order_relaxed);
    atomic_store_explicit(&all, h, memory_order_release);
    return h;
}

void hl_heaps_init(bool with_global, bool exclusive)
{
    hl_sb_init();
    hl_heap_init();
    hl_remote_init();
    mode = hl_cfg.heap_select;
    exclusive_heaps = exclusive && mode == HL_SELECT_THREAD;
    hl_lock_acquire(&pool_lock);
    next_index = 0;
    if (with_global) hl_heap_global = make(true);
    else next_index = 1;
    if (mode == HL_SELECT_THREAD) {
        teardown = make(true);
    } else {
        nfixed = (unsigned)hl_cfg.heaps;
        fixed = hl_meta_alloc(nfixed * sizeof *fixed);
        for (unsigned i = 0; i < nfixed; i++) fixed[i] = make(true);
    }
    hl_heap_nshards = with_global ? (unsigned)hl_cfg.global_shards : 0;
    if (with_global) {
        hl_heap_shards = hl_meta_alloc(hl_heap_nshards * sizeof *hl_heap_shards);
        hl_heap_shards[0] = hl_heap_global;
        shard_lo = next_index;
        for (unsigned i = 1; i < hl_heap_nshards; i++) hl_heap_shards[i] = make(true);
    }
    hl_lock_release(&pool_lock);
}

bool hl_heap_is_shard(const struct hl_heap *h)
{
    return h == hl_heap_global ||
           (hl_heap_nshards > 1 && h->index - shard_lo < hl_heap_nshards - 1);
}

int hl_heap_cpu(void)
{
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : cpu;
}

void hl_heap_recheck_cpu(void)
{
    if (mode == HL_SELECT_CPU && hl_me.heap)
        hl_me.heap = fixed[(unsigned)hl_heap_cpu() % nfixed];
}

struct hl_heap *hl_heap_select_slow(struct hl_thread *t)
{
    if (mode == HL_SELECT_CPU) {
        struct hl_heap *h = fixed[(unsigned)hl_heap_cpu() % nfixed];
        if (t->state == 1) t->heap = h;          /* cached; hl_heap_recheck_cpu re-reads */
        return h;
    }
    if (mode == HL_SELECT_HASH) return t->heap = fixed[t->id % nfixed];
    if (t->state != 1) return teardown;
    hl_lock_acquire(&pool_lock);
    struct hl_heap *h = pool;
    if (h) pool = h->pool_next;
    else h = make(!exclusive_heaps);
    hl_lock_release(&pool_lock);
    h->pool_next = NULL;
    return t->heap = h;
}

struct hl_heap *hl_heap_current(void)
{
    if (hl_me.heap) return hl_me.heap;
    if (mode == HL_SELECT_THREAD) return NULL;
    if (mode == HL_SELECT_HASH) return fixed[hl_me.id % nfixed];
    return fixed[(unsigned)hl_heap_cpu() % nfixed];
}

void hl_heaps_thread_exit(struct hl_thread *t)
{
    hl_remote_thread_exit(t);
    struct hl_heap *h = t->heap;
    if (mode != HL_SELECT_THREAD || !h) return;
    t->heap = NULL;
    hl_lock_acquire(&pool_lock);
    h->pool_next = pool;
    pool = h;
    hl_lock_release(&pool_lock);
}

/* Fork: the pool lock, then every heap, the global heap's shards last in ascending shard
 * number, since a thread may hold a per-processor heap's lock while it waits for a shard's,
 * and shards are taken together only in that order (hoard.c), never the reverse. */
void hl_heaps_fork(int phase)
{
    struct hl_heap *first = atomic_load_explicit(&all, memory_order_acquire);
    if (phase == HL_FORK_PREPARE) {
        hl_lock_acquire(&pool_lock);
        for (struct hl_heap *h = first; h; h = h->all_next)
            if (!hl_heap_is_shard(h)) hl_lock_acquire(&h->lock);
        for (unsigned i = 0; i < hl_heap_nshards; i++) hl_lock_acquire(&hl_heap_shards[i]->lock);
        return;
    }
    for (struct hl_heap *h = first; h; h = h->all_next)
        if (phase == HL_FORK_PARENT) hl_lock_release(&h->lock);
        else hl_lock_init(&h->lock);
    if (phase == HL_FORK_PARENT) hl_lock_release(&pool_lock);
    else hl_lock_init(&pool_lock);
}

void hl_heaps_foreach(void (*fn)(struct hl_heap *h, void *arg), void *arg)
{
    for (struct hl_heap *h = atomic_load_explicit(&all, memory_order_acquire); h;
         h = h->all_next)
        fn(h, arg);
}

HL_EXPORT int hoardlab_heap_contention(unsigned heap, uint64_t *acquisitions,
                                       uint64_t *contended)
{
    struct hl_heap *first = atomic_load_explicit(&all, memory_order_acquire);
    if (!first || heap > first->index) return -1;     /* the newest has the highest number */
    *acquisitions = *contended = 0;
    for (struct hl_heap *h = first; h; h = h->all_next)
        if (h->index == heap) {
            *acquisitions = __atomic_load_n(&h->acquisitions, __ATOMIC_RELAXED);
            *contended = __atomic_load_n(&h->contended, __ATOMIC_RELAXED);
        }
    return 0;
}
