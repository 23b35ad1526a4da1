/* hazard.h — hazard pointers (Michael, IEEE TPDS 2004), the ABA and reclamation guard of
 * lock-free lists whose nodes are reused: a thread publishes the node it is about to read
 * through in one of its hazard slots, and a node another thread retires is handed back to its
 * owner's free function only once no slot holds it.
 *
 * Each thread owns one record (HL_HP_SLOTS slots and its list of retired nodes), taken from a
 * lock-free list of records by CAS on the record's `active` flag and given back at thread
 * exit (hl_hp_release), retired nodes and all, for the next thread to take over. A record is
 * never freed, so the list only grows to the most threads that ever held one at once.
 * Lock-free throughout; the first 64 records are static, later ones come from meta.c (its
 * lock, only when more than 64 threads ever held a record at once). */
#ifndef HL_HAZARD_H
#define HL_HAZARD_H

#include "base.h"

#pragma GCC visibility push(hidden)

#define HL_HP_SLOTS 4

/* Embedded in every object that may be retired. */
struct hl_hp_node {
    struct hl_hp_node *hp_next;                  /* the retired list */
    void (*hp_free)(struct hl_hp_node *n);       /* called once no hazard pointer holds it */
    const void *hp_obj;                          /* the object, as hazard slots name it */
};

struct hl_hp_rec {
    _Atomic(void *) slot[HL_HP_SLOTS];
    _Atomic int active;                          /* 1 while a thread owns the record */
    struct hl_hp_rec *next;                      /* the list of every record; set once */
    struct hl_hp_node *retired;                  /* owner only */
    _Atomic unsigned nretired;                   /* written by the owner only */
} HL_CACHE_ALIGNED;

/* The calling thread's record, taken on first use. */
struct hl_hp_rec *hl_hp_mine(void);
/* Load *src and publish it in slot i until the published value is still *src: then the
 * object it points to cannot be freed (handed to hp_free) until the slot changes. */
static inline void *hl_hp_protect(struct hl_hp_rec *r, int i, _Atomic(void *) *src)
{
    void *p = atomic_load_explicit(src, memory_order_acquire);
    for (;;) {
        atomic_store_explicit(&r->slot[i], p, memory_order_seq_cst);
        void *q = atomic_load_explicit(src, memory_order_seq_cst);
        if (q == p) return p;
        p = q;
    }
}
static inline void hl_hp_clear(struct hl_hp_rec *r, int i)
{
    atomic_store_explicit(&r->slot[i], NULL, memory_order_release);
}
/* The object obj (whose embedded node is n) is out of every shared structure: free it
 * (free_fn(n)) once no slot holds obj. */
void hl_hp_retire(struct hl_hp_rec *r, struct hl_hp_node *n, const void *obj,
                  void (*free_fn)(struct hl_hp_node *));
/* Free every retired node of r that no slot holds now. */
void hl_hp_scan(struct hl_hp_rec *r);
/* The calling thread gives its record back (thread exit); the next taker inherits its
 * retired nodes. Harmless if it has none. */
void hl_hp_release(void);
/* Every record: nodes retired and not yet freed (statistics, tests). */
unsigned hl_hp_pending(void);
/* Fork child: the other threads are gone; their records become free to take. */
void hl_hp_fork_child(void);

#pragma GCC visibility pop

#endif
