/* tlab_bins.c — the state the TLAB's files share (its section of tlab.h): the bins of
 * threads without their own, the starting limits, the registry of live TLABs, the free path
 * of a block of another heap; and giving back what bins hold, which a thread's exit,
 * hoardlab_collect (tlab.c) and the purge thread's sweep (tlab_scavenge.c) do. */
#include "tlab.h"

struct hl_tlab_none hl_tlab_none_tlab;
struct hl_tlab_bin *const hl_tlab_none = hl_tlab_none_tlab.bin;
uint32_t hl_tlab_limit[HL_MAX_CLASSES];
size_t hl_tlab_limit_bytes;
hl_lock hl_tlab_reg_lock = HL_LOCK_INIT;
struct hl_tlab *hl_tlab_live;
bool hl_tlab_u_by_bins;
hl_tlab_free_fn *hl_tlab_free_other;     /* set at start, before any path can call it */

/* A chain of blocks back to their superblocks: cache.h's hl_cache_give_back, one copy out of
 * line for this file, with the row's policy after a free. */
static void give_back(struct hl_heap *h, void *chain)
{
    hl_cache_give_back(h, chain);
}

/* The spare chain whole, the head chain after its first `keep` blocks (0: all). The purge
 * thread's take (mine false) moves room and seen together, so what U has not seen stays so. */
void hl_tlab_give_back_beyond(struct hl_tlab_bin *bin, struct hl_heap *h, bool floor, bool mine)
{
    struct hl_tlab_spare *spare = hl_tlab_spares(bin);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        if (mine) hl_tlab_publish_unseen(bin, c);
        uint32_t held = bin[c].limit - (uint32_t)bin[c].room;
        uint32_t keep = floor ? hl_tlab_limit[c] / 16 : 0;
        void *more = spare[c].head;
        if (more) {
            spare[c].head = NULL;
            held -= spare[c].n;
            hl_tlab_move_uncounted(bin, c, (int32_t)spare[c].n);
            give_back(h, more);
        }
        if (held <= keep) continue;
        void *chain = bin[c].head;
        if (keep) {
            void *last = chain;
            for (uint32_t i = 1; i < keep; i++) last = *(void **)last;
            chain = *(void **)last;
            *(void **)last = NULL;
        } else {
            bin[c].head = NULL;
        }
        hl_tlab_move_uncounted(bin, c, (int32_t)(held - keep));
        give_back(h, chain);
    }
}

