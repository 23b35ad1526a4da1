/* tlab_adaptive.h — adaptive sizing of a TLAB's bins (key tlab_adaptive = on): the thread's
 * budget per class starts at tlab_budget and doubles after every ADAPT_EVERY refills (not
 * overflows: a thread that frees more than it allocates would only grow a TLAB holding
 * blocks for nobody), up to ADAPT_MAX; a bin's limit follows it at the bin's own refills and
 * at its first malloc while bypassed (fit), and drops back toward its start at each
 * overflow (shrink). docs/hoard2026.md gives the measurements behind each rule.
 *
 * Invariants: a TLAB's limits hold at most ADAPT_MAX bytes beyond those it started with, all
 * classes together (t->limit_bytes), so one class can reach the largest budget but a TLAB
 * never holds ADAPT_MAX of every class; a limit never drops below its start
 * (hl_tlab_limit); a limit's change moves the bin's room with it, uncounted by U
 * (tlab_bins.c), and is stored atomically, since other threads' hl_tlab_bytes read it.
 * Called by the owner's slow halves only (tlab.c), inline there as before the split. */
#ifndef HL_TLAB_ADAPTIVE_H
#define HL_TLAB_ADAPTIVE_H

#include "tlab.h"

#define ADAPT_EVERY 16                   /* slow paths per doubling */
#define ADAPT_MAX ((size_t)16 << 20)     /* the largest budget, and a TLAB's cap beyond its start */

/* Bin c's limit up to the thread's budget now, as far as the TLAB's cap allows. */
static void hl_tlab_adaptive_fit(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    uint32_t want = hl_tlab_limit_of(t->budget, c);
    if (want <= bin[c].limit) return;
    size_t size = hl_class_size(c), left = hl_tlab_limit_bytes + ADAPT_MAX - t->limit_bytes;
    uint32_t more = want - bin[c].limit;
    if ((size_t)more * size > left) more = (uint32_t)(left / size);
    if (!more) return;
    t->limit_bytes += (size_t)more * size;
    hl_tlab_move_uncounted(bin, c, (int32_t)more);
    __atomic_store_n(&bin[c].limit, bin[c].limit + more, __ATOMIC_RELAXED);
}

/* Bin c overflowed and gave a batch back (its room is that batch now): its limit drops by the
 * batch less the one block the free takes, to no less than its start. A bin a thread only
 * frees into (a drain) so comes back to a fresh thread's limit; a class allocated again grows
 * back at its refills. */
static inline void hl_tlab_adaptive_shrink(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    if (bin[c].limit <= hl_tlab_limit[c] || bin[c].room <= 1) return;
    uint32_t cut = (uint32_t)bin[c].room - 1;
    if (cut > bin[c].limit - hl_tlab_limit[c]) cut = bin[c].limit - hl_tlab_limit[c];
    t->limit_bytes -= (size_t)cut * hl_class_size(c);
    hl_tlab_move_uncounted(bin, c, -(int32_t)cut);
    __atomic_store_n(&bin[c].limit, bin[c].limit - cut, __ATOMIC_RELAXED);
}

/* A refill of class c: every ADAPT_EVERY-th doubles the budget; then the bin's limit fits it. */
static inline void hl_tlab_adaptive_refilled(struct hl_tlab_bin *bin, unsigned c)
{
    struct hl_tlab *t = hl_tlab_of(bin);
    if (!hl_cfg.tlab_adaptive) return;
    if (++t->slow % ADAPT_EVERY == 0 && t->budget < ADAPT_MAX)
        t->budget = t->budget * 2 > ADAPT_MAX ? ADAPT_MAX : t->budget * 2;
    hl_tlab_adaptive_fit(bin, c);
}

#endif
