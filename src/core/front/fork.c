/* fork.c — the one fork path: before fork, take every lock of the library in one fixed
 * order; after it, release them in the parent and re-initialise them in the child, whose only
 * thread is the one that forked (so nothing it inherited is half-changed).
 *
 * The order is the order in which locks nest during normal operation, outermost first, so
 * taking them all cannot deadlock against a thread that holds one and waits for another:
 *   the strategy's (heaps, free lists; a strategy orders its own: hl_heaps_fork, hl_sh_fork)
 *   large      the large objects' cache, taken alone
 *   ticker     no lock: waits for a thread being started to reach its own code (ticker.c)
 *   parked     the parked lists, taken under a shard's lock or the large cache's (parked.c)
 *   census     touched from inside strategy locks
 *   checks     taken alone
 *   arena      taken under a heap lock when a superblock is made
 *   meta       taken under the arena's and heap creation's (heapselect.c)
 *   thread     the registry, taken alone */
#include <pthread.h>
#include "front.h"
#include "heap.h"
#include "instruments.h"

static void (*const core[])(int phase) = {
    hl_large_fork, hl_ticker_fork, hl_parked_fork, hl_census_fork, hl_checks_fork, hl_arena_fork,
    hl_meta_fork, hl_thread_fork,
};
#define NCORE (sizeof core / sizeof core[0])

static void prepare(void)
{
    if (hl_active->fork) hl_active->fork(HL_FORK_PREPARE);
    for (size_t i = 0; i < NCORE; i++) core[i](HL_FORK_PREPARE);
}

static void after(int phase)
{
    for (size_t i = NCORE; i-- > 0;) core[i](phase);
    if (hl_active->fork) hl_active->fork(phase);
}

static void parent(void) { after(HL_FORK_PARENT); }
static void child(void) { after(HL_FORK_CHILD); }

void hl_fork_init(void) { pthread_atfork(prepare, parent, child); }
