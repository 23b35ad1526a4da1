/* heapselect.c — which heap a thread allocates from, and the set of heaps behind it. The
 * rule, heap_select, is selector.c's (thread, hash, cpu over opaque slots; lockfree.c uses it
 * too); this file applies it to `struct hl_heap`s:
 *
 *   thread  a heap per live thread: its thread id's, so the next new thread, which takes the
 *           lowest free id, takes over an exited thread's heap with whatever it holds. A
 *           thread past its exit hook (in TLS teardown, state 2) uses one shared `teardown`
 *           heap.
 *   hash    thread id mod `heaps` fixed heaps.
 *   cpu     sched_getcpu() mod `heaps`: threads running on one CPU share a heap. A thread
 *           caches its CPU's heap in hl_me.heap, so heap.h's fast paths serve it, and
 *           re-reads its CPU where it leaves them anyway (hl_heap_recheck_cpu: a TLAB batch,
 *           a superblock to or from the global heap): a thread that migrates follows its CPU
 *           within a batch, at no cost on the common call. The heaps are fixed, so exited
 *           threads leave none idle.
 * Heap numbers: 0 is hoard's global heap (shard 0); per-thread / per-processor heaps are
 * 1, 2, ...; with global_shards = n > 1, shards 1 .. n-1 come after the heaps made at init.
 */
#include "heapselect.h"
#include "heap.h"
#include "remote.h"
#include "selector.h"

struct hl_heap *hl_heap_global;
struct hl_heap **hl_heap_shards;
unsigned hl_heap_nshards;
static unsigned shard_lo;                 /* the number of shard 1 */

static int mode;                          /* HL_SELECT_* (config.h) */
static bool exclusive_heaps;
static struct hl_selector sel;            /* hash, cpu: heaps 1 .. heaps; thread: by id */
static struct hl_heap *teardown;          /* thread: heap of threads past their exit hook */
static hl_lock make_lock = HL_LOCK_INIT;  /* guards next_index, creation */
static unsigned next_index;
static _Atomic(struct hl_heap *) all;     /* every heap, newest first */

static struct hl_heap *make(bool shared)
{
    struct hl_heap *h = hl_heap_new(next_index++, shared);
    h->all_next = atomic_load_explicit(&all, memory_order_relaxed);
    atomic_store_explicit(&all, h, memory_order_release);
    return h;
}

/* thread: a heap for an id seen the first time (hl_select, no lock held). */
static void *make_thread_heap(void)
{
    hl_lock_acquire(&make_lock);
    struct hl_heap *h = make(!exclusive_heaps);
    hl_lock_release(&make_lock);
    return h;
}

void hl_heaps_init(bool with_global, bool exclusive)
{
    hl_sb_init();
    hl_heap_init();
    hl_purge_init();                     /* purge_holes: its observer */
    hl_remote_init();
    mode = hl_cfg.heap_select;
    exclusive_heaps = exclusive && mode == HL_SELECT_THREAD;
    hl_selector_init(&sel, make_thread_heap);
    hl_lock_acquire(&make_lock);
    next_index = 0;
    if (with_global) hl_heap_global = make(true);
    else next_index = 1;
    if (mode == HL_SELECT_THREAD) {
        teardown = make(true);
    } else {
        for (unsigned i = 0; i < sel.n; i++) sel.fixed[i] = make(true);
    }
    hl_heap_nshards = with_global ? (unsigned)hl_cfg.global_shards : 0;
    if (with_global) {
        hl_heap_shards = hl_meta_alloc(hl_heap_nshards * sizeof *hl_heap_shards);
        hl_heap_shards[0] = hl_heap_global;
        shard_lo = next_index;
        for (unsigned i = 1; i < hl_heap_nshards; i++) hl_heap_shards[i] = make(true);
    }
    hl_lock_release(&make_lock);
}

bool hl_heap_is_shard(const struct hl_heap *h)
{
    return h == hl_heap_global ||
           (hl_heap_nshards > 1 && h->index - shard_lo < hl_heap_nshards - 1);
}

void hl_heap_recheck_cpu(void)
{
    if (mode == HL_SELECT_CPU && hl_me.heap)
        hl_me.heap = hl_select(&sel, hl_me.id);
}

struct hl_heap *hl_heap_select_slow(struct hl_thread *t)
{
    if (mode == HL_SELECT_CPU) {
        struct hl_heap *h = hl_select(&sel, t->id);
        if (t->state == 1) t->heap = h;          /* cached; hl_heap_recheck_cpu re-reads */
        return h;
    }
    if (mode == HL_SELECT_THREAD && t->state != 1) return teardown;
    return t->heap = hl_select(&sel, t->id);
}

struct hl_heap *hl_heap_current(void)
{
    if (hl_me.heap) return hl_me.heap;
    if (mode == HL_SELECT_THREAD) return NULL;
    return hl_select(&sel, hl_me.id);
}

void hl_heaps_thread_exit(struct hl_thread *t)
{
    hl_remote_thread_exit(t);
    /* thread: the heap stays its id's, for the next thread that takes the id; this thread
     * uses the teardown heap from now on. */
    if (mode == HL_SELECT_THREAD) t->heap = NULL;
}

/* Fork: the creation lock, then every heap, the global heap's shards last in ascending shard
 * number, since a thread may hold a per-processor heap's lock while it waits for a shard's,
 * and shards are taken together only in that order (hoard.c), never the reverse. */
void hl_heaps_fork(int phase)
{
    struct hl_heap *first = atomic_load_explicit(&all, memory_order_acquire);
    if (phase == HL_FORK_PREPARE) {
        hl_lock_acquire(&make_lock);
        for (struct hl_heap *h = first; h; h = h->all_next)
            if (!hl_heap_is_shard(h)) hl_lock_acquire(&h->lock);
        for (unsigned i = 0; i < hl_heap_nshards; i++) hl_lock_acquire(&hl_heap_shards[i]->lock);
        return;
    }
    for (struct hl_heap *h = first; h; h = h->all_next)
        if (phase == HL_FORK_PARENT) hl_lock_release(&h->lock);
        else hl_lock_init(&h->lock);
    if (phase == HL_FORK_PARENT) hl_lock_release(&make_lock);
    else hl_lock_init(&make_lock);
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
