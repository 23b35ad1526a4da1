/* singleheap.c — the single heap of the uC++ allocator (uC++/Hoard report §5), shared by
 * `serial` and `concurrent`, which differ only in its locking.
 *
 * The heap is a region carved into blocks from its low end, grown by heap_grow x S bytes at
 * a time (uC++ grew it with sbrk under a global lock). Each size class has a free list of
 * blocks; each block has a 16-byte header naming its class, as uC++'s pointed at its list.
 * malloc pops the class's list or carves a new block; free pushes onto the list.
 *
 * Locking, the one element that differs:
 *   serial      one heap lock around everything.
 *   concurrent  a lock per free list, plus the heap lock only while carving. With padding off
 *               the list heads and their locks are packed as uC++ had them, several to a cache
 *               line (false sharing of allocator metadata); with padding on each has its own. */
#include "mem.h"
#include "singleheap.h"

struct ch_header { uint32_t cls, offset; uint64_t unused; };  /* offset: memalign'd blocks */
struct ch_list { hl_lock lock; void *head, *tail; };  /* tail: fifo only, valid while head is */

static struct {
    bool per_list_locks;
    size_t stride;                      /* bytes between list heads: packed or a cache line */
    char *lists;
    hl_lock heap_lock;
    char *cur, *end;                    /* the uncarved part of the current region */
} ch;

static struct ch_header *header_of(const void *p) { return (struct ch_header *)p - 1; }
static struct ch_list *list_of(unsigned c) { return (struct ch_list *)(ch.lists + c * ch.stride); }

int hl_sh_init(bool per_list_locks)
{
    ch.per_list_locks = per_list_locks;
    ch.stride = hl_cfg.padding ? hl_align_up(sizeof(struct ch_list), HL_CACHE_LINE)
                               : sizeof(struct ch_list);
    ch.lists = hl_meta_alloc(hl_classes->count * ch.stride);
    return 0;
}

/* Under the heap lock. */
static void *carve(unsigned c)
{
    size_t need = sizeof(struct ch_header) + hl_class_size(c);
    if ((size_t)(ch.end - ch.cur) < need) {
        size_t grow = (size_t)hl_cfg.heap_grow * hl_cfg.superblock_size;
        if (grow < need) grow = hl_align_up(need, HL_PAGE);
        char *region = hl_arena_alloc(grow, HL_PAGE, HL_OS_HELD);
        if (!region) return NULL;
        ch.cur = region;                /* the old region's tail (< one block) is left unused */
        ch.end = region + grow;
    }
    struct ch_header *h = (struct ch_header *)ch.cur;
    ch.cur += need;
    h->cls = c;
    h->offset = 0;
    return h + 1;
}

/* Pop and push run under the list's lock; both tell the census which list head they touch. */
static void *pop(struct ch_list *l)
{
    if (hl_unlikely(hl_meta_touched != NULL)) hl_meta_touched(l);
    void *b = l->head;
    if (b) l->head = *(void **)b;
    return b;
}

static void push(struct ch_list *l, void *b)
{
    if (hl_unlikely(hl_meta_touched != NULL)) hl_meta_touched(l);
    if (hl_unlikely(hl_cfg.free_list == HL_LIST_FIFO)) {
        *(void **)b = NULL;
        if (l->head) *(void **)l->tail = b;
        else l->head = b;
        l->tail = b;
        return;
    }
    *(void **)b = l->head;
    l->head = b;
}

/* The lock that guards list l: its own (concurrent) or the heap's (serial). */
static hl_lock *lock_of(struct ch_list *l) { return ch.per_list_locks ? &l->lock : &ch.heap_lock; }

/* Take l's lock; `busy`: the fast path's try already found it held (count that once). */
static void lock_list(struct ch_list *l, bool busy)
{
    if (!busy) {
        hl_lock_acquire(lock_of(l));
        return;
    }
    HL_COUNT(lock_acquisitions, 1);
    HL_COUNT(lock_contended, 1);
    hl_lock_slow(lock_of(l));
}

/* malloc and free in full: blocking locks, carving, observers. The fast paths below handle the
 * common call (the lock free at once, a block on the list, no observer) in straight-line code
 * and come here for anything else. */
/* Class c's list is empty and its lock held: carve a block (under the heap lock). */
static HL_COLD void *malloc_carve(unsigned c)
{
    if (ch.per_list_locks) {
        hl_lock_release(&list_of(c)->lock);
        hl_lock_acquire(&ch.heap_lock);
    }
    void *b = carve(c);
    hl_lock_release(&ch.heap_lock);
    return hl_likely(b != NULL) ? hl_stats_malloc(b, hl_class_size(c)) : NULL;
}

static HL_COLD void *malloc_general(unsigned c, bool busy)
{
    struct ch_list *l = list_of(c);
    lock_list(l, busy);
    void *b = pop(l);
    if (!b) return malloc_carve(c);
    hl_lock_release(lock_of(l));
    return hl_stats_malloc(b, hl_class_size(c));
}

static HL_COLD void free_general(void *p, unsigned c, bool busy)
{
    struct ch_list *l = list_of(c);
    lock_list(l, busy);
    push(l, p);
    hl_lock_release(lock_of(l));
    hl_stats_free(hl_class_size(c));
}

static inline __attribute__((always_inline)) void *sh_malloc(size_t size, bool counted)
{
    unsigned c = hl_class_of(size);
    struct ch_list *l = list_of(c);
    hl_lock *lock = lock_of(l);
    if (hl_unlikely(hl_meta_touched != NULL)) return malloc_general(c, false);
    if (hl_unlikely(!hl_trylock(lock))) return malloc_general(c, true);
    HL_COUNT_IF(counted, lock_acquisitions, 1);
    void *b = l->head;
    if (hl_unlikely(!b)) return malloc_carve(c);
    l->head = *(void **)b;
    return hl_release_count_if(counted, lock, b, hl_class_size(c), false);
}

static inline __attribute__((always_inline)) void sh_free(void *p, bool counted)
{
    struct ch_header *h = header_of(p);
    if (h->offset) {                    /* an aligned block inside a larger one */
        p = (char *)p - h->offset;
        h = header_of(p);
    }
    unsigned c = h->cls;
    struct ch_list *l = list_of(c);
    hl_lock *lock = lock_of(l);
    if (hl_unlikely(hl_meta_touched != NULL || hl_cfg.free_list == HL_LIST_FIFO)) {
        free_general(p, c, false);
        return;
    }
    if (hl_unlikely(!hl_trylock(lock))) {
        free_general(p, c, true);
        return;
    }
    HL_COUNT_IF(counted, lock_acquisitions, 1);
    *(void **)p = l->head;
    l->head = p;
    hl_release_count_if(counted, lock, NULL, hl_class_size(c), true);
}

/* HL_MALLOC_PAIR defines hl_sh_malloc, hl_sh_malloc_entry, hl_sh_malloc_uncounted,
 * hl_sh_malloc_uncounted_entry */
HL_MALLOC_PAIR(, hl_sh_malloc, sh_malloc)
/* HL_FREE_PAIR defines hl_sh_free, hl_sh_free_entry, hl_sh_free_uncounted,
 * hl_sh_free_uncounted_entry */
HL_FREE_PAIR(, hl_sh_free, sh_free)

/* Over-allocate by align and hand out the aligned address inside; its own header records the
 * distance back to the real block. */
void *hl_sh_memalign(size_t align, size_t size)
{
    char *b = hl_sh_malloc(size + align);
    if (!b) return NULL;
    char *q = (char *)hl_align_up((uintptr_t)b, align);
    if (q != b) {
        header_of(q)->cls = header_of(b)->cls;
        header_of(q)->offset = (uint32_t)(q - b);
    }
    return q;
}

size_t hl_sh_usable_size(const void *p)
{
    const struct ch_header *h = header_of(p);
    return hl_class_size(h->cls) - h->offset;
}

/* Fork: the heap lock, then every list lock in class order. */
void hl_sh_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        hl_lock_acquire(&ch.heap_lock);
        if (ch.per_list_locks)
            for (unsigned c = 0; c < hl_classes->count; c++) hl_lock_acquire(&list_of(c)->lock);
        return;
    }
    if (ch.per_list_locks) {
        for (unsigned c = hl_classes->count; c-- > 0; ) {
            if (phase == HL_FORK_PARENT) hl_lock_release(&list_of(c)->lock);
            else hl_lock_init(&list_of(c)->lock);
        }
    }
    if (phase == HL_FORK_PARENT) hl_lock_release(&ch.heap_lock);
    else hl_lock_init(&ch.heap_lock);
}
