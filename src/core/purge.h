/* purge.h — returning the pages of hoard's parked empty superblocks to the OS (the later
 * Hoard's #99 and #116; keys `purge`, `retain`): purge.c says how. */
#ifndef HL_PURGE_H
#define HL_PURGE_H

#include "superblock.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* sb, empty, is now in the global heap (its shard locked): kept as it is while the retained
 * bytes allow, else formatted afresh and its blocks' pages purged. Once per parking. */
void hl_purge_park(struct hl_sb *sb);
/* sb leaves the global heap (its shard locked): out of the retained bytes, if it was in. */
void hl_purge_unpark(struct hl_sb *sb);
size_t hl_purge_retained(void);          /* bytes of parked superblocks kept unpurged */
size_t hl_purge_purged(void);            /* bytes of parked superblocks purged */

#pragma GCC visibility pop

#endif
