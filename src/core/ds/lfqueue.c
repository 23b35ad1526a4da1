/* lfqueue.c — the generic lock-free FIFO queue and its node pool (lfqueue.h); the
 * queue's operations are inline in the header. */
#include "lfqueue.h"

#define RLX memory_order_relaxed

static _Atomic(void *) pool;             /* free nodes: an lfstack.h stack */

static void node_free_cb(struct hl_hp_node *n)
{
    struct hl_lf_node *x = (struct hl_lf_node *)((char *)n - offsetof(struct hl_lf_node, hp));
    hl_lfs_push(&pool, x, (_Atomic(void *) *)&x->next);
}

void hl_lf_node_retire(struct hl_hp_rec *r, struct hl_lf_node *n)
{
    hl_hp_retire(r, &n->hp, n, node_free_cb);
}

struct hl_lf_node *hl_lf_node_alloc(struct hl_hp_rec *r, int slot)
{
    struct hl_lf_node *x = hl_lfs_pop(r, slot, &pool, offsetof(struct hl_lf_node, next), NULL);
    if (x) return x;
    /* More nodes: a page of them from meta.c (its lock; the pool then serves for good). */
    struct hl_lf_node *xs = hl_meta_alloc(HL_PAGE);
    unsigned n = HL_PAGE / sizeof *xs;
    for (unsigned i = 1; i < n; i++) node_free_cb(&xs[i].hp);
    return &xs[0];
}

void hl_lfq_init(struct hl_lfqueue *q)
{
    struct hl_lf_node *dummy = hl_meta_alloc(sizeof *dummy);
    atomic_store_explicit(&q->head, dummy, RLX);
    atomic_store_explicit(&q->tail, dummy, RLX);
}
