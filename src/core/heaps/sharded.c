/* sharded.c — the slow halves of free_lists = sharded (sharded.h has the fast ones and the
 * design): the current superblock's local_free and thread_free, and the choice of the next. */
#include "sharded.h"

/* Bytes of never-used blocks carved onto the free list at once (mimalloc's page extend), so
 * that the fast path, which pops the free list only, serves fresh blocks too. */
#define EXTEND_BYTES 4096

static uint32_t batch_of(const struct hl_sb *sb)
{
    uint32_t n = EXTEND_BYTES / sb->size;
    return n ? n : 1;
}

/* sb's free lists hold fewer than half a batch (carved - used counts free_head and
 * local_free) while blocks are uncarved: a batch of them after the free list's blocks (a short
 * walk), in address order; carved grows, used does not. Without it a malloc-free loop on a
 * superblock whose local_free holds one block would swap that block in at every malloc. */
static void extend_if_short(struct hl_sb *sb)
{
    uint32_t n = batch_of(sb), left = sb->capacity - sb->carved;
    if (!left || sb->carved - sb->used >= (n + 1) / 2) return;
    if (n > left) n = left;
    char *first = (char *)sb + HL_SB_HEADER + (size_t)sb->carved * sb->size, *b = first;
    for (uint32_t i = 1; i < n; i++, b += sb->size) *(void **)b = b + sb->size;
    *(void **)b = NULL;
    void **link = &sb->free_head;
    while (*link) link = (void **)*link;
    *link = first;
    sb->carved += n;
}

/* sb, h's current superblock of class k, has an empty free list: the second list swapped
 * in, else the third taken, then fresh blocks if they are few. False if sb left h meanwhile
 * (h's policy ran on what came back: hl_heap_detach cleared the current superblock). */
static bool refill_lists(struct hl_heap *h, struct hl_heap_class *k, struct hl_sb *sb)
{
    if (sb->local_free) hl_sb_swap_local(sb);
    else if (hl_remote_take(h, sb) && *hl_heap_sharded_sb(k) != sb) return false;
    if (!sb->free_head && hl_unlikely(sb->holes)) hl_sb_unhole(sb);    /* purge_holes */
    extend_if_short(sb);
    return true;
}

void *hl_sharded_alloc(struct hl_heap *h, unsigned c, hl_refill_fn refill)
{
    struct hl_heap_class *k = &h->cls[c];
    for (;;) {
        struct hl_sb *sb = *hl_heap_sharded_sb(k);
        if (sb && (sb->free_head || (refill_lists(h, k, sb) && sb->free_head)))
            return hl_heap_alloc_from(h, sb);
        /* Used up (so in the FULL list) or gone: the next, by Hoard's rule: the fullest with
         * room, else an empty one of the class, each with its lists as they are (a block is
         * on one of them, or uncarved: used < capacity). */
        sb = k->groups ? k->list[63 - __builtin_clzll(k->groups)] : k->list[HL_LIST_EMPTY];
        if (!sb) break;
        *hl_heap_sharded_sb(k) = sb;
    }
    /* An empty superblock of another class, or the refill's: one list (hl_heap_detach). */
    void *p = hl_heap_alloc_empty(h, c);
    if (!p && !(p = refill(h, c))) return NULL;
    struct hl_sb *sb = hl_sb_of(p);
    *hl_heap_sharded_sb(k) = sb;
    extend_if_short(sb);
    return p;
}

static HL_COLD void *malloc_retry(struct hl_heap *h, unsigned c)
{
    h->collect_in = HL_COLLECT_EVERY;
    if (hl_remote_pending(h)) hl_remote_collect(h);     /* the other superblocks' thread_free */
    void *p = hl_sharded_alloc(h, c, hl_heap_refill);
    if (HL_INVARIANT_CHECKS) hl_heap_check(h, -1);
    hl_heap_unlock(h);
    return hl_likely(p != NULL) ? hl_stats_malloc(p, hl_class_size(c)) : NULL;
}

static HL_COLD void *malloc_general(unsigned c)
{
    struct hl_heap *h = hl_heap_mine();
    hl_heap_lock(h);
    return malloc_retry(h, c);
}

static HL_COLD void *malloc_finish(struct hl_heap *h, struct hl_sb *sb, void *p)
{
    size_t size = sb->size;
    hl_heap_regroup(h, sb);
    if (hl_remote_pending(h)) hl_remote_collect(h);     /* on its way to full: blocks back */
    hl_heap_unlock(h);
    return hl_stats_malloc(p, size);
}

static HL_COLD void free_finish(struct hl_heap *h, struct hl_sb *sb, size_t size)
{
    if (hl_heap_must_regroup(sb)) hl_heap_regroup(h, sb);
    if (hl_heap_policy_due(h, sb)) hl_heap_after_free(h, sb);   /* (may give sb away) */
    if (hl_remote_pending(h)) hl_remote_collect(h);
    hl_heap_unlock(h);
    hl_stats_free(size);
}

/* malloc: a block off the current superblock's free_head, under the heap's lock taken at once;
 * anything else (no current superblock, free_head empty, the collection countdown, the lock
 * busy) goes to the slow half. Takes `counted` last (stats.h's HL_MALLOC_PAIR). */
static inline __attribute__((always_inline)) void *sharded_malloc(size_t size, bool counted)
{
    unsigned c = hl_class_of(size);
    struct hl_heap *h = hl_me.heap;
    if (hl_unlikely(HL_INVARIANT_CHECKS || !h || !hl_heap_trylock(h, counted)))
        return malloc_general(c);
    struct hl_heap_class *k = &h->cls[c];
    struct hl_sb *sb = *hl_heap_sharded_sb(k);
    if (hl_unlikely(!sb)) return malloc_retry(h, c);
    void *p = sb->free_head;
    if (hl_unlikely(!p || --h->collect_in == 0)) return malloc_retry(h, c);
    sb->free_head = *(void **)p;
    k->acct->u += sb->size;
    if (hl_unlikely(++sb->used == 1)) h->nempty--;      /* as heap.h's hl_heap_take_block */
    if (hl_unlikely(sb->used >= sb->group_hi)) return malloc_finish(h, sb, p);
    return hl_release_count_if(counted, &h->lock, p, sb->size, false);
}

/* free: another heap's block onto its superblock's thread_free (remote.h); the owner's onto
 * local_free under its heap's lock taken at once, else the general path (heappaths.c, whose
 * hl_heap_free pushes onto local_free too). */
static inline __attribute__((always_inline)) void sharded_free(void *p, bool counted)
{
    struct hl_sb *sb = hl_sb_of(p);
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    struct hl_heap *mine = hl_me.heap;
    if (hl_unlikely(h != mine) && mine) {                /* thread_free */
        hl_remote_free(sb, hl_sb_block(sb, p));
        return;
    }
    if (hl_unlikely(HL_INVARIANT_CHECKS || !mine ||
                    atomic_load_explicit(&sb->interior, memory_order_relaxed) ||
                    !hl_heap_trylock(h, counted))) {
        hl_heap_free_general(p);
        return;
    }
    if (hl_unlikely(atomic_load_explicit(&sb->owner, memory_order_relaxed) != h)) {
        hl_heap_free_retry(h, p);    /* it moved while we locked: the general path */
        return;
    }
    size_t size = sb->size;
    struct hl_account *ac = h->cls[sb->cls].acct;
    hl_sb_push_local(sb, p);
    ac->u -= size;
    if (hl_unlikely(sb->used == 0)) h->nempty++;
    /* as heappaths.h's free: the policy is due below the floor, or on an empty superblock
     * with release_empty */
    if (hl_unlikely(hl_heap_must_regroup(sb) || ac->u < ac->u_floor ||
                    (sb->used == 0 && hl_cfg.release_empty))) {
        free_finish(h, sb, size);
        return;
    }
    hl_release_count_if(counted, &h->lock, NULL, size, true);
}

/* HL_MALLOC_PAIR defines sharded_malloc_path, sharded_malloc_path_entry,
 * sharded_malloc_path_uncounted, sharded_malloc_path_uncounted_entry */
HL_MALLOC_PAIR(static, sharded_malloc_path, sharded_malloc)
/* HL_FREE_PAIR defines sharded_free_path, sharded_free_path_entry, sharded_free_path_uncounted,
 * sharded_free_path_uncounted_entry */
HL_FREE_PAIR(static, sharded_free_path, sharded_free)

const struct hl_paths hl_sharded_paths[2] = {
    HL_PATHS(sharded_malloc_path_uncounted, sharded_free_path_uncounted),
    HL_PATHS(sharded_malloc_path, sharded_free_path),
};

const struct hl_paths *hl_sharded_start(void)
{
    return &hl_sharded_paths[hl_cfg.counting != 0];
}
