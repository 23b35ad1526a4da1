/* selector.c — heap selection's rule over opaque slots (selector.h). */
#include <sched.h>
#include "base.h"
#include "selector.h"

#define ACQ memory_order_acquire
#define AR  memory_order_acq_rel

void hl_selector_init(struct hl_selector *s, void *(*make)(void))
{
    s->mode = hl_cfg.heap_select;
    s->make = make;
    s->n = s->mode == HL_SELECT_THREAD ? 0 : (unsigned)hl_cfg.heaps;
    s->fixed = s->n ? hl_meta_alloc(s->n * sizeof *s->fixed) : NULL;
    atomic_store_explicit(&s->next_home, 0, memory_order_relaxed);
    hl_select_home_slot = 0;                            /* the initing thread's, for tests */
    for (unsigned r = 0; r < HL_SELECT_ROWS; r++)      /* a second init starts with no slots */
        atomic_store_explicit(&s->dir[r], NULL, memory_order_relaxed);
}

HL_TLS unsigned hl_select_home_slot;

unsigned hl_select_home_new(struct hl_selector *s)
{
    unsigned k = atomic_fetch_add_explicit(&s->next_home, 1, memory_order_relaxed) % s->n;
    return hl_select_home_slot = k + 1;
}

int hl_select_cpu(void)
{
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : cpu;
}

/* thread: the id's row of the directory (made by CAS if none; a loser's row stays unused),
 * then its slot. Only the id's holder writes the slot, but a CAS keeps a slot from ever being
 * made twice. */
void *hl_select_thread(struct hl_selector *s, unsigned id)
{
    _Atomic(_Atomic(void *) *) *rowp = &s->dir[id >> HL_SELECT_ROW_BITS];
    _Atomic(void *) *row = atomic_load_explicit(rowp, ACQ);
    if (!row) {
        _Atomic(void *) *none = NULL;
        row = hl_meta_alloc(sizeof(*row) << HL_SELECT_ROW_BITS);
        if (!atomic_compare_exchange_strong_explicit(rowp, &none, row, AR, ACQ)) row = none;
    }
    _Atomic(void *) *slot = &row[id & ((1u << HL_SELECT_ROW_BITS) - 1)];
    void *p = atomic_load_explicit(slot, ACQ);
    if (!p) {
        void *none = NULL;
        p = s->make();
        if (!atomic_compare_exchange_strong_explicit(slot, &none, p, AR, ACQ)) p = none;
    }
    return p;
}
