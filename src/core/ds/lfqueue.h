/* lfqueue.h — the generic lock-free FIFO queue (Michael and Scott, PODC 1996) of opaque
 * values, with hazard pointers (hazard.c) instead of counted pointers, and the pool of the
 * nodes that carry the values: a node leaves the queue (or a stack of such nodes) only through
 * hl_lf_node_retire, so it is reused only once no hazard slot holds it, and no CAS of the
 * queue or of the pool meets a recycled node (no ABA). The pool is an lfstack.h stack, grown a
 * page of nodes at a time from meta.c (its lock, only when the pool is empty); nodes are never
 * freed.
 *
 * lockfree.c keeps its partial lists in such queues (partial_list = fifo), or in lfstack.h
 * stacks of the same nodes (lifo). Each operation calls the caller's count with the outcome of
 * each CAS a caller's statistics count (the link and swing CASes). */
#ifndef HL_LFQUEUE_H
#define HL_LFQUEUE_H

#include "lfstack.h"

#pragma GCC visibility push(hidden)

struct hl_lf_node {
    _Atomic(struct hl_lf_node *) next;
    void *val;
    struct hl_hp_node hp;
};

/* head is a dummy node (the last one taken); head and tail on lines of their own. */
struct hl_lfqueue {
    _Atomic(struct hl_lf_node *) head;
    char pad_[HL_CACHE_LINE - sizeof(void *)];
    _Atomic(struct hl_lf_node *) tail;
};

/* A node from the pool (popped under hazard slot `slot` of r), or a page more. */
struct hl_lf_node *hl_lf_node_alloc(struct hl_hp_rec *r, int slot);
/* n is out of every queue and stack: back to the pool once no hazard slot holds it. */
void hl_lf_node_retire(struct hl_hp_rec *r, struct hl_lf_node *n);

/* An empty queue: one dummy node, from meta.c. */
void hl_lfq_init(struct hl_lfqueue *q);

/* The operations are inline, so that the caller's count compiles into their loops. */

/* Append val: link the node after the last one (a CAS on its next), helping a lagging tail
 * along (a CAS on tail), then swing tail to the node (not counted: its failure means another
 * thread did). Hazard slots: `slot` (the tail), pool_slot (a node from the pool). */
static inline void hl_lfq_put(struct hl_lfqueue *q, void *val, struct hl_hp_rec *r, int slot,
                              int pool_slot, void (*count)(bool arg, bool ok), bool arg)
{
    struct hl_lf_node *n = hl_lf_node_alloc(r, pool_slot), *t;
    n->val = val;
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    for (;;) {
        t = hl_hp_protect(r, slot, (_Atomic(void *) *)&q->tail);
        struct hl_lf_node *next = atomic_load_explicit(&t->next, memory_order_acquire);
        if (t != atomic_load_explicit(&q->tail, memory_order_acquire)) continue;
        if (next) {
            count(arg, atomic_compare_exchange_strong_explicit(&q->tail, &t, next,
                                                               memory_order_acq_rel,
                                                               memory_order_relaxed));
            continue;
        }
        struct hl_lf_node *none = NULL;
        bool ok = atomic_compare_exchange_strong_explicit(&t->next, &none, n,
                                                          memory_order_acq_rel,
                                                          memory_order_relaxed);
        count(arg, ok);
        if (ok) break;
    }
    atomic_compare_exchange_strong_explicit(&q->tail, &t, n, memory_order_acq_rel,
                                            memory_order_relaxed);
    hl_hp_clear(r, slot);
}

/* Take the oldest value, NULL if empty: move head to its next (a CAS), whose value that is;
 * the old dummy is retired. Hazard slots: slot (head) and slot + 1 (its next, whose value is
 * read before the CAS). */
static inline void *hl_lfq_get(struct hl_lfqueue *q, struct hl_hp_rec *r, int slot,
                               void (*count)(bool arg, bool ok), bool arg)
{
    struct hl_lf_node *h, *next;
    void *val;
    for (;;) {
        h = hl_hp_protect(r, slot, (_Atomic(void *) *)&q->head);
        struct hl_lf_node *t = atomic_load_explicit(&q->tail, memory_order_acquire);
        next = atomic_load_explicit(&h->next, memory_order_acquire);
        atomic_store_explicit(&r->slot[slot + 1], next, memory_order_seq_cst);
        if (h != atomic_load_explicit(&q->head, memory_order_seq_cst)) continue;
        if (!next) { val = NULL; break; }
        if (h == t) {
            atomic_compare_exchange_strong_explicit(&q->tail, &t, next, memory_order_acq_rel,
                                                    memory_order_relaxed);
            continue;
        }
        val = next->val;
        bool ok = atomic_compare_exchange_strong_explicit(&q->head, &h, next,
                                                          memory_order_acq_rel,
                                                          memory_order_relaxed);
        count(arg, ok);
        if (ok) {
            hl_hp_clear(r, slot);
            hl_lf_node_retire(r, h);
            break;
        }
    }
    hl_hp_clear(r, slot);
    hl_hp_clear(r, slot + 1);
    return val;
}

#pragma GCC visibility pop

#endif
