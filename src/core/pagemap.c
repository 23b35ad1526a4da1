/* pagemap.c — which mechanism owns each 4 KiB page outside the arena, so free() can route a
 * pointer that is not a strategy block (a large object, or not ours at all) with two loads.
 *
 * A two-level radix table over 48-bit addresses: a static root of 2^18 pointers (untouched
 * pages of it cost nothing) to leaves of 2^18 one-byte entries, mapped on first use. A leaf
 * counts in A (as metadata) by the pages of it that were written: a bitmap after its entries
 * says which, so a page map that marks a few large objects costs a few pages, not 256 KiB a
 * leaf.
 *
 * Entries are relaxed atomics: a large object's pages are cleared by the thread that frees it
 * just before munmap and set again by whichever thread mmap hands the same range next; the
 * kernel orders the two, but only atomics make that a race-free program (ThreadSanitizer). */
#include <sys/mman.h>
#include "hl.h"

#define PM_LEAF_BITS 18
#define PM_ROOT_BITS (48 - 12 - PM_LEAF_BITS)
#define PM_ENTRIES   ((size_t)1 << PM_LEAF_BITS)
#define PM_LEAF_SIZE (PM_ENTRIES + HL_PAGE)    /* the entries, then the written-pages bitmap */

typedef _Atomic uint8_t entry;
static _Atomic(entry *) root[1u << PM_ROOT_BITS];

static entry *leaf_for(uintptr_t page, bool create)
{
    _Atomic(entry *) *slot = &root[(page >> PM_LEAF_BITS) & ((1u << PM_ROOT_BITS) - 1)];
    entry *leaf = atomic_load_explicit(slot, memory_order_acquire);
    if (leaf || !create) return leaf;
    entry *fresh = hl_os_map(PM_LEAF_SIZE, HL_PAGE);
    if (!fresh) hl_die("out of memory for the page map");
    if (atomic_compare_exchange_strong(slot, &leaf, fresh)) {
        hl_os_account(HL_OS_META, HL_PAGE);             /* the bitmap's page */
        return fresh;
    }
    munmap(fresh, PM_LEAF_SIZE);                       /* another thread won the race */
    return leaf;
}

/* Entry i of leaf is about to be written: count its page of the leaf the first time. */
static void written(entry *leaf, size_t i)
{
    _Atomic uint64_t *bits = (_Atomic uint64_t *)(leaf + PM_ENTRIES);
    uint64_t bit = (uint64_t)1 << (i / HL_PAGE % 64);
    _Atomic uint64_t *word = &bits[i / HL_PAGE / 64];
    if (atomic_load_explicit(word, memory_order_relaxed) & bit) return;
    if (!(atomic_fetch_or(word, bit) & bit)) hl_os_account(HL_OS_META, HL_PAGE);
}

void hl_pagemap_set(const void *p, size_t size, enum hl_owner owner)
{
    uintptr_t first = (uintptr_t)p >> 12, last = ((uintptr_t)p + size - 1) >> 12;
    for (uintptr_t page = first; page <= last; page++) {
        entry *leaf = leaf_for(page, true);
        size_t i = page & (PM_ENTRIES - 1);
        if (page == first || i % HL_PAGE == 0) written(leaf, i);
        atomic_store_explicit(&leaf[i], (uint8_t)owner, memory_order_relaxed);
    }
}

enum hl_owner hl_pagemap_get(const void *p)
{
    if (hl_arena_owns(p)) return HL_OWNER_STRATEGY;
    uintptr_t page = (uintptr_t)p >> 12;
    if (page >> (PM_LEAF_BITS + PM_ROOT_BITS)) return HL_OWNER_NONE;
    entry *leaf = leaf_for(page, false);
    return leaf ? (enum hl_owner)atomic_load_explicit(&leaf[page & (PM_ENTRIES - 1)],
                                                      memory_order_relaxed)
                : HL_OWNER_NONE;
}
