/* superblock.c — S-aligned superblocks of one size class: get from / give back to the OS,
 * (re-)format for a class, holes (purge_holes), and the checks build's header and free-list
 * verification. The hot operations (pop, push, finding the header) are inline in
 * superblock.h.
 *
 * Holes (purge_holes = on; holes.c says when). A superblock that still holds live blocks
 * may have whole pages of free ones ("spread survivors": a burst freed but one block in 32).
 * Such a page is given back to the OS, and the free list, which lives in the free blocks'
 * first words, survives so: a unit (a page; S / 64 above S = 256 KiB, so that one 64-bit
 * mask `holes` covers a superblock) is purgeable when every carved block that overlaps it is
 * on the free list (or, starting in a hole already, off it); purging it takes every free
 * block that STARTS in it off the list and sets its bit; a free block that starts before it
 * and reaches into it stays on the list (its link is in the unit before; what it loses is
 * its tail, which a free block may lose). So no link lives in a hole, and while bit u is set
 * every carved block starting in unit u is free and off the list: taking the hole back
 * (hl_sb_unhole, malloc's slow branch when the free list runs dry, before carving) clears the
 * bit and links those blocks again, writing their links into a page the kernel gives back
 * zeroed (MADV_DONTNEED, or MADV_FREE once reclaimed) or as it was. A block handed out that
 * reaches into a hole writes there as any program writes to memory it owns. Only classes of
 * blocks no larger than a unit (a block then starts in every unit); the header's unit
 * stays; only units wholly below the carved end (the blocks that start in a hole are carved
 * ones, and stay the same while blocks are carved past it; units past the carved end were
 * never carved: never resident, but for a re-formatted superblock's). local_free's blocks
 * (free_lists = sharded) join the free list first; the remote list's count as live (they
 * are in `used` until the owner collects them). */
#include <stdlib.h>
#include <sys/mman.h>
#include "superblock.h"

size_t hl_sb_size;
uintptr_t hl_sb_mask;
int hl_sb_fifo;
int hl_sb_sharded;
uintptr_t hl_sb_slot_base;
size_t hl_sb_hole_unit;
unsigned hl_sb_hole_shift;

void hl_sb_init(void)
{
    hl_sb_size = hl_cfg.superblock_size;
    hl_sb_mask = ~(uintptr_t)(hl_sb_size - 1);
    hl_sb_fifo = hl_cfg.free_list == HL_LIST_FIFO;
    hl_sb_sharded = hl_cfg.free_lists == HL_FREE_LISTS_SHARDED;
    /* sharded's combinations (docs/config.md, sharded.h): its thread_free list is the
     * superblock's list of remote_free = list, and its lists are LIFO as mimalloc's. */
    if (hl_sb_sharded && hl_cfg.remote_free != HL_REMOTE_LIST)
        hl_die("free_lists = sharded: other threads' frees go onto the superblock's thread_free "
               "list, which is remote_free = list's; set remote_free = list (not %s)",
               hl_remote_frees[hl_cfg.remote_free]);
    if (hl_sb_sharded && hl_sb_fifo)
        hl_die("free_lists = sharded keeps LIFO lists (mimalloc's); free_list = fifo does not "
               "combine with it: set free_list = lifo");
    hl_sb_hole_unit = hl_sb_size / 64 > HL_PAGE ? hl_sb_size / 64 : HL_PAGE;
    hl_sb_hole_shift = (unsigned)__builtin_ctzl(hl_sb_hole_unit);
    if (hl_sb_capacity_of(hl_classes->count - 1) == 0)
        hl_die("superblock_size %zu holds no block of %zu bytes; lower large_threshold",
               hl_sb_size, hl_class_size(hl_classes->count - 1));
}

_Atomic uint64_t hl_sb_generation;
static void generation_move(void)
{
    atomic_fetch_add_explicit(&hl_sb_generation, 1, memory_order_release);
}

void hl_sb_format(struct hl_sb *sb, unsigned c)
{
    bool reclassed = sb->magic == HL_SB_MAGIC && sb->cls != c;
    hl_sb_holes_clear(sb);               /* nothing carved: the holes are forgotten */
    sb->free_head = sb->free_tail = sb->local_free = NULL;
    sb->size = (uint32_t)hl_class_size(c);
    sb->capacity = hl_sb_capacity_of(c);
    sb->used = sb->carved = 0;
    sb->holes_used = UINT32_MAX;
    sb->cls = (uint16_t)c;
    atomic_store_explicit(&sb->interior, 0, memory_order_relaxed);
    __atomic_store_n(&sb->tlab_slot, hl_sb_slot_base + hl_cache_slot(c), __ATOMIC_RELAXED);
    sb->magic = HL_SB_MAGIC;
    if (reclassed) generation_move();
}

struct hl_sb *hl_sb_new(unsigned c)
{
    struct hl_sb *sb = hl_arena_alloc(hl_sb_size, hl_sb_size, HL_OS_HELD);
    if (!sb) return NULL;
    sb->next = sb->prev = NULL;
    atomic_store_explicit(&sb->owner, NULL, memory_order_relaxed);
    atomic_store_explicit(&sb->remote, 0, memory_order_relaxed);
    sb->inbox_next = NULL;
    atomic_store_explicit(&sb->remote_tail, NULL, memory_order_relaxed);
    sb->parked = 0;
    sb->parked_at = 0;                   /* (holes.c: also when holes were last purged) */
    sb->holes = 0;
    hl_sb_format(sb, c);
    return sb;
}

void *hl_sb_memalign(void *(*alloc)(size_t), size_t align, size_t size)
{
    char *b = alloc(size + align - HL_ALIGN);
    if (!b) return NULL;
    char *q = (char *)hl_align_up((uintptr_t)b, align);
    if (q != b) {                        /* (moved each time: a second thread may see
                                          * interior set before the first has moved it) */
        atomic_store_explicit(&hl_sb_of(b)->interior, 1, memory_order_relaxed);
        __atomic_store_n(&hl_sb_of(b)->tlab_slot, hl_sb_slot_base + HL_CACHE_BYPASS,
                         __ATOMIC_RELAXED);
        generation_move();
    }
    return q;
}

void hl_sb_release(struct hl_sb *sb)
{
    hl_sb_holes_clear(sb);
    sb->magic = 0;
    generation_move();
    hl_arena_free(sb, hl_sb_size, HL_OS_HELD);
}

/* ---- holes (purge_holes) ------------------------------------------------------------------ */

void hl_sb_holes_clear(struct hl_sb *sb)
{
    if (!sb->holes) return;
    atomic_fetch_sub_explicit(&hl_stats_holes,
                              (size_t)__builtin_popcountll(sb->holes) * hl_sb_hole_unit,
                              memory_order_relaxed);
    sb->holes = 0;
}

static uint32_t hole_blocks(const struct hl_sb *sb);

/* The carved blocks that start in unit u: [*i0, *i1]; false if none. */
static bool unit_starts(const struct hl_sb *sb, unsigned u, uint32_t *i0, uint32_t *i1)
{
    size_t lo = (size_t)u << hl_sb_hole_shift, size = sb->size;      /* u >= 1: lo > header */
    size_t first = (lo - HL_SB_HEADER + size - 1) / size;
    size_t last = (lo + hl_sb_hole_unit - 1 - HL_SB_HEADER) / size;
    if (last >= sb->carved) last = (size_t)sb->carved - 1;
    if (!sb->carved || first > last) return false;
    *i0 = (uint32_t)first;
    *i1 = (uint32_t)last;
    return true;
}

/* madvise the units of mask r (bit 0 never set), one call per run. */
static void advise_runs(struct hl_sb *sb, uint64_t r, int advice)
{
    while (r) {
        unsigned u = (unsigned)__builtin_ctzll(r), n = (unsigned)__builtin_ctzll(~(r >> u));
        hl_os_madvise((char *)sb + ((size_t)u << hl_sb_hole_shift),
                      (size_t)n << hl_sb_hole_shift, advice);
        r &= ~(((1ull << n) - 1) << u);
    }
}

size_t hl_sb_purge_holes(struct hl_sb *sb, int advice, bool again)
{
    size_t size = sb->size, unit = hl_sb_hole_unit;
    unsigned shift = hl_sb_hole_shift;
    sb->holes_used = sb->used;
    if (size > unit || !sb->carved) return 0;
    if (sb->local_free) {                /* free_lists = sharded: one list (both LIFO) */
        void **link = &sb->free_head;
        while (*link) link = (void **)*link;
        *link = sb->local_free;
        sb->local_free = NULL;
    }
    if (!sb->free_head && !sb->holes) return 0;
    uintptr_t base = (uintptr_t)sb;
    size_t end = HL_SB_HEADER + (size_t)sb->carved * size;      /* the carved end (offset) */
    /* units wholly below the carved end: the blocks that start in a hole are then fixed,
     * whatever is carved later (sharded.c carves while holes remain) */
    if (end >> shift < 2) return 0;
    unsigned last = (unsigned)(end >> shift) - 1;
    uint32_t nfree[64] = { 0 };          /* free carved blocks overlapping each unit */
    for (const void *p = sb->free_head; p; p = *(void *const *)p) {
        size_t off = (uintptr_t)p - base;
        unsigned a = (unsigned)(off >> shift), b = (unsigned)((off + size - 1) >> shift);
        nfree[a]++;
        if (b != a) nfree[b]++;
    }
    /* the blocks off the list that start in a hole are free too (and the last may reach
     * into the next unit) */
    for (uint64_t h = sb->holes; h; h &= h - 1) {
        unsigned u = (unsigned)__builtin_ctzll(h);
        uint32_t i0, i1;
        if (!unit_starts(sb, u, &i0, &i1)) continue;
        nfree[u] += i1 - i0 + 1;
        if (u < last && HL_SB_HEADER + ((size_t)i1 + 1) * size > (size_t)(u + 1) << shift)
            nfree[u + 1]++;
    }
    uint64_t all = 0;                    /* the units whose blocks are all free, holes too */
    for (unsigned u = 1; u <= last; u++) {
        size_t lo = (size_t)u << shift;
        size_t first = (lo - HL_SB_HEADER) / size;
        size_t lastb = (lo + unit - 1 - HL_SB_HEADER) / size;
        if (lastb >= sb->carved) lastb = (size_t)sb->carved - 1;
        if (nfree[u] == lastb - first + 1) all |= 1ull << u;
    }
    /* (a hole is advised again only while so: a block that starts before it may have been
     * handed out since, and written there) */
    uint64_t m = all & ~sb->holes;
    if (!m) {
        if (again && all) advise_runs(sb, all, advice);
        return 0;
    }
    /* the blocks that start in the new holes leave the list (order kept: FIFO's too) */
    void **link = &sb->free_head, *tail = NULL;
    for (void *p = sb->free_head; p; p = *(void **)p) {
        if (m >> (((uintptr_t)p - base) >> shift) & 1) continue;
        *link = p;
        link = (void **)p;
        tail = p;
    }
    *link = NULL;
    sb->free_tail = tail;
    advise_runs(sb, again ? all : m, advice);
    sb->holes |= m;
    size_t bytes = (size_t)__builtin_popcountll(m) * unit;
    atomic_fetch_add_explicit(&hl_stats_holes, bytes, memory_order_relaxed);
    if (!sb->free_head) {                /* hl_sb_pop must find a block: one hole back */
        hl_sb_unhole(sb);
        bytes -= unit;
    }
    uint32_t bound = hl_sb_hole_bound(sb);  /* the pop that empties the list regroups */
    if (sb->group_hi > bound) sb->group_hi = bound;
    return bytes;
}

uint32_t hl_sb_hole_bound(const struct hl_sb *sb)
{
    return sb->holes ? sb->carved - hole_blocks(sb) : sb->capacity;
}

void *hl_sb_unhole(struct hl_sb *sb)
{
    while (sb->holes && !sb->free_head) {
        unsigned u = (unsigned)__builtin_ctzll(sb->holes);
        sb->holes &= sb->holes - 1;
        atomic_fetch_sub_explicit(&hl_stats_holes, hl_sb_hole_unit, memory_order_relaxed);
        uint32_t i0, i1;
        if (!unit_starts(sb, u, &i0, &i1)) continue;
        char *first = (char *)sb + HL_SB_HEADER + (size_t)i0 * sb->size, *b = first;
        for (uint32_t i = i0; i < i1; i++, b += sb->size) *(void **)b = b + sb->size;
        *(void **)b = NULL;
        sb->free_head = first;
        sb->free_tail = b;
    }
    return sb->free_head;
}

/* Checks build: the carved blocks that start in sb's holes (free, off the lists). */
static uint32_t hole_blocks(const struct hl_sb *sb)
{
    uint32_t n = 0, i0, i1;
    for (uint64_t h = sb->holes; h; h &= h - 1)
        if (unit_starts(sb, (unsigned)__builtin_ctzll(h), &i0, &i1)) n += i1 - i0 + 1;
    return n;
}

static bool in_hole(const struct hl_sb *sb, const void *p)
{
    return sb->holes >> (((uintptr_t)p - (uintptr_t)sb) >> hl_sb_hole_shift) & 1;
}

void hl_sb_check_block(const struct hl_sb *sb, const void *p, const char *what)
{
    if (sb->magic != HL_SB_MAGIC) {
        hl_say("check failed: %s(%p): superblock %p has no valid header", what, p, (void *)sb);
        abort();
    }
    uintptr_t off = (uintptr_t)p - (uintptr_t)sb;
    if (off < HL_SB_HEADER || (off - HL_SB_HEADER) % sb->size ||
        (off - HL_SB_HEADER) / sb->size >= sb->capacity) {
        hl_say("check failed: %s(%p): not a block of superblock %p (class %u, %u bytes)",
               what, p, (void *)sb, sb->cls, sb->size);
        abort();
    }
}

void hl_sb_check_free(const struct hl_sb *sb, const void *p)
{
    hl_sb_check_block(sb, p, "free");
    if (((uintptr_t)p - (uintptr_t)sb - HL_SB_HEADER) / sb->size >= sb->carved) {
        hl_say("check failed: free(%p): a block superblock %p never handed out", p, (void *)sb);
        abort();
    }
    if (in_hole(sb, p)) {
        hl_say("check failed: free(%p): double free (block is in a hole of superblock %p, "
               "given back to the OS)", p, (void *)sb);
        abort();
    }
    uint32_t n = 0;
    for (const void *q = sb->free_head; q && n <= sb->carved; q = *(void *const *)q, n++)
        if (q == p) {
            hl_say("check failed: free(%p): double free (block is on the free list of "
                   "superblock %p)", p, (void *)sb);
            abort();
        }
    for (const void *q = sb->local_free; q && n <= sb->carved; q = *(void *const *)q, n++)
        if (q == p) {
            hl_say("check failed: free(%p): double free (block is on the local_free list of "
                   "superblock %p)", p, (void *)sb);
            abort();
        }
}

void hl_sb_check(const struct hl_sb *sb)
{
    if (sb->magic != HL_SB_MAGIC || sb->size != hl_class_size(sb->cls) ||
        sb->capacity != hl_sb_capacity_of(sb->cls) || sb->carved > sb->capacity ||
        sb->used > sb->carved) {
        hl_say("check failed: superblock %p header: class %u size %u capacity %u used %u "
               "carved %u", (void *)sb, sb->cls, sb->size, sb->capacity, sb->used, sb->carved);
        abort();
    }
    uint32_t n = hole_blocks(sb);
    const void *last = NULL;
    if (sb->holes & 1 || (sb->holes && sb->size > hl_sb_hole_unit)) {
        hl_say("check failed: superblock %p (class %u): holes %#llx", (void *)sb, sb->cls,
               (unsigned long long)sb->holes);
        abort();
    }
    for (const void *p = sb->free_head; p; p = *(void *const *)p) {
        hl_sb_check_block(sb, p, "free list");
        if (in_hole(sb, p)) {
            hl_say("check failed: superblock %p (class %u): free block %p in a hole",
                   (void *)sb, sb->cls, p);
            abort();
        }
        if (++n > sb->carved) break;
        last = p;
    }
    for (const void *p = sb->local_free; p && n <= sb->carved; p = *(void *const *)p, n++)
        hl_sb_check_block(sb, p, "local_free list");
    if (n != sb->carved - sb->used || (hl_sb_fifo && sb->free_head && sb->free_tail != last)) {
        hl_say("check failed: superblock %p (class %u): %u blocks on its free lists or in "
               "holes, but "
               "carved %u - used %u = %u", (void *)sb, sb->cls, n, sb->carved, sb->used,
               sb->carved - sb->used);
        abort();
    }
}
