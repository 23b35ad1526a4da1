/* holes.h — hole purging (key purge_holes; holes.c): free pages inside superblocks that
 * still hold live blocks given back to the OS. superblock.c says how a hole keeps the free
 * list whole; holes.c says when. */
#ifndef HL_HOLES_H
#define HL_HOLES_H

#include "heap.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* After config and hl_heap_init: purge_holes = on installs the heap observer that purges
 * holes (before the heap log's if any) and registers the sweep with the ticker. */
void hl_holes_init(void);
/* The sweep, if due (purge.c's tick: a slow path holding no shard's lock). */
void hl_holes_tick(uint64_t now);
/* hoardlab_collect, h locked: every partly used superblock's free pages given back with
 * MADV_DONTNEED (and its earlier holes advised again); the bytes newly given back. 0 under
 * purge_holes = off. */
size_t hl_holes_collect(struct hl_heap *h);

#pragma GCC visibility pop

#endif
