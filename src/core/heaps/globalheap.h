/* globalheap.h — hoard's global heap as one heap or as shards (globalheap.c says how). */
#ifndef HL_GLOBALHEAP_H
#define HL_GLOBALHEAP_H

#include "heap.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* h locked, no room for class c: a superblock of class c (the fullest), else an empty one of
 * any class, from the global heap, attached to h before the shard's lock is released; NULL if
 * the global heap has none. What others freed into a shard is collected first. */
struct hl_sb *hl_global_get(struct hl_heap *h, unsigned c);
/* h locked: sb leaves h for the shard of the CPU the thread runs on (near the memory it last
 * touched), or for the OS when release_empty is on and sb is empty. */
void hl_global_put(struct hl_heap *h, struct hl_sb *sb);
/* Shard k (locked) of several: sb, of no heap, becomes its own, and get's hint says so (tests
 * that place a superblock in a shard by hand). */
void hl_global_attach(unsigned k, struct hl_sb *sb);

#pragma GCC visibility pop

#endif
