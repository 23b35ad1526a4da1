/* tlab_remote.c — the remote-run side of the TLAB (its section of tlab.h): the owner's bins take
 * the runs its heap's inbox returns.
 *
 * Taking runs (the owner's way back: snmalloc's "a message's blocks straight into the slab the
 * owner allocates from next"): a run (a superblock's collected list, or a run of one
 * superblock's blocks in a batch message) whose bin has room for it and for one free more goes
 * in whole and unwalked (its blocks are read when handed out) in front of the bin's spare
 * chain, which the bin takes as its chain once empty. Runs come newest first and a sender
 * builds each in the order it freed (sender.h), so the blocks go out again in the order they
 * were freed: a consumer that frees a batch in the order it received it gives its producer
 * the same neighbouring blocks again (docs/hoard2026.md has the before and after). A longer
 * run is cut where the bin is full (its first blocks walked, the rest marked a run of its own:
 * hl_run_mark); an interior superblock's slot is the bypass bin, with no room. The freeing
 * side's shortcut under remote_free = batch is tlab.c's (free_other_batch). */
#include "tlab.h"

/* remote_free = list (without free_lists = sharded, whose lists are walked) or batch: a
 * collection returns runs for the bins to take (hl_tlab_remote_collect); queue returns none. */
static bool runs_come_back;

void *hl_tlab_remote_take_runs(struct hl_heap *h, void *runs)
{
    struct hl_tlab_bin *bins = hl_me.tlab_bins;
    if (!runs || !hl_tlab_own_bins() || hl_tlab_of(bins)->heap != h) return runs;
    void *rest = NULL, **rest_link = &rest;
    struct hl_tlab_spare *spares = hl_tlab_spares(bins);       /* (read once: the stores below */
    uint64_t taken = 0;                                   /* may alias hl_classes) */
    while (runs) {
        uintptr_t meta = ((uintptr_t *)runs)[1];
        void *last = HL_RUN_LAST(meta), *next = *(void **)last, *tail = last;
        uint32_t n = HL_RUN_N(meta);
        struct hl_sb *sb = hl_sb_of(runs);
        struct hl_tlab_bin *b = hl_tlab_bin_at(bins, HL_WORD_LOAD(sb->tlab_slot));
        int32_t fit = b->room - 1;                          /* (a free then still fits) */
        if (fit <= 0) {                                     /* full, or the bypass bin */
            *rest_link = runs;
            rest_link = (void **)last;
            runs = next;
            continue;
        }
        if ((uint32_t)fit < n) {                            /* cut: the rest waits */
            tail = runs;
            for (int32_t i = 1; i < fit; i++) tail = *(void **)tail;
            void *cut = *(void **)tail;
            hl_run_mark(cut, last, n - (uint32_t)fit);
            *rest_link = cut;
            rest_link = (void **)last;
            n = (uint32_t)fit;
        }
        taken += (uint64_t)n * sb->size;
        struct hl_tlab_spare *spare = &spares[b - bins];
        *(void **)tail = spare->head;                       /* in front of the spare chain */
        spare->n = (spare->head ? spare->n : 0) + n;
        spare->head = runs;
        HL_OWN_ADD(b->room, -(int32_t)n);   /* hl_tlab_move_uncounted, spares read once */
        HL_OWN_ADD(spare->seen, -(int32_t)n);
        runs = next;
    }
    *rest_link = NULL;
    HL_COUNT(remote_pending, (uint64_t)0 - taken);
    return rest;
}


void hl_tlab_remote_collect(struct hl_heap *h)
{
    if (!runs_come_back) {
        hl_remote_collect(h);
        return;
    }
    void *rest = hl_tlab_remote_take_runs(h, hl_remote_collect_runs(h));
    if (rest) hl_remote_settle(h, rest);
}

void hl_tlab_remote_start(void)
{
    runs_come_back = (hl_remote_mode == HL_REMOTE_LIST && !hl_sb_sharded) ||
                     hl_remote_mode == HL_REMOTE_BATCH;
}
