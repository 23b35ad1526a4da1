/* lockfree.h — what tests reach of the `lockfree` strategy (src/strategies/lockfree.c). */
#ifndef HL_LOCKFREE_H
#define HL_LOCKFREE_H

#include "base.h"

#pragma GCC visibility push(hidden)

/* Superblock states (Michael 2004, §3.2.2), as kept in Anchor.state. */
/* (The paper numbers FULL 1 and PARTIAL 2; swapped here so that the two states free's fast
 * path accepts, ACTIVE and PARTIAL, are the two with the high bit clear.) */
enum { HL_LF_ACTIVE = 0, HL_LF_PARTIAL = 1, HL_LF_FULL = 2, HL_LF_EMPTY = 3 };

struct hl_lf_anchor { unsigned avail, count, state; uint64_t tag; };

/* The descriptor of the superblock holding block p (an opaque pointer), and its Anchor now. */
void *hl_lockfree_desc_of(const void *p);
struct hl_lf_anchor hl_lockfree_anchor(const void *desc);
unsigned hl_lockfree_maxcount(const void *desc);
/* Credits of the calling thread's processor heap for class c (-1: Active is NULL), and the
 * descriptor Active points to (NULL if none). */
int hl_lockfree_credits(unsigned c, void **desc);
/* The descriptor in the Partial slot of the calling thread's heap for class c, or NULL. */
void *hl_lockfree_partial_slot(unsigned c);

/* Descriptor list (§3.2.5): DescAlloc, DescRetire (deferred by hazard pointers), and a scan
 * of the caller's retired list, which makes retired descriptors available again. */
void *hl_lockfree_desc_alloc(void);
void hl_lockfree_desc_retire(void *desc);
void hl_lockfree_hp_flush(void);

/* Size class c's list of partial superblocks (§3.2.6), in the configured order. */
void hl_lockfree_list_put(unsigned c, void *desc);
void *hl_lockfree_list_get(unsigned c);

/* Checks: every live descriptor's Anchor against its avail list and its heap's Active
 * (count matches the list length, state matches count). Quiescent points only. Aborts with
 * a message on an inconsistency; returns the number of descriptors checked. */
unsigned hl_lockfree_check(void);

#pragma GCC visibility pop

#endif
