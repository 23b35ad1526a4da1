/* lfstack.c — the generic lock-free stack's hazard-protected pop (lfstack.h). */
#include "lfstack.h"

void *hl_lfs_pop(struct hl_hp_rec *r, int slot, _Atomic(void *) *top, size_t link,
                 unsigned *fails)
{
    void *x;
    for (;;) {
        x = hl_hp_protect(r, slot, top);
        if (!x) break;
        void *next = atomic_load_explicit((_Atomic(void *) *)((char *)x + link),
                                          memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(top, &x, next, memory_order_acq_rel,
                                                    memory_order_relaxed))
            break;
        if (fails) ++*fails;
    }
    hl_hp_clear(r, slot);
    return x;
}
