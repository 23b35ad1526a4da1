/* selector.h — heap selection's rule (heap_select), once, over opaque slots: which of a
 * strategy's heaps (or sets of heaps) a thread uses. heapselect.c selects `struct hl_heap`s
 * with it, lockfree.c its sets of processor heaps.
 *
 *   thread  a slot per live thread: the slot of its thread id. Ids are dense and the lowest
 *           free one is taken (thread.c), so a new thread takes over the slot of one that
 *           exited, with whatever it holds: thread churn reuses slots instead of leaking them.
 *   hash    thread id mod n fixed slots: the paper's hash, with no collisions up to n live
 *           threads, since ids are dense.
 *   cpu     sched_getcpu() mod n fixed slots: threads running on one CPU share a slot.
 *   home    n fixed slots handed out round-robin (an atomic counter) at a thread's first
 *           selection, and kept by the thread for its life whatever CPU it runs on (Hoard
 *           #103: ownership that is thread-stable, not CPU-stable).
 *
 * Lock-free on every path, a thread's first call included: the id's slot is found in a
 * two-level directory whose rows are installed by CAS, and the slot is made on first use by
 * the owner's `make` (which may lock, if the owner may). Where a thread caches its slot, and
 * what it uses after its exit hook, is the caller's policy. */
#ifndef HL_SELECTOR_H
#define HL_SELECTOR_H

#include "base.h"

#pragma GCC visibility push(hidden)

#define HL_SELECT_ROW_BITS 8
#define HL_SELECT_ROWS ((65536 >> HL_SELECT_ROW_BITS) + 1)   /* thread ids are < 65536 */

struct hl_selector {
    int mode;                            /* HL_SELECT_* (config.h) */
    unsigned n;                          /* hash, cpu: fixed[0 .. n-1], filled by the owner */
    void **fixed;
    void *(*make)(void);                 /* thread: a new slot, for an id seen the first time */
    _Atomic unsigned next_home;          /* home: the next thread's slot (round-robin) */
    _Atomic(_Atomic(void *) *) dir[HL_SELECT_ROWS];   /* thread: the slot of each id */
};

/* mode and n from the configuration (heap_select, heaps); hash and cpu: fixed allocated, for
 * the caller to fill before the first hl_select. */
void hl_selector_init(struct hl_selector *s, void *(*make)(void));
int hl_select_cpu(void);                 /* sched_getcpu, 0 if it fails */
void *hl_select_thread(struct hl_selector *s, unsigned id);   /* thread: the id's slot */
/* home: the calling thread's slot, 1 + its index (0: none yet), per thread (one selector is
 * in use per process: the strategy's). */
extern HL_TLS unsigned hl_select_home_slot;
unsigned hl_select_home_new(struct hl_selector *s);

/* The slot of the thread with this id (cpu: of the CPU the caller runs on). Inline: the cpu
 * mode re-reads it where a heap strategy leaves its fast path (heapselect.c). */
static inline void *hl_select(struct hl_selector *s, unsigned id)
{
    if (s->mode == HL_SELECT_HASH) return s->fixed[id % s->n];
    if (s->mode == HL_SELECT_CPU) return s->fixed[(unsigned)hl_select_cpu() % s->n];
    if (s->mode == HL_SELECT_HOME) {
        unsigned k = hl_select_home_slot;
        return s->fixed[(k ? k : hl_select_home_new(s)) - 1];
    }
    return hl_select_thread(s, id);
}

#pragma GCC visibility pop

#endif
