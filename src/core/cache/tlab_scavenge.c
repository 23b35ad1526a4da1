/* tlab_scavenge.c — scavenging (tlab_scavenge_ms, its section of tlab.h): the purge thread's
 * sweep of the live TLABs, and the forking thread's guard (the guarded slow halves, which
 * call the TLAB's, are tlab.c's).
 *
 * The sweep, every tlab_scavenge_ms: the live TLABs whose bins' room (folded) is what it was
 * a sweep ago and that hold more than a sixteenth of some class's starting limit, whose
 * guard is free (by trylock, under the registry's lock: the leaf lock is not waited on with
 * a guard held, nor a guard with it), up to SCAVENGE_MAX of them; their stop set, one
 * membarrier, and each whose owner is outside its fast paths given back down to that floor.
 * A TLAB is taken within one to two periods of rest; one whose room returns to the same value
 * between sweeps (a thread that mallocs and frees one block in a loop) may be taken while
 * busy: it refills at its next malloc, as after a flush. */
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "heap.h"
#include "tlab.h"

bool hl_tlab_scavenging;
HL_TLS unsigned hl_tlab_guard_depth;
HL_TLS struct hl_tlab *hl_tlab_guarded;

enum { SCAVENGE_MAX = 64 };

static uint64_t rooms_of(struct hl_tlab_bin *bin)
{
    uint64_t h = 0;
    for (unsigned c = 0; c < hl_classes->count; c++)
        h = (h ^ (uint32_t)__atomic_load_n(&bin[c].room, __ATOMIC_RELAXED)) *
            0x9e3779b97f4a7c15ull;
    return h;
}

static bool beyond_floor(struct hl_tlab_bin *bin)
{
    for (unsigned c = 0; c < hl_classes->count; c++)
        if ((int64_t)__atomic_load_n(&bin[c].limit, __ATOMIC_RELAXED) -
            __atomic_load_n(&bin[c].room, __ATOMIC_RELAXED) > (int64_t)(hl_tlab_limit[c] / 16))
            return true;
    return false;
}

static void sweep(void)
{
    struct hl_tlab *took[SCAVENGE_MAX];
    unsigned n = 0;
    hl_lock_acquire(&hl_tlab_reg_lock);
    for (struct hl_tlab *t = hl_tlab_live; t && n < SCAVENGE_MAX; t = t->next) {
        uint64_t rooms = rooms_of(hl_tlab_bins_of(t));
        bool rested = rooms == t->seen_rooms;
        t->seen_rooms = rooms;
        if (rested && beyond_floor(hl_tlab_bins_of(t)) && hl_trylock(&t->guard)) took[n++] = t;
    }
    hl_lock_release(&hl_tlab_reg_lock);
    if (!n) return;
    for (unsigned i = 0; i < n; i++) __atomic_store_n(&took[i]->stop, 1, __ATOMIC_RELAXED);
    /* (refused, though registered: no fence was run, so no owner's tlab_in can be trusted) */
    bool fenced = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    for (unsigned i = 0; i < n; i++) {
        struct hl_tlab *t = took[i];
        if (fenced && !__atomic_load_n(t->in, __ATOMIC_ACQUIRE))
            hl_tlab_give_back_beyond(hl_tlab_bins_of(t), t->heap, true, false);
        t->seen_rooms = rooms_of(hl_tlab_bins_of(t));
        __atomic_store_n(&t->stop, 0, __ATOMIC_RELEASE);
        hl_lock_release(&t->guard);
    }
}

bool hl_tlab_scavenge_start(void)
{
    if (!hl_cfg.tlab_scavenge_ms) return false;
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
        hl_say("tlab_scavenge_ms = %ld: membarrier refused (errno %d): idle threads' TLABs are "
               "not scavenged", hl_cfg.tlab_scavenge_ms, errno);
        return false;
    }
    hl_tlab_scavenging = true;
    hl_ticker_every(sweep, hl_cfg.tlab_scavenge_ms);
    return true;
}

/* The forking thread's guard, before the heaps' locks are taken (the purge thread may hold it
 * while it waits for one) and after they are released; the child has no purge thread, and
 * the lock held is made free again. */
void hl_tlab_scavenge_fork(int phase)
{
    if (!hl_tlab_scavenging || !hl_tlab_own_bins()) return;
    if (phase == HL_FORK_PREPARE) hl_lock_take(&hl_tlab_mine()->guard);
    else if (phase == HL_FORK_PARENT) hl_lock_release(&hl_tlab_mine()->guard);
    else hl_lock_init(&hl_tlab_mine()->guard);
}
