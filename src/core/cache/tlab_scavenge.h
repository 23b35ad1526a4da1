/* tlab_scavenge.h — scavenging idle threads' TLABs (key tlab_scavenge_ms > 0): the owner's
 * side, which every slow half that touches its bins takes (the TLAB's guard), and the start
 * of the purge thread's side (tlab_scavenge.c). docs/hoard2026.md tells the protocol whole.
 *
 * Invariants: only the owner touches its bins, with plain loads and stores, unless the purge
 * thread holds the TLAB's guard, has set its `stop`, has run membarrier, and then read the
 * owner's tlab_in as 0; every guarded fast path stores 1 in tlab_in before it tests `stop`
 * (tlab.h's hl_tlab_enter), and every slow half that touches the bins holds the guard,
 * taken once however deep they nest (a slow half that starts the purge thread mallocs again
 * inside it: pthread_create). tlab.c's setup takes the guard of bins it sets up before
 * another thread can find them. */
#ifndef HL_TLAB_SCAVENGE_H
#define HL_TLAB_SCAVENGE_H

#include "tlab_bins.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* tlab_scavenge_ms > 0 and membarrier registered: the fast paths are the guarded ones. */
extern bool hl_tlab_scavenging;
extern HL_TLS unsigned hl_tlab_guard_depth;
extern HL_TLS struct hl_tlab *hl_tlab_guarded;   /* whose guard the calling thread holds */

static inline void hl_tlab_scavenge_enter(void)
{
    if (hl_tlab_scavenging && hl_tlab_guard_depth++ == 0 && hl_tlab_own_bins()) {
        hl_tlab_guarded = hl_tlab_mine();
        hl_lock_take(&hl_tlab_guarded->guard);
    }
}
static inline void hl_tlab_scavenge_leave(void)
{
    if (hl_tlab_scavenging && --hl_tlab_guard_depth == 0 && hl_tlab_guarded) {
        hl_lock_release(&hl_tlab_guarded->guard);
        hl_tlab_guarded = NULL;
    }
}

/* At the TLAB's start: true when scavenging is on (membarrier's expedited command
 * registered for the process, else said once and left off), the sweep registered with the
 * purge thread; tlab.c then installs the guarded paths. */
bool hl_tlab_scavenge_start(void);
/* HL_FORK_*, first and last of all (the front's fork_outer, fronts.c): the forking thread's
 * guard, which the purge thread may hold while it takes heaps' locks. */
void hl_tlab_scavenge_fork(int phase);

#pragma GCC visibility pop

#endif
