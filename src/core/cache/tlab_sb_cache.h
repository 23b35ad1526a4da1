/* tlab_sb_cache.h — the TLAB's superblock cache (key tlab_sb_cache = N ways; Hoard #95,
 * #123): entry (sb / S) mod N holds a superblock the bins last refilled from or flushed
 * into, and its tlab_slot, so that a free whose superblock the TLAB's heap no longer owns
 * (hoard moved it to the global heap, another heap took it) may still enter the bin. Kept by
 * the slow halves only: the fast free tests the owner as without the cache, and a block of
 * another heap leaves it for hl_tlab_free_other, which tlab_sb_cache.c puts the lookup in
 * front of. docs/hoard2026.md says what it costs and what it no longer does.
 *
 * Invariants: an entry is good only under the hl_sb_generation it was filed under (a
 * superblock that changes class or becomes interior moves it: the entries are dropped where
 * they are next read or filled), and only for the heap the TLAB had when it was filed (the
 * entries are dropped when the TLAB's heap changes: tlab.c's heap_now, or a TLAB taken from
 * the pool). A block let in is out of its superblock whoever owns it, as tlab_foreign =
 * adopt's are; giving back re-reads the owner. The inline parts are the slow halves' (the
 * fill), built into tlab.c as before the split (tools/hoardlab cost). */
#ifndef HL_TLAB_SB_CACHE_H
#define HL_TLAB_SB_CACHE_H

#include "tlab_bins.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* An entry's byte offset is (sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask: log2 S - 4 and
 * (tlab_sb_cache - 1) x 16, so the lookup does no scaling. */
extern unsigned hl_tlab_sbc_shift;
extern uintptr_t hl_tlab_sbc_mask;

/* The entries are struct hl_tlab_sbc, in a TLAB's header (tlab_bins.h). At the TLAB's
 * start: the key checked, the mask and shift set, and with tlab_sb_cache > 0 the lookup put
 * in front of hl_tlab_free_other. */
void hl_tlab_sb_cache_start(void);

/* The entries of sbc (a TLAB's first HL_TLAB_SBC_MAX), their generation *gen: dropped, the
 * generation seen now gen. */
static inline void hl_tlab_sb_cache_reset(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen,
                                          uint64_t gen)
{
    for (uintptr_t i = 0; i <= hl_tlab_sbc_mask / sizeof sbc[0]; i++) sbc[i].sb = 0;
    *sbc_gen = gen;
}
/* sb's entry. */
static inline struct hl_tlab_sbc *hl_tlab_sb_cache_entry(struct hl_tlab_sbc *sbc,
                                                         const struct hl_sb *sb)
{
    return (struct hl_tlab_sbc *)((char *)sbc +
                                  (((uintptr_t)sb >> hl_tlab_sbc_shift) & hl_tlab_sbc_mask));
}
/* The entries are good if the generation has not moved since they were filed; else they are
 * dropped (and filed under the new one). The acquire: a slot read after it is no older. */
static inline bool hl_tlab_sb_cache_current(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen)
{
    uint64_t gen = atomic_load_explicit(&hl_sb_generation, memory_order_acquire);
    if (hl_likely(*sbc_gen == gen)) return true;
    hl_tlab_sb_cache_reset(sbc, sbc_gen, gen);
    return false;
}
/* A refill or a flush of the calling thread's bins used sb, which the TLAB's heap owned: its
 * entry now. Filed under the generation read before the slot, so a change after it drops the
 * entry at its next use. */
static inline void hl_tlab_sb_cache_fill(struct hl_tlab_sbc *sbc, uint64_t *sbc_gen,
                                         struct hl_sb *sb)
{
    hl_tlab_sb_cache_current(sbc, sbc_gen);
    struct hl_tlab_sbc *e = hl_tlab_sb_cache_entry(sbc, sb);
    if (e->sb == (uintptr_t)sb) return;
    e->sb = (uintptr_t)sb;
    e->slot = HL_WORD_LOAD(sb->tlab_slot);
    HL_COUNT(tlab_sb_fills, 1);
}

#pragma GCC visibility pop

#endif
