/* remote.c — remote frees: a block freed by a thread whose heap does not own the block's
 * superblock. The `remote_free` key chooses how it reaches the owner heap (ownership, hoard):
 *
 *   lock   the paper: lock the owner heap and put the block back into its superblock
 *          (heap.h's free paths; nothing here).
 *   list   one CAS pushes the block onto its superblock's `remote` list. The push that finds
 *          the list not yet announced (bit 0 clear) also pushes the superblock onto the owner
 *          heap's `inbox`, so the owner learns of it without scanning its superblocks.
 *   queue  the block goes into a small buffer of the freeing thread, one per destination heap
 *          (direct-mapped by heap number); a full buffer, or one whose slot another heap
 *          needs, is posted to the owner heap's `inbox` as a chain in one CAS.
 *
 * remote_queue_cap = N > 0 bounds the queue (Hoard #98's bounded queue): a free that finds
 * N or more blocks posted to the owner's inbox and not yet collected takes the `lock` path
 * instead, for that block. Blocks still in freeing threads' buffers are not in the inbox
 * yet, and a post adds up to BATCH at once, so the inbox holds fewer than N + BATCH blocks
 * per thread posting at the same moment: the bound is on what the owner finds, not a ring of
 * N slots (the queue is a chain of posts, so a ring would be another structure).
 *
 * Until collected, a pending block stays counted in its superblock's `used` and the owner's
 * u (so a superblock with pending blocks is never empty, released, or re-formatted), and in
 * A; it is out of U (the freeing thread counts the free at once) and in `remote_pending`.
 *
 * A collected list goes back into its superblock, whose free list it joins at its tail (the
 * list is walked to find it), unless hl_remote_adopt takes it whole, unwalked: with tlab =
 * on, the collecting thread's TLAB when it fills from that heap (tlab.h).
 *
 * When pending frees are collected (hl_remote_collect, always under the heap's lock):
 *   - on the owner heap's slow paths: a malloc that finds no room in its class, or whose
 *     superblock changes fullness group (e.g. fills up: "when it needs blocks of that
 *     superblock"), a free that takes the general path (heap.c);
 *   - and at the latest every HL_COLLECT_EVERY (64) mallocs of the owner heap (a countdown in
 *     its malloc fast path), so a superblock whose blocks are all pending is empty again, and
 *     hoard's threshold has acted on it, within 64 of the owner's mallocs;
 *   - by the freeing thread, for the owner, when what is pending reaches a limit (help_at,
 *     help_bytes below), so pending memory stays bounded whatever the owner does;
 *   - a heap giving superblocks away (hoard's global heap, hoard.c's take_from) collects first;
 *   - a thread's exit collects its own heap; a heap left by an exited thread is collected
 *     by the next thread that takes it, on the same terms as its own;
 * Blocks still in a freeing thread's queue buffer wait for that thread: at most SLOTS x BATCH
 * of them, posted when a buffer fills, when the thread's malloc takes its slow path, and
 * when the thread exits.
 *
 * A superblock may change owner while blocks of it are pending (hoard moves superblocks to
 * the global heap). Collection checks the owner under the collector's lock (an owner changes
 * only under the old owner's lock) and forwards what is no longer its own to the current
 * owner's inbox, lock-free, so no lock is taken inside another and nothing is stranded.
 *
 * Both lists only ever gain by CAS push and lose everything at once by exchange, so there
 * is no ABA. Fork: no lock is involved; a thread other than the forking one dies in the
 * child in the middle of a push at worst, which leaves its block pending for ever there (a
 * leak in the child, never a corrupt list), and its queue buffers are lost with it (leaked).
 */
#include <stdlib.h>
#include "remote.h"
#include "lfstack.h"

int hl_remote_mode;                      /* HL_REMOTE_* (config.h) */
bool (*hl_remote_adopt)(struct hl_heap *h, struct hl_sb *sb, void *head, uint32_t n);

#define SLOTS 8                          /* queue: destination heaps buffered per thread */
#define BATCH 32                         /* queue: blocks per post */

/* list: a superblock's `remote` word is the top block (bits 4..47; blocks are 16-aligned and
 * the arena lies below 2^47), the number of blocks on the list (bits 48..63, saturating) and
 * ANNOUNCED (bit 0), so one CAS pushes a block, counts it and tells whether to announce. */
#define ANNOUNCED   ((uintptr_t)1)
#define COUNT_SHIFT 48
#define COUNT_MAX   ((uintptr_t)0xffff)
#define TOP(word)   ((void *)((word) & (((uintptr_t)1 << COUNT_SHIFT) - 16)))

/* Pending frees the owner has not collected are free memory Hoard's threshold cannot see.
 * To keep them bounded whatever the owner does, the freeing thread collects for it (under
 * its lock, once per many frees) when they reach: list, f x capacity blocks in one
 * superblock (help_at, per class), so pending memory stays below f x a in every heap; queue,
 * max(K, 1) x S bytes posted to one heap (help_bytes). */
static uint32_t *help_at;
static size_t help_bytes;
static uint32_t queue_cap;               /* remote_queue_cap; 0: unbounded */

struct outbox { struct hl_heap *heap; void *head, *tail; uint32_t n; size_t bytes; };
static HL_TLS struct outbox outbox[SLOTS];

void hl_remote_init(void)
{
    hl_remote_mode = hl_cfg.remote_free;
    help_at = hl_meta_alloc(hl_classes->count * sizeof *help_at);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        double n = (double)hl_sb_capacity_of(c) * hl_cfg.empty_fraction;
        help_at[c] = n < 1 ? 1 : n > COUNT_MAX ? (uint32_t)COUNT_MAX : (uint32_t)n;
    }
    queue_cap = (uint32_t)hl_cfg.remote_queue_cap;
    help_bytes = (hl_cfg.release_threshold ? (size_t)hl_cfg.release_threshold : 1) * hl_sb_size;
}

static inline void *next_of(void *p) { return *(void **)p; }

/* Push the chain head .. tail onto *stack (a heap's inbox), linking tail to the old top: the
 * generic stack's push (lfstack.h), its release CAS publishing the chain to the collector. */
static void push_chain(_Atomic uintptr_t *stack, void *head, void **tail_link)
{
    HL_COUNT(cas_attempts, 1);
    HL_COUNT(cas_free_attempts, 1);
    unsigned fails = hl_lfs_push_chain((_Atomic(void *) *)stack, head,
                                       (_Atomic(void *) *)tail_link);
    if (hl_unlikely(fails)) {
        HL_COUNT(cas_retries, fails);
        HL_COUNT(cas_free_retries, fails);
    }
}

static void announce(struct hl_sb *sb)
{
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    push_chain(&h->inbox, sb, (void **)&sb->inbox_next);
}

/* queue: the chain head .. tail of n blocks, `bytes`, to h's inbox, counted in h's
 * inbox_bytes (and inbox_blocks, with a remote_queue_cap); true when they have reached
 * help_bytes. */
static bool send(struct hl_heap *h, void *head, void *tail, uint32_t n, size_t bytes)
{
    if (queue_cap)                       /* counted only where a bound reads it */
        atomic_fetch_add_explicit(&h->inbox_blocks, n, memory_order_relaxed);
    push_chain(&h->inbox, head, (void **)tail);
    return atomic_fetch_add_explicit(&h->inbox_bytes, bytes, memory_order_relaxed) + bytes
           >= help_bytes;
}

static void collect_for(struct hl_heap *h)
{
    hl_heap_lock(h);
    hl_remote_collect(h);
    hl_heap_unlock(h);
}

/* may_help: the caller holds no lock, so it may collect for the heap it posted to. */
static void post(struct outbox *o, bool may_help)
{
    struct hl_heap *h = o->heap;
    bool help = send(h, o->head, o->tail, o->n, o->bytes);
    o->heap = NULL;
    o->n = 0;
    o->bytes = 0;
    if (help && may_help) collect_for(h);
}

/* list: one CAS puts p on sb's list; the push that finds it unannounced announces sb. Once
 * p is on the list, sb may be collected, emptied and re-formatted at any moment unless this
 * push announces it, so what the help needs is read before. */
static void push_block(struct hl_sb *sb, void *p)
{
    _Atomic uintptr_t *list = &sb->remote;
    uintptr_t help = help_at[sb->cls];
    struct hl_heap *owner = atomic_load_explicit(&sb->owner, memory_order_relaxed);
    uintptr_t old = atomic_load_explicit(list, memory_order_relaxed), n;
    HL_COUNT(cas_attempts, 1);
    HL_COUNT(cas_free_attempts, 1);
    for (;;) {
        n = (old >> COUNT_SHIFT) + ((old >> COUNT_SHIFT) < COUNT_MAX);
        *(void **)p = TOP(old);
        /* acq_rel: the collector's exchange that emptied the list happens before this push,
         * so its last reads of sb->inbox_next come before our announce writes it. */
        if (atomic_compare_exchange_weak_explicit(list, &old,
                                                  (uintptr_t)p | n << COUNT_SHIFT | ANNOUNCED,
                                                  memory_order_acq_rel, memory_order_relaxed))
            break;
        HL_COUNT(cas_retries, 1);
        HL_COUNT(cas_free_retries, 1);
    }
    if (!(old & ANNOUNCED)) {            /* the list was empty: p is its last block; the */
        atomic_store_explicit(&sb->remote_tail, p, memory_order_relaxed);  /* announce's */
        announce(sb);                    /* release CAS publishes it to the collector */
    }
    /* The owner read before the push: if sb moved since, its new owner collects it, and
     * collecting a heap that has nothing pending costs an exchange. Heaps are never freed. */
    if (hl_unlikely(n == help)) collect_for(owner);
}

static void free_locked(struct hl_sb *sb, void *p);

void hl_remote_free(struct hl_sb *sb, void *p)
{
    if (HL_INVARIANT_CHECKS) hl_sb_check_block(sb, p, "free");
    size_t size = sb->size;
    HL_COUNT(remote_frees, 1);
    HL_COUNT(remote_pending, size);
    hl_stats_free(size);
    if (hl_remote_mode == HL_REMOTE_LIST) {
        push_block(sb, p);
        return;
    }
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_relaxed);
    if (queue_cap &&
        atomic_load_explicit(&h->inbox_blocks, memory_order_relaxed) >= queue_cap) {
        free_locked(sb, p);
        return;
    }
    struct outbox *o = &outbox[h->index % SLOTS];
    if (o->heap != h) {
        if (o->n) post(o, true);
        o->heap = h;
    }
    if (o->n == 0) o->tail = p;
    *(void **)p = o->head;               /* the first block's link is set when posted */
    o->head = p;
    o->bytes += size;
    if (++o->n == BATCH || hl_me.state != 1) post(o, true);   /* past its exit hook: at once */
}

void hl_remote_flush(void)
{
    for (unsigned i = 0; i < SLOTS; i++)
        if (outbox[i].n) post(&outbox[i], false);
}

/* ---- collection, under the lock of h ------------------------------------------------------ */

/* sb, which h owns, got n blocks back (head .. tail): settle its list and run the policy. */
static void returned(struct hl_heap *h, struct hl_sb *sb, void *head, void *tail, uint32_t n)
{
    if (HL_INVARIANT_CHECKS)
        for (void *p = head; ; p = next_of(p)) {
            hl_sb_check_free(sb, p);
            if (p == tail) break;
        }
    hl_sb_push_chain(sb, head, tail, n);
    h->cls[sb->cls].acct->u -= (size_t)n * sb->size;
    h->nempty += sb->used == 0;
    HL_COUNT(remote_pending, (uint64_t)0 - (uint64_t)n * sb->size);
    if (hl_heap_must_regroup(sb)) hl_heap_regroup(h, sb);
    else hl_heap_to_front(h, sb);
    if (hl_heap_policy_due(h, sb)) hl_heap_after_free(h, sb);
}

/* queue full (remote_queue_cap): p straight into its superblock under the owner's lock, as
 * remote_free = lock does; counted pending a moment, like a block collected at once. */
static void free_locked(struct hl_sb *sb, void *p)
{
    struct hl_heap *h = hl_heap_lock_owner(sb);
    returned(h, sb, p, p, 1);
    hl_heap_unlock(h);
}

static bool owns(const struct hl_heap *h, const struct hl_sb *sb)
{
    return atomic_load_explicit(&sb->owner, memory_order_relaxed) == h;
}

/* list: the announced superblocks. One that left h keeps its ANNOUNCED bit and moves on to
 * its owner's inbox; h's own give their whole list back. */
static void collect_lists(struct hl_heap *h, struct hl_sb *sb)
{
    while (sb) {
        struct hl_sb *next = sb->inbox_next;
        if (!owns(h, sb)) {
            announce(sb);
        } else {
            /* The tail first: until the exchange empties the list no push can set another. */
            void *tail = atomic_load_explicit(&sb->remote_tail, memory_order_relaxed);
            uintptr_t list = atomic_exchange_explicit(&sb->remote, 0, memory_order_acq_rel);
            void *head = TOP(list);
            uint32_t n = (uint32_t)(list >> COUNT_SHIFT);
            /* Its count and tail known, the list is not walked: taken whole into a TLAB (its
             * blocks are read when handed out), or back into sb at once. */
            if (!HL_INVARIANT_CHECKS && n < COUNT_MAX) {
                if (hl_remote_adopt && hl_remote_adopt(h, sb, head, n))
                    HL_COUNT(remote_pending, (uint64_t)0 - (uint64_t)n * sb->size);
                else
                    returned(h, sb, head, tail, n);
                sb = next;
                continue;
            }
            n = 1;
            tail = head;
            while (next_of(tail)) {
                tail = next_of(tail);
                if (hl_unlikely(++n > sb->capacity)) {
                    hl_say("remote list of superblock %p has more blocks than it holds: a "
                           "block was freed twice", (void *)sb);
                    abort();
                }
            }
            returned(h, sb, head, tail, n);
        }
        sb = next;
    }
}

/* queue: the posted blocks back into their superblocks, or on to their current owner; each
 * run of blocks of one superblock (a thread tends to free neighbours) in one step. */
static void collect_blocks(struct hl_heap *h, void *p)
{
    size_t bytes = 0;
    uint32_t blocks = 0;
    while (p) {
        struct hl_sb *sb = hl_sb_of(p);
        void *tail = p, *next = next_of(p);
        uint32_t n = 1;
        for (; next && hl_sb_of(next) == sb; n++) next = next_of(tail = next);
        bytes += (size_t)n * sb->size;
        blocks += n;
        if (owns(h, sb)) {
            returned(h, sb, p, tail, n);
        } else {                         /* its superblock left h: on to the owner */
            struct hl_heap *to = atomic_load_explicit(&sb->owner, memory_order_acquire);
            send(to, p, tail, n, (size_t)n * sb->size);
        }
        p = next;
    }
    atomic_fetch_sub_explicit(&h->inbox_bytes, bytes, memory_order_relaxed);
    if (queue_cap) atomic_fetch_sub_explicit(&h->inbox_blocks, blocks, memory_order_relaxed);
}

void hl_remote_collect(struct hl_heap *h)
{
    uintptr_t all = atomic_exchange_explicit(&h->inbox, 0, memory_order_acquire);
    if (hl_remote_mode == HL_REMOTE_LIST) collect_lists(h, (struct hl_sb *)all);
    else collect_blocks(h, (void *)all);
}

void hl_remote_thread_exit(struct hl_thread *t)
{
    if (hl_remote_mode == HL_REMOTE_LOCK) return;
    hl_remote_flush();
    struct hl_heap *h = t->heap;
    if (h && hl_remote_pending(h)) collect_for(h);
}
