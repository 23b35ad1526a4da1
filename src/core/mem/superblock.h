/* superblock.h — the superblock: an S-aligned region of S bytes from the OS whose header sits
 * at its start, so the header of any block is found by masking the block's address. All its
 * blocks are of one size class. Free blocks form a singly linked list through their first
 * word (LIFO or FIFO by the `free_list` key; with free_lists = sharded, two: sharded.h);
 * blocks never handed out yet are carved lazily,
 * so a completely empty superblock is re-formatted for another class in O(1).
 *
 * The header is plain data: whoever holds the owner heap's lock may touch it (heap.c). Only
 * `owner` is read without that lock, by free() finding which heap to lock.
 */
#ifndef HL_SUPERBLOCK_H
#define HL_SUPERBLOCK_H

#include "mem.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

struct hl_heap;

struct hl_sb {
    struct hl_sb *next, *prev;           /* links in the owner heap's list `list` */
    _Atomic(struct hl_heap *) owner;     /* changes only under the old and new owner's lock */
    void *free_head, *free_tail;         /* freed blocks; tail: FIFO only, valid while head is */
    uint32_t size;                       /* block size of the class */
    uint32_t capacity;                   /* blocks that fit */
    uint32_t used;                       /* blocks handed out and not returned here */
    uint32_t carved;                     /* blocks handed out at least once (lazy carving) */
    uint32_t group_lo, group_hi;         /* heap.h: `used` stays in [lo, hi) while in `list` */
    uint16_t cls;                        /* size class */
    uint8_t list;                        /* which of the owner's lists holds it (heap.c) */
    _Atomic uint8_t interior;            /* memalign handed out a pointer inside a block */
    /* tlab.h: where the free fast path finds the bin for the block, a byte offset into the
     * thread's bins: the class's bin, or once `interior` is set the bypass bin (limit 0), so
     * one load replaces both the class and the interior test (a word: the fast path adds
     * it to the bins' address straight from memory: stats.h's HL_WORD_LOAD). */
    uintptr_t tlab_slot;
    uint32_t magic;                      /* HL_SB_MAGIC while formatted (checks build) */
    uint8_t parked;                      /* purge.c: empty in the global heap, kept or purged */
    /* purge.c, timed purges: when it parked (ns), and its links in the list of the parked
     * superblocks kept unpurged. Fits in the line before `remote`: S is not changed. */
    struct hl_sb *purge_next, *purge_prev;
    uint64_t parked_at;
    /* free_lists = sharded (sharded.h): the owner's own frees, kept off `free_head` (the list
     * malloc pops) until that runs dry and this one is swapped in. Out of `used` already. */
    void *local_free;
    /* purge_holes = on (hl_sb_purge_holes): bit i set: hole unit i (hl_sb_hole_unit bytes,
     * a 4 KiB page while S <= 256 KiB) was given back to the OS, and the free blocks that
     * start in it are off the free list (their links were in it). Taken back, lowest first,
     * by malloc's slow branch when the free list runs dry (hl_sb_unhole). */
    uint64_t holes;
    /* remote_free = list (remote.h): blocks other threads freed, not yet back in the free
     * list (still counted in `used`), pushed with one CAS each; bit 0: sb is announced in a
     * heap's inbox (linked through inbox_next). On its own cache line: other threads write
     * it while the owner works on the fields above. remote_tail: the list's last block, set
     * by the push that found it empty (the one that announces), so the collector need not
     * walk the list to find it. */
    _Alignas(HL_CACHE_LINE) _Atomic uintptr_t remote;
    struct hl_sb *inbox_next;
    _Atomic(void *) remote_tail;
    /* purge_holes = on: `used` when its holes were last purged (UINT32_MAX: not since it was
     * formatted), so the purge thread's sweep (holes.c) walks only superblocks freed into
     * since. Here, not above: the line above is full, and this is written only by a purge. */
    uint32_t holes_used;
};

#define HL_SB_MAGIC 0x48534231u          /* "HSB1" */
/* Blocks start here: a whole cache line, so the header never shares a line with a block. */
#define HL_SB_HEADER hl_align_up(sizeof(struct hl_sb), HL_CACHE_LINE)

extern size_t hl_sb_size;                /* S, set by hl_sb_init */
extern uintptr_t hl_sb_mask;             /* ~(S - 1) */
extern int hl_sb_fifo;                   /* free_list == fifo */
extern int hl_sb_sharded;                /* free_lists == sharded (sharded.h) */
/* The TLAB's superblock cache (tlab.h, tlab_sb_cache) keeps a superblock's bin offset
 * (tlab_slot) without re-reading the header; this count moves (release) after every change
 * that makes a kept offset wrong: a formatted superblock given another class, one made
 * interior by memalign, one given back to the arena. A block of the new meaning is handed
 * out after the move, so its free sees the count moved (coherence) and drops its entries. */
extern _Atomic uint64_t hl_sb_generation;

void hl_sb_init(void);                   /* after config: S and the free-list order */

static inline struct hl_sb *hl_sb_of(const void *p)
{
    return (struct hl_sb *)((uintptr_t)p & hl_sb_mask);
}

/* Blocks of class c that fit in one superblock. */
static inline uint32_t hl_sb_capacity_of(unsigned c)
{
    return (uint32_t)((hl_sb_size - HL_SB_HEADER) / hl_class_size(c));
}

/* Bytes of blocks the superblock can hand out: the `a` it contributes to its heap. */
static inline size_t hl_sb_bytes(const struct hl_sb *sb) { return (size_t)sb->capacity * sb->size; }
/* Bytes of blocks in use: the `u` it contributes to its heap (the paper's s.u). */
static inline size_t hl_sb_in_use(const struct hl_sb *sb) { return (size_t)sb->used * sb->size; }

static inline bool hl_sb_full(const struct hl_sb *sb) { return sb->used == sb->capacity; }
static inline bool hl_sb_empty(const struct hl_sb *sb) { return sb->used == 0; }

/* A new superblock from the OS (counted in A, marked in the page map), formatted for class c,
 * owner NULL. NULL when the OS refuses. */
struct hl_sb *hl_sb_new(unsigned c);
/* Give an empty superblock back to the OS. */
void hl_sb_release(struct hl_sb *sb);
/* Re-format an empty superblock for class c: recycling for any size class (Hoard §3). */
void hl_sb_format(struct hl_sb *sb, unsigned c);

/* tlab_slot's values: bin c's byte offset; HL_CACHE_BYPASS the bin after the last class's. */
#define HL_CACHE_BIN_BYTES 16            /* sizeof(struct hl_tlab_bin), asserted in tlab.h */
static inline uintptr_t hl_cache_slot(unsigned c) { return (uintptr_t)c * HL_CACHE_BIN_BYTES; }
#define HL_CACHE_BYPASS hl_cache_slot(hl_classes->count)
/* What tlab_slot stores is hl_sb_slot_base + such an offset: 0 (a TLAB's bins are the
 * thread's), or under cache = cpu CPU 0's slab (cpucache.c), so that the per-CPU cache's
 * free has its entry's address in one load. Set at init, before the first superblock. */
extern uintptr_t hl_sb_slot_base;

/* purge_holes (superblock.c): the unit of a hole, max(4 KiB, S / 64), and its log2. */
extern size_t hl_sb_hole_unit;
extern unsigned hl_sb_hole_shift;
/* Give back to the OS (madvise `advice`) every hole unit of sb (owner's lock held) whose
 * blocks are all free: on the free list (local_free, free_lists = sharded, joins it first) or
 * never carved (the remote list's count as live); blocks that start in one leave the list. Only
 * for classes of blocks no
 * larger than a unit, below the carved end, never the header's unit. again: its earlier
 * holes are advised again too while every block overlapping them is still free
 * (hoardlab_collect's MADV_DONTNEED after a MADV_FREE). The bytes
 * newly given back (counted in hl_stats_holes); holes_used becomes `used`. */
size_t hl_sb_purge_holes(struct hl_sb *sb, int advice, bool again);
/* The free list of sb (owner's lock held) is empty: its lowest holes taken back until one
 * puts a block on the free list, or none is left. The free list's head after (NULL: carve).
 *
 * So that malloc's fast path (hl_sb_pop) gains no instruction, and no call that would give
 * it a stack frame, it never meets a hole: while sb has holes its free list is not empty but
 * for a moment inside a slow path. hl_sb_purge_holes leaves a block on it and lowers
 * group_hi to carved less the blocks in holes (hl_sb_hole_bound; heap.c's set_bounds too),
 * where `used` stands when the free list runs dry, so the pop that empties it is the one
 * that regroups (hl_heap_regroup takes a hole back first); the TLAB's chain (heap.c),
 * sharded.c's refill and a superblock leaving its heap take one back themselves. */
void *hl_sb_unhole(struct hl_sb *sb);
/* carved less the blocks in holes: `used` when the free list is empty (capacity if none). */
uint32_t hl_sb_hole_bound(const struct hl_sb *sb);
/* sb's holes forgotten (format, release): only the gauge moves. */
void hl_sb_holes_clear(struct hl_sb *sb);

/* One block out of a superblock that is not full; used + 1. */
static inline void *hl_sb_pop(struct hl_sb *sb)
{
    void *p = sb->free_head;
    if (p) {
        sb->free_head = *(void **)p;
    } else {                             /* (never while sb has holes: hl_sb_purge_holes) */
        p = (char *)sb + HL_SB_HEADER + (size_t)sb->carved * sb->size;
        sb->carved++;
    }
    sb->used++;
    return p;
}

/* A block back into its superblock; used - 1. */
static inline void hl_sb_push(struct hl_sb *sb, void *p)
{
    if (hl_unlikely(hl_sb_fifo)) {
        *(void **)p = NULL;
        if (sb->free_head) *(void **)sb->free_tail = p;
        else sb->free_head = p;
        sb->free_tail = p;
    } else {
        *(void **)p = sb->free_head;
        sb->free_head = p;
    }
    sb->used--;
}

/* free_lists = sharded: the owner's own free goes onto local_free (LIFO), not the free list
 * malloc pops; used - 1 as hl_sb_push. */
static inline void hl_sb_push_local(struct hl_sb *sb, void *p)
{
    *(void **)p = sb->local_free;
    sb->local_free = p;
    sb->used--;
}

/* free_lists = sharded, free list empty: local_free becomes the free list (mimalloc's swap). */
static inline void hl_sb_swap_local(struct hl_sb *sb)
{
    sb->free_head = sb->local_free;
    sb->local_free = NULL;
}

/* A chain of n blocks (head .. tail, linked through their first word) back into sb at once. */
static inline void hl_sb_push_chain(struct hl_sb *sb, void *head, void *tail, uint32_t n)
{
    if (hl_unlikely(hl_sb_fifo)) {
        *(void **)tail = NULL;
        if (sb->free_head) *(void **)sb->free_tail = head;
        else sb->free_head = head;
        sb->free_tail = tail;
    } else {
        *(void **)tail = sb->free_head;
        sb->free_head = head;
    }
    sb->used -= n;
}

/* Checks build: is p a block boundary of sb? Aborts with a message naming `what` if the
 * header is damaged or p is not. Reads only what stays fixed while sb has live blocks, so a
 * thread that does not hold the owner's lock may call it. */
void hl_sb_check_block(const struct hl_sb *sb, const void *p, const char *what);
/* memalign: a block of size + align - 16 from alloc, and the aligned address inside it. A
 * superblock that ever handed out such an inner pointer is marked, so free and usable_size
 * find the block's start only there and the ordinary path stays free of a division. */
void *hl_sb_memalign(void *(*alloc)(size_t), size_t align, size_t size);

/* The block p lies in: p itself, unless p came from memalign. */
static inline void *hl_sb_block(const struct hl_sb *sb, void *p)
{
    if (hl_likely(!atomic_load_explicit(&sb->interior, memory_order_relaxed))) return p;
    size_t off = (size_t)((char *)p - (char *)sb) - HL_SB_HEADER;
    return (char *)p - off % sb->size;
}

/* Bytes usable from p to the end of its block. */
static inline size_t hl_sb_usable(const void *p)
{
    const struct hl_sb *sb = hl_sb_of(p);
    return sb->size - (size_t)((char *)p - (char *)hl_sb_block(sb, (void *)p));
}

/* Checks build, owner's lock held: p is a block of sb, handed out, and not already on its
 * free list or local_free (double free). */
void hl_sb_check_free(const struct hl_sb *sb, const void *p);
/* Checks build: header fields and free-list length agree (O(capacity)). */
void hl_sb_check(const struct hl_sb *sb);

#pragma GCC visibility pop

#endif
