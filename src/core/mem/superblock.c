/* superblock.c — S-aligned superblocks of one size class: get from / give back to the OS,
 * (re-)format for a class, and the checks build's header and free-list verification. The
 * hot operations (pop, push, finding the header) are inline in superblock.h. */
#include <stdlib.h>
#include "superblock.h"

size_t hl_sb_size;
uintptr_t hl_sb_mask;
int hl_sb_fifo;
int hl_sb_sharded;
uintptr_t hl_sb_slot_base;

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
    sb->free_head = sb->free_tail = sb->local_free = NULL;
    sb->size = (uint32_t)hl_class_size(c);
    sb->capacity = hl_sb_capacity_of(c);
    sb->used = sb->carved = 0;
    sb->cls = (uint16_t)c;
    atomic_store_explicit(&sb->interior, 0, memory_order_relaxed);
    __atomic_store_n(&sb->tlab_slot, hl_sb_slot_base + hl_tlab_slot(c), __ATOMIC_RELAXED);
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
        __atomic_store_n(&hl_sb_of(b)->tlab_slot, hl_sb_slot_base + HL_TLAB_BYPASS,
                         __ATOMIC_RELAXED);
        generation_move();
    }
    return q;
}

void hl_sb_release(struct hl_sb *sb)
{
    sb->magic = 0;
    generation_move();
    hl_arena_free(sb, hl_sb_size, HL_OS_HELD);
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
    uint32_t n = 0;
    const void *last = NULL;
    for (const void *p = sb->free_head; p; p = *(void *const *)p) {
        hl_sb_check_block(sb, p, "free list");
        if (++n > sb->carved) break;
        last = p;
    }
    for (const void *p = sb->local_free; p && n <= sb->carved; p = *(void *const *)p, n++)
        hl_sb_check_block(sb, p, "local_free list");
    if (n != sb->carved - sb->used || (hl_sb_fifo && sb->free_head && sb->free_tail != last)) {
        hl_say("check failed: superblock %p (class %u): %u blocks on its free lists, but "
               "carved %u - used %u = %u", (void *)sb, sb->cls, n, sb->carved, sb->used,
               sb->carved - sb->used);
        abort();
    }
}
