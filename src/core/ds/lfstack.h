/* lfstack.h — the generic lock-free stack (Treiber's): elements of any type, linked through
 * an `_Atomic(void *)` link of their own, pushed by one CAS loop and popped under a hazard
 * pointer (hazard.c), so a pop's CAS cannot succeed on an element that was popped and pushed
 * again in between (ABA): an element goes back onto a stack only once no hazard slot holds
 * it (the caller retires it through hl_hp_retire, whose free function pushes it).
 *
 * lockfree.c's pools (descriptors, list nodes, superblocks) and its LIFO partial lists are
 * such stacks; the heaps' inboxes (mailbox.c) take pushes only (their owner takes the whole stack).
 * Both calls return how many CASes failed, for the caller's CAS counters. */
#ifndef HL_LFSTACK_H
#define HL_LFSTACK_H

#include "hazard.h"

#pragma GCC visibility push(hidden)

/* Push the chain first .. last (last's link is last_link) onto *top: the old top goes into
 * last_link, then a CAS with release order, so whatever the pusher wrote into the chain is
 * seen by whoever takes it. Lock-free; returns the failed CASes. */
static inline unsigned hl_lfs_push_chain(_Atomic(void *) *top, void *first,
                                         _Atomic(void *) *last_link)
{
    void *old = atomic_load_explicit(top, memory_order_relaxed);
    unsigned fails = 0;
    for (;;) {
        atomic_store_explicit(last_link, old, memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(top, &old, first, memory_order_release,
                                                  memory_order_relaxed))
            return fails;
        fails++;
    }
}

/* One element x, linked through link. */
static inline unsigned hl_lfs_push(_Atomic(void *) *top, void *x, _Atomic(void *) *link)
{
    return hl_lfs_push_chain(top, x, link);
}

/* Pop the top of *top, its link `link` bytes into it, under hazard slot `slot` of r (cleared
 * on return); NULL if the stack is empty. *fails (if not NULL) grows by the failed CASes. */
void *hl_lfs_pop(struct hl_hp_rec *r, int slot, _Atomic(void *) *top, size_t link,
                 unsigned *fails);

#pragma GCC visibility pop

#endif
