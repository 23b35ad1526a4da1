/* arena.c — one reserved address range that holds every block a strategy hands out
 * (superblocks, the single heap's regions), so free() knows a strategy's block by one
 * subtraction and one comparison (front.h) instead of a page-map lookup.
 *
 * At init the range is reserved with MAP_NORESERVE (`arena_reserve` bytes, halved until the
 * kernel agrees): address space only, no memory. Pieces are bump-allocated at any power-of-two
 * alignment and count in A (os.c) from then on; the kernel backs a page when it is first
 * touched, so taking a superblock costs no system call. A piece given back (release_empty)
 * is handed to the kernel with MADV_DONTNEED, leaves A, and is kept on a stack of pieces of
 * its size for the next request of that size and alignment. Large objects live outside the
 * range, in mappings of their own (large.c). */
#include <errno.h>
#include <sys/mman.h>
#include "hl.h"

#define MAX_ALIGN  ((size_t)16 << 20)   /* the largest superblock_size */
#define MIN_RESERVE ((size_t)64 << 20)
#define SIZES 8                         /* distinct sizes of pieces kept for reuse */

_Atomic uintptr_t hl_arena_base, hl_arena_span;

struct piece { uintptr_t addr; struct piece *next; };

static hl_lock lock = HL_LOCK_INIT;
static uintptr_t next, end;
static struct { size_t size; struct piece *top; } kept[SIZES];
static struct piece *spare;             /* unused piece records */

void hl_arena_init(void)
{
    size_t want = hl_cfg.arena_reserve;
    void *raw = MAP_FAILED;
    for (; want >= MIN_RESERVE; want /= 2) {
        raw = hl_os_mmap(want + MAX_ALIGN, MAP_NORESERVE);
        if (raw != MAP_FAILED) break;
    }
    if (raw == MAP_FAILED)
        hl_die("cannot reserve %zu bytes of address space for the arena (arena_reserve)",
               (size_t)hl_cfg.arena_reserve);
    next = hl_align_up((uintptr_t)raw, MAX_ALIGN);
    end = next + want;
    atomic_store_explicit(&hl_arena_base, next, memory_order_relaxed);
    /* Published last: whoever sees the span sees the base (front.h reads span first). */
    atomic_store_explicit(&hl_arena_span, want, memory_order_release);
}

static void *reuse(size_t size, size_t align)
{
    for (unsigned i = 0; i < SIZES; i++) {
        if (kept[i].size != size || !kept[i].top || kept[i].top->addr & (align - 1)) continue;
        struct piece *pc = kept[i].top;
        kept[i].top = pc->next;
        pc->next = spare;
        spare = pc;
        return (void *)pc->addr;
    }
    return NULL;
}

void *hl_arena_alloc(size_t size, size_t align, enum hl_os_use use)
{
    if (align < HL_PAGE) align = HL_PAGE;
    hl_lock_acquire(&lock);
    void *p = reuse(size, align);
    if (!p) {
        uintptr_t at = hl_align_up(next, align);
        /* A growth is an OS call of its own for fault injection (fault.c): the kernel backs
         * the new piece, and running out of the range is the arena's out of memory. */
        if (at > end || end - at < size || hl_fault_now(HL_CALL_ARENA)) {
            hl_lock_release(&lock);
            errno = ENOMEM;
            return NULL;
        }
        next = at + size;
        p = (void *)at;
    }
    hl_lock_release(&lock);
    hl_os_place(p, size);
    hl_os_account(use, (ptrdiff_t)size);
    return p;
}

void hl_arena_free(void *p, size_t size, enum hl_os_use use)
{
    hl_os_madvise(p, size, MADV_DONTNEED);  /* if it fails, the pages stay: no harm */
    hl_os_account(use, -(ptrdiff_t)size);
    hl_lock_acquire(&lock);
    unsigned i = 0;
    while (i < SIZES && kept[i].size && kept[i].size != size) i++;
    if (i < SIZES) {                    /* else: more sizes than slots; the range is lost */
        struct piece *pc = spare;
        if (pc) spare = pc->next;
        else pc = hl_meta_alloc(sizeof *pc);
        kept[i].size = size;
        *pc = (struct piece){ (uintptr_t)p, kept[i].top };
        kept[i].top = pc;
    }
    hl_lock_release(&lock);
}

void hl_arena_fork(int phase)
{
    if (phase == 0) hl_lock_acquire(&lock);
    else if (phase == 1) hl_lock_release(&lock);
    else hl_lock_init(&lock);
}
