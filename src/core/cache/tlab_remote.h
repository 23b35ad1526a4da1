/* tlab_remote.h — the remote-run side of the TLAB (tlab_remote.c): what the owner's bins do
 * with the remote frees its heap collects: runs taken whole into the bins' spare chains
 * (the freeing side's shortcut under remote_free = batch is tlab.c's). remote.h has both
 * sides of remote frees; docs/hoard2026.md the measurements behind the order runs go in.
 *
 * Invariants: a run taken leaves remote_pending but stays counted in its superblock's `used`
 * and its heap's u, as every block in a TLAB is; a bin takes a run only while a free still
 * fits after it (room - 1), and nobody reads a taken block's link until malloc hands it out;
 * the bins are written by their owner only, so taking runs needs no lock. */
#ifndef HL_TLAB_REMOTE_H
#define HL_TLAB_REMOTE_H

#include "tlab_bins.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* At the TLAB's start: whether collections return runs (remote_free = list without
 * free_lists = sharded, or batch). */
void hl_tlab_remote_start(void);

/* The runs of a chain (remote.h) that h's inbox returned into the calling thread's bins, when
 * its TLAB fills from h; returns the runs (and rests of cut runs) they did not take, linked
 * as they came, for hl_remote_settle under h's lock. Writes the bins only. */
void *hl_tlab_remote_take_runs(struct hl_heap *h, void *runs);
/* h (locked, the TLAB's heap) collects its pending remote frees (remote.h): the lists and
 * runs the calling thread's bins hold go into them whole, the rest back into their
 * superblocks. The TLAB's refill calls it. */
void hl_tlab_remote_collect(struct hl_heap *h);

#pragma GCC visibility pop

#endif
