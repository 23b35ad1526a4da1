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
 * kernel orders the two, but only atomics make that a race-free program (ThreadSanitizer).
 *
 * Mapping a leaf can fail like any mmap: setting an owner then fails (and changes nothing), so
 * the large object is not handed out and malloc returns NULL. Clearing never needs a leaf (an
 * absent leaf reads HL_OWNER_NONE). realloc's mremap cannot fail that way after the block has
 * moved (the old address is gone), so it first asks for spare leaves (hl_pagemap_prepare),
 * mapped ahead; a new leaf is a spare when there is one. */
#include <sys/mman.h>
#include "mem.h"

#define PM_LEAF_BITS 18
#define PM_ROOT_BITS (48 - 12 - PM_LEAF_BITS)
#define PM_ENTRIES   ((size_t)1 << PM_LEAF_BITS)
#define PM_LEAF_SIZE (PM_ENTRIES + HL_PAGE)    /* the entries, then the written-pages bitmap */

#define PM_SPARES    8                         /* covers any range of up to 6 GiB */

typedef _Atomic uint8_t entry;
static _Atomic(entry *) root[1u << PM_ROOT_BITS];
static _Atomic(entry *) spares[PM_SPARES];     /* mapped, not yet a leaf, not counted */

static entry *take_spare(void)
{
    for (unsigned i = 0; i < PM_SPARES; i++) {
        entry *s = atomic_exchange(&spares[i], NULL);
        if (s) return s;
    }
    return hl_os_map(PM_LEAF_SIZE, HL_PAGE);
}

static void keep_spare(entry *leaf)
{
    for (unsigned i = 0; i < PM_SPARES; i++) {
        entry *none = NULL;
        if (atomic_compare_exchange_strong(&spares[i], &none, leaf)) return;
    }
    hl_os_munmap(leaf, PM_LEAF_SIZE);
}

/* The leaf of page; when there is none, a new one if create, else NULL (also when mapping
 * a new one failed). */
static entry *leaf_for(uintptr_t page, bool create)
{
    _Atomic(entry *) *slot = &root[(page >> PM_LEAF_BITS) & ((1u << PM_ROOT_BITS) - 1)];
    entry *leaf = atomic_load_explicit(slot, memory_order_acquire);
    if (leaf || !create) return leaf;
    entry *fresh = take_spare();
    if (!fresh) return NULL;
    if (atomic_compare_exchange_strong(slot, &leaf, fresh)) {
        hl_os_account(HL_OS_META, HL_PAGE);             /* the bitmap's page */
        return fresh;
    }
    keep_spare(fresh);                                 /* another thread won the race */
    return leaf;
}

bool hl_pagemap_prepare(size_t size)
{
    unsigned want = (unsigned)(size >> (PM_LEAF_BITS + 12)) + 2, have = 0;
    if (want > PM_SPARES) return false;
    for (unsigned i = 0; i < PM_SPARES; i++) have += atomic_load(&spares[i]) != NULL;
    for (; have < want; have++) {
        entry *s = hl_os_map(PM_LEAF_SIZE, HL_PAGE);
        if (!s) return false;
        keep_spare(s);
    }
    return true;
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

bool hl_pagemap_set(const void *p, size_t size, enum hl_owner owner)
{
    uintptr_t first = (uintptr_t)p >> 12, last = ((uintptr_t)p + size - 1) >> 12;
    for (uintptr_t page = first; page <= last; page++) {
        entry *leaf = leaf_for(page, owner != HL_OWNER_NONE);
        size_t i = page & (PM_ENTRIES - 1);
        if (!leaf) {
            if (owner == HL_OWNER_NONE) {             /* nothing to clear up to the next leaf */
                page |= PM_ENTRIES - 1;
                continue;
            }
            if (page > first) hl_pagemap_set(p, (page - first) << 12, HL_OWNER_NONE);
            return false;
        }
        if (page == first || i % HL_PAGE == 0) written(leaf, i);
        atomic_store_explicit(&leaf[i], (uint8_t)owner, memory_order_relaxed);
    }
    return true;
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
