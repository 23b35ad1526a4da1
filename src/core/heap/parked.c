/* parked.c — the lock of the parked lists: purge.c's parked superblocks and ranges.c's
 * ranges are listed, aged and purged under it, and hole purging's sweep (holes.c) holds it
 * too, so that fork never finds the sweep half done. It is taken under a shard's lock or the
 * large cache's, never the reverse; fork.c takes it after every heap's and the large
 * cache's (hl_parked_fork). */
#include "purge.h"

hl_lock hl_parked_lock = HL_LOCK_INIT;

void hl_parked_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) hl_lock_take(&hl_parked_lock);
    else if (phase == HL_FORK_PARENT) hl_lock_release(&hl_parked_lock);
    else hl_lock_init(&hl_parked_lock);
}
