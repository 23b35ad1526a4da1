/* heapselect.h — heap selection over private heaps (heapselect.c): which heap a thread
 * uses, inline on the fast paths (hl_heap_mine), and the set of heaps. */
#ifndef HL_HEAPSELECT_H
#define HL_HEAPSELECT_H

#include "heap.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */


/* heap_select, by selector.c's rule: thread (a heap per live thread, its thread id's, reused by
 * the next thread to take the id after it exits; the uC++ hybrid), hash (thread id onto
 * `heaps` heaps, as the paper), cpu (sched_getcpu modulo `heaps`, as the 2026 Hoard). */
extern struct hl_heap *hl_heap_global;   /* hoard's heap 0; NULL for the other strategies */
/* Build the heap set: with_global adds heap 0; exclusive: a heap only one thread uses at a
 * time (heap_select=thread) needs no lock. Numbers heaps 1, 2, ... */
void hl_heaps_init(bool with_global, bool exclusive);
struct hl_heap *hl_heap_select_slow(struct hl_thread *t);
/* The calling thread's heap. */
static inline struct hl_heap *hl_heap_mine(void)
{
    struct hl_heap *h = hl_me.heap;     /* set only once the thread is registered */
    if (hl_likely(h != NULL)) return h;
    return hl_heap_select_slow(hl_self());
}
/* The calling thread's heap if it has one now, without taking one (NULL if none). */
struct hl_heap *hl_heap_current(void);
/* Statistics: count a free of a block whose owner is not the freeing thread's heap. */
static inline void hl_heap_count_remote(const struct hl_heap *owner)
{
#ifdef HL_STATS
    const struct hl_heap *mine = hl_me.heap ? (const struct hl_heap *)hl_me.heap
                                            : hl_heap_current();
    if (owner != mine) HL_COUNT(remote_frees, 1);
#else
    (void)owner;
#endif
}
/* global_shards: hoard's global heap as n heaps, shard 0 being hl_heap_global (heap 0); the
 * others are numbered after the per-processor heaps made at init, so per-processor heaps
 * keep the numbers 1, 2, ... Lock order: a per-processor heap, then shards in ascending shard
 * number. */
extern struct hl_heap **hl_heap_shards;
extern unsigned hl_heap_nshards;        /* 0 without a global heap */
bool hl_heap_is_shard(const struct hl_heap *h);
/* heap_select = cpu: the thread caches its CPU's heap in hl_me.heap (so the fast paths below
 * apply) and re-reads the CPU here, at points that already leave the fast path (a TLAB batch,
 * a superblock to or from the global heap). Other modes: nothing. */
void hl_heap_recheck_cpu(void);
void hl_heaps_thread_exit(struct hl_thread *t);   /* thread mode: its heap left to its id */
void hl_heaps_fork(int phase);                    /* HL_FORK_*: heap creation, every heap */
/* Visit every heap (global first), without locks: for statistics and tests. */
void hl_heaps_foreach(void (*fn)(struct hl_heap *h, void *arg), void *arg);

#pragma GCC visibility pop

#endif
