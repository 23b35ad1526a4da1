/* mem.h — mem/'s face: where blocks come from. The arena (the one address range holding every
 * strategy block), the page map (who owns each page outside it), the size classes, and the
 * superblock (superblock.h). The layers above include this header only. */
#ifndef HL_MEM_H
#define HL_MEM_H

#include "base.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* ---- arena.c: the address range holding every strategy block ------------------------------ */

void hl_arena_init(void);               /* reserve arena_reserve bytes of address space */
/* size a multiple of HL_PAGE, align a power of two; counted in A as `use`. NULL (ENOMEM) when
 * full. */
void *hl_arena_alloc(size_t size, size_t align, enum hl_os_use use);
/* Back to the OS; the range is kept for reuse. */
void hl_arena_free(void *p, size_t size, enum hl_os_use use);
void hl_arena_fork(int phase);          /* 0 prepare, 1 parent, 2 child */
/* `hugepages` (config.h): the mode in effect; the number of the arena's 2 MiB regions on huge
 * pages now (AnonHugePages of its VMAs in /proc/self/smaps; 0 under off; stats.c reads it
 * through hl_stats_huge_fn, which arena.c sets); whether the arena's base is region-aligned. */
int hl_arena_huge_mode(void);
long hl_arena_huge_regions(void);
bool hl_arena_huge_aligned(void);
extern _Atomic uintptr_t hl_arena_base, hl_arena_span;
static inline bool hl_arena_owns(const void *p)
{
    uintptr_t span = atomic_load_explicit(&hl_arena_span, memory_order_acquire);
    return (uintptr_t)p - atomic_load_explicit(&hl_arena_base, memory_order_relaxed) < span;
}

/* ---- pagemap.c: which mechanism owns each OS page outside the arena ------------------------ */

enum hl_owner { HL_OWNER_NONE = 0, HL_OWNER_LARGE, HL_OWNER_STRATEGY };
/* Mark [p, p + size) as owner's. false (and no page marked) when the OS refused memory for the
 * page map; clearing (HL_OWNER_NONE) never fails. */
bool hl_pagemap_set(const void *p, size_t size, enum hl_owner owner);
/* Map ahead the page map's memory for any one range of size bytes, so that the next set of
 * such a range cannot fail; false when the OS refused it. */
bool hl_pagemap_prepare(size_t size);
/* Who owns p: HL_OWNER_STRATEGY inside the arena, else the page map's entry for p's page
 * (HL_OWNER_LARGE, or HL_OWNER_NONE for memory hoardlab never handed out). */
enum hl_owner hl_pagemap_get(const void *p);

/* ---- sizeclass.c: request size -> class ------------------------------------------------- */

#define HL_MAX_CLASSES 512
struct hl_classes {
    unsigned count;                      /* classes 0 .. count-1 */
    size_t   granules;                   /* entries of of16 */
    size_t   size[HL_MAX_CLASSES];       /* block size of each class, multiples of 16 */
    uint16_t of16[];                     /* class of a request of (n+15)/16 granules */
};
/* Build the table selected by size_classes / size_class_base up to max_size (inclusive). */
int hl_classes_init(size_t max_size);
extern const struct hl_classes *hl_classes;
static inline unsigned hl_class_of(size_t n) { return hl_classes->of16[(n + 15) >> 4]; }
static inline size_t hl_class_size(unsigned c) { return hl_classes->size[c]; }

#pragma GCC visibility pop

#include "superblock.h"

#endif
