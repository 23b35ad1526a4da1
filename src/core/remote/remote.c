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
 *   batch  snmalloc's message passing: the block goes into one of the freeing thread's 16
 *          buckets, hashed by owner heap; a bucket is sent whole, one CAS onto the heap's
 *          `inbox`, when it holds remote_batch_bytes, on the thread's malloc slow path and at
 *          its exit; a bucket is built as runs of one superblock's blocks, each saying its
 *          length and end in its first block, so the owner reads two words a run ("batch"
 *          below says how it differs from queue and what is locked).
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
 * When pending frees are collected (hl_remote_collect, always under the heap's lock; under
 * batch with a TLAB the owner's TLAB slow path first drains without it, hl_remote_drain):
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
 * free_lists = sharded (sharded.h) uses the list as its thread_free: the owner also takes a
 * superblock's list itself (hl_remote_take), without the inbox, when the superblock it
 * allocates from runs dry; announcing stays, so the lists of the others are collected as above.
 *
 * Both lists only ever gain by CAS push and lose everything at once by exchange, so there
 * is no ABA. Fork: no lock is involved; a thread other than the forking one dies in the
 * child in the middle of a push at worst, which leaves its block pending for ever there (a
 * leak in the child, never a corrupt list), and its queue buffers are lost with it (leaked),
 * as are the runs a batch drain had taken from the inbox and not yet placed.
 */
#include <stdlib.h>
#include "remote.h"
#include "lfstack.h"

int hl_remote_mode;                      /* HL_REMOTE_* (config.h) */
bool (*hl_remote_adopt)(struct hl_heap *h, struct hl_sb *sb, void *head, void *tail, uint32_t n);

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

/* batch: the freeing thread's remote cache (remote.h's hl_remote_buckets), each bucket sent
 * whole when it holds batch_bytes (remote_batch_bytes). Its `heap` is the heap of its first
 * block; the others may be of any heap that hashes to it (forwarded at collection). A bucket's
 * chain is a sequence of runs, each of blocks of one superblock (newest first): the run's
 * first block's second word says where the run ends and how long it is (RUN_LAST, RUN_N), so
 * the owner settles a run without reading its other blocks (BatchIt, ISMM 2024). Every block
 * is 16-aligned and at least 16 bytes (sizeclass.c), so it has that second word. */
#define RUN_SHIFT 48
#define RUN_MAX ((uint32_t)0xffff)
#define RUN_LAST(w) ((void *)((w) & (((uintptr_t)1 << RUN_SHIFT) - 1)))
#define RUN_N(w) ((uint32_t)((w) >> RUN_SHIFT))
static size_t batch_bytes;
/* The longest run of class c: with a TLAB, a quarter of a bin's first limit (tlab_budget /
 * size), so an owner's empty bin takes three runs whole without its heap's lock
 * (hl_remote_drain: a run goes into a bin only if a free still fits after it); else RUN_MAX. */
static uint32_t *run_cap;
HL_TLS struct hl_remote_bucket hl_remote_buckets[HL_REMOTE_BUCKETS];
static HL_TLS uint32_t bucket_used;      /* bit i: bucket i holds blocks (for the flush) */

void hl_remote_init(void)
{
    hl_remote_mode = hl_cfg.remote_free;
    help_at = hl_meta_alloc(hl_classes->count * sizeof *help_at);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        double n = (double)hl_sb_capacity_of(c) * hl_cfg.empty_fraction;
        help_at[c] = n < 1 ? 1 : n > COUNT_MAX ? (uint32_t)COUNT_MAX : (uint32_t)n;
    }
    /* (hoard202607's own defaults set it: it must not bound batch) */
    queue_cap = hl_remote_mode == HL_REMOTE_QUEUE ? (uint32_t)hl_cfg.remote_queue_cap : 0;
    batch_bytes = hl_cfg.remote_batch_bytes;
    run_cap = hl_meta_alloc(hl_classes->count * sizeof *run_cap);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        size_t n = hl_cfg.tlab ? hl_cfg.tlab_budget / hl_class_size(c) / 4 : RUN_MAX;
        run_cap[c] = n < 1 ? 1 : n > RUN_MAX ? RUN_MAX : (uint32_t)n;
    }
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

/* What a list push leaves out of line: sb's announce (the list was empty: p is its last
 * block; the announce's release CAS publishes remote_tail to the collector), the help (owner;
 * NULL: none), U's publication. Apart, so that the common push saves no register. */
static __attribute__((noinline)) void push_after(struct hl_sb *sb, void *p, bool first,
                                                 struct hl_heap *owner, bool publish)
{
    if (first) {
        atomic_store_explicit(&sb->remote_tail, p, memory_order_relaxed);
        announce(sb);
    }
    /* The owner read before the push: if sb moved since, its new owner collects it, and
     * collecting a heap that has nothing pending costs an exchange. Heaps are never freed. */
    if (owner) collect_for(owner);
    if (publish) hl_stats_publish(NULL, true);
}

/* list, queue: p (a block of sb) checked and counted as a remote free, pending; its size.
 * (batch: remote.h's hl_remote_batch_free.) In their out-of-line frees, so that
 * hl_remote_free only chooses. */
static inline size_t counted(const struct hl_sb *sb, void *p)
{
    if (HL_INVARIANT_CHECKS) hl_sb_check_block(sb, p, "free");
    HL_COUNT(remote_frees, 1);
    HL_COUNT(remote_pending, sb->size);
    return sb->size;
}

/* list: one CAS puts p (size bytes) on sb's list; the push that finds it unannounced
 * announces sb. Once p is on the list, sb may be collected, emptied and re-formatted at any
 * moment unless this push announces it, so what the help needs is read before. */
static __attribute__((noinline)) void push_block(struct hl_sb *sb, void *p)
{
    size_t size = counted(sb, p);
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
    bool first = !(old & ANNOUNCED), publish = hl_stats_count(size, true);
    if (hl_unlikely(first || n == help || publish))
        push_after(sb, p, first, n == help ? owner : NULL, publish);
}

static void free_locked(struct hl_sb *sb, void *p);

/* ---- batch: the freeing thread's remote cache (snmalloc) -----------------------------------
 *
 * How it differs from queue. queue's buffers are direct-mapped by heap number (8 of them) and
 * hold one heap's blocks: a free whose slot holds another heap's posts that buffer first (an
 * eviction), so a thread freeing to 9 heaps in turn posts at every free. batch's 16 buckets
 * are hashed by heap (Fibonacci hashing of its address) and never evicted: a bucket keeps the
 * blocks of every heap that hashes to it and is sent to the heap of its first block, which
 * forwards the runs of other heaps' blocks to their owners when it collects (take_runs:
 * a CAS per run; snmalloc's receiver forwards too). queue's owner walks every block of a
 * post to find each superblock's run (collect_blocks), a cache miss per block; batch's reads
 * two words per run (remote.h's struct hl_remote_bucket). queue posts at a fixed count (32
 * blocks whatever their size), batch at a byte budget (remote_batch_bytes, 64 KiB: 1024
 * blocks of 64 bytes, 16 of 4 KiB), so a message carries the blocks of many superblocks
 * and its CAS is amortised over as much memory at every size. Both post on any malloc slow
 * path of the thread, the TLAB's included (tlab.c), so a thread that allocates at all sends
 * what it holds within a refill. remote_queue_cap acts with queue only (config.h's `acts`
 * refuses it with batch at start-up): batch bounds pending memory in bytes, per owner heap
 * (help_bytes, as queue) and per freeing thread (HL_REMOTE_BUCKETS x remote_batch_bytes).
 *
 * What is locked, and why. The sender takes no lock (its buckets are its own; a send is one
 * CAS onto the inbox, a lock-free stack). With tlab = on the owner drains on its TLAB's
 * malloc slow path without its heap's lock (hl_remote_drain): one exchange takes the inbox,
 * each run its bin can hold goes into the bin whole, still counted in its superblock's `used`
 * (no header is written: a TLAB's blocks are out of their superblocks whoever owns them), and
 * runs of other heaps go on to their owners. A sender closes a run at a quarter of a bin's
 * first limit (run_cap), so an empty bin takes three runs whole. Only a run that must go back
 * into its superblock waits for the lock, because snmalloc's premise, "only the owner touches
 * its slabs' free lists", does not hold for a hoard heap: (1) a heap is shared by every thread
 * that selects it (heap_select = hash, cpu, home), each of which pops its superblocks' free
 * lists and counts `used` under the heap's lock; (2) the return moves `used` and the heap's
 * u, on which Hoard's emptiness invariant (u >= (1 - f) a or u >= a - K S) is decided, and
 * the superblock's fullness group, and hoard's policy may then move the superblock to the
 * global heap; (3) a superblock changes heaps (to the global heap, from there to another
 * heap, re-formatted once empty) under the lock of the heap it leaves, so it may be another
 * heap's a moment after its owner was read, and a TLAB's give-back and remote_free = lock's
 * frees reach it under its owner's lock. (heap_select = thread removes (1) only.) The lock is
 * taken once per drain that has such runs, never per block; collections by others (a helping
 * sender, the global heap's, a thread's exit) take the lock as under list and queue. */

/* The open run's length and end into its first block (the bucket's head); its blocks join
 * the bucket's count. The run holds run_cap blocks less those it may still take (a full
 * one's run_left has gone below 0). */
static void close_run(struct hl_remote_bucket *b)
{
    uint32_t n = b->run_cap - (uint32_t)(b->run_left > 0 ? b->run_left : 0);
    ((uintptr_t *)b->head)[1] = (uintptr_t)b->run_last | (uintptr_t)n << RUN_SHIFT;
    b->n += n;
}

/* The bucket whole to its heap, one CAS; may_help: no lock is held (post). Out of line:
 * the free that fills a bucket is one in a thousand. */
static __attribute__((noinline)) void send_bucket(struct hl_remote_bucket *b, bool may_help)
{
    close_run(b);
    struct hl_heap *h = b->heap;
    bool help = send(h, b->head, b->tail, b->n, (size_t)((int64_t)batch_bytes - 1 - b->left));
    bucket_used &= ~(1u << (b - hl_remote_buckets));
    b->head = NULL;
    b->run_sb = NULL;                    /* the next free opens the bucket */
    if (help && may_help) collect_for(h);
}

/* A run of sb opened at p: in an empty bucket, which then goes to h; else after the open
 * run, closed. Once a run (of up to run_cap blocks). */
static void open_run(struct hl_remote_bucket *b, struct hl_heap *h, struct hl_sb *sb, void *p)
{
    if (!b->head) {
        b->heap = h;
        b->tail = p;
        b->n = 0;
        b->left = (int64_t)batch_bytes - 1;
        bucket_used |= 1u << (b - hl_remote_buckets);
    } else {
        close_run(b);
    }
    b->run_sb = sb;
    b->run_last = p;
    b->run_cap = run_cap[sb->cls];
    b->run_left = (int32_t)b->run_cap;
}

/* remote.h's hl_remote_batch_free when p opens a run (once a run). A thread past its exit
 * hook, whose buckets the hook sent, sends each block at once, so every free of it opens a
 * run (the send closes it). The owner is read again: a moment's difference only decides
 * where the bucket goes first (collection forwards). */
__attribute__((noinline)) void hl_remote_batch_open(struct hl_remote_bucket *b,
                                                    struct hl_sb *sb, void *p)
{
    size_t size = sb->size;
    open_run(b, atomic_load_explicit(&sb->owner, memory_order_relaxed), sb, p);
    b->run_left--;
    *(void **)p = b->head;
    b->head = p;
    if ((b->left -= (int64_t)size) < 0 || hl_me.state != 1) send_bucket(b, true);
    hl_stats_free(size);
}

/* remote.h's hl_remote_batch_free when the bucket reached its budget. No lock is held
 * (hl_remote_free's callers), so the send may help. */
__attribute__((noinline)) void hl_remote_batch_send(struct hl_remote_bucket *b, size_t size)
{
    send_bucket(b, true);
    hl_stats_free(size);
}

/* queue: the free after its counts (hl_remote_free). */
static __attribute__((noinline)) void queue_free(struct hl_sb *sb, void *p)
{
    size_t size = counted(sb, p);
    hl_stats_free(size);
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

void hl_remote_free(struct hl_sb *sb, void *p)
{
    if (hl_remote_mode == HL_REMOTE_BATCH) {         /* (checks the block itself) */
        hl_remote_batch_free(sb, atomic_load_explicit(&sb->owner, memory_order_relaxed), p);
        return;
    }
    if (hl_remote_mode == HL_REMOTE_LIST) push_block(sb, p);
    else queue_free(sb, p);
}

void hl_remote_flush(void)
{
    if (hl_remote_mode == HL_REMOTE_BATCH) {
        while (bucket_used) send_bucket(&hl_remote_buckets[__builtin_ctz(bucket_used)], false);
        return;
    }
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

/* The last block of sb's pending list from head, counting them in *n. */
static void *tail_of(const struct hl_sb *sb, void *head, uint32_t *n)
{
    void *tail = head;
    *n = 1;
    while (next_of(tail)) {
        tail = next_of(tail);
        if (hl_unlikely(++*n > sb->capacity)) {
            hl_say("remote list of superblock %p has more blocks than it holds: a block was "
                   "freed twice", (void *)sb);
            abort();
        }
    }
    return tail;
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
                if (hl_remote_adopt && hl_remote_adopt(h, sb, head, tail, n))
                    HL_COUNT(remote_pending, (uint64_t)0 - (uint64_t)n * sb->size);
                else
                    returned(h, sb, head, tail, n);
                sb = next;
                continue;
            }
            tail = tail_of(sb, head, &n);
            returned(h, sb, head, tail, n);
        }
        sb = next;
    }
}

/* free_lists = sharded: collect_lists, where an owner may have taken a list already
 * (hl_remote_take: empty, or holding later pushes whose remote_tail is stale), so each list
 * is walked, back into its superblock. */
static void collect_taken(struct hl_heap *h, struct hl_sb *sb)
{
    while (sb) {
        struct hl_sb *next = sb->inbox_next;
        if (!owns(h, sb)) {
            announce(sb);
        } else {
            uintptr_t list = atomic_exchange_explicit(&sb->remote, 0, memory_order_acq_rel);
            void *head = TOP(list);
            if (head) {
                uint32_t n;
                void *tail = tail_of(sb, head, &n);
                returned(h, sb, head, tail, n);
            }
        }
        sb = next;
    }
}

uint32_t hl_remote_take(struct hl_heap *h, struct hl_sb *sb)
{
    /* One atomic operation: the list and its count go, ANNOUNCED stays as it was, since sb
     * may sit in an inbox (h's, or an old owner's that forwards it to h), where collect_lists
     * finds the list empty or holding later pushes. A push that finds ANNOUNCED set does not
     * set remote_tail, so collect_lists walks under sharded. */
    uintptr_t list = atomic_fetch_and_explicit(&sb->remote, ANNOUNCED, memory_order_acq_rel);
    void *head = TOP(list);
    if (!head) return 0;
    uint32_t n;
    void *tail = tail_of(sb, head, &n);
    returned(h, sb, head, tail, n);
    return n;
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

/* batch: the runs sent to h (batch_free), each settled from its first block's second word
 * without reading its other blocks: into the calling thread's TLAB whole (tlab = on:
 * hl_remote_adopt, as list's lists, still counted in the superblock's `used`), on to the
 * current owner as a message of one run if its superblock left h, or back into its superblock
 * under h's lock. `locked`: h's lock is held; else (hl_remote_drain) the owner test is a
 * moment's reading (see there) and the runs that would go back into their superblocks are
 * kept, linked run to run through their last blocks, and returned for hl_remote_settle. The
 * run's last block is read for the link to the next run. */
static void *take_runs(struct hl_heap *h, void *p, bool locked)
{
    size_t bytes = 0;
    void *rest = NULL, **rest_link = &rest;
    while (p) {
        uintptr_t meta = ((uintptr_t *)p)[1];
        void *last = RUN_LAST(meta), *next = next_of(last);
        uint32_t n = RUN_N(meta);
        struct hl_sb *sb = hl_sb_of(p);
        if (HL_INVARIANT_CHECKS) {       /* the run is as long as it says, within sb */
            uint32_t k = 1;
            for (void *q = p; q != last && k <= sb->capacity; q = next_of(q))
                k += hl_sb_of(next_of(q)) == sb ? 1 : sb->capacity;
            if (k != n) {
                hl_say("remote batch: a run of superblock %p holds other blocks than the %u "
                       "it says: a block was freed twice", (void *)sb, n);
                abort();
            }
        }
        size_t run_bytes = (size_t)n * sb->size;
        if (!owns(h, sb)) {              /* its superblock left h: on to the owner */
            send(atomic_load_explicit(&sb->owner, memory_order_acquire), p, last, n,
                 run_bytes);
        } else if (hl_remote_adopt && hl_remote_adopt(h, sb, p, last, n)) {
            HL_COUNT(remote_pending, (uint64_t)0 - (uint64_t)run_bytes);
        } else if (locked) {
            *(void **)last = NULL;
            returned(h, sb, p, last, n);
        } else {                         /* for hl_remote_settle, under the lock */
            *rest_link = p;
            rest_link = (void **)last;
            run_bytes = 0;               /* still counted in the inbox's bytes until then */
        }
        bytes += run_bytes;
        p = next;
    }
    *rest_link = NULL;
    atomic_fetch_sub_explicit(&h->inbox_bytes, bytes, memory_order_relaxed);
    return rest;
}

/* The owner's drain without its heap's lock (issue 34: "the owner drains its queue on its own
 * slow path and returns the blocks to their superblocks without a lock"), for the thread whose
 * TLAB fills from h (tlab.c's malloc slow path). What it may do unlocked is what touches no
 * superblock header and no heap field: the inbox's exchange, a run into the caller's bins
 * (take_collected writes only the bins and reads the superblock's tlab_slot, fixed while the
 * superblock has blocks in use, as these pending ones are), and a run sent on to its owner.
 * The owner test is read without the lock, so it may be a moment old either way: a run taken
 * into the bins whose superblock has just left h is still correct (a block in a TLAB is out of
 * its superblock whoever owns it, tlab.h; giving back re-reads the owner), and one sent to an
 * old owner is forwarded again by that owner's collection. What stays under the lock is putting
 * a run back into its superblock: it moves the superblock's free list and `used`, which every
 * thread allocating from h pops and counts under h's lock, h's u, on which Hoard's emptiness
 * invariant (u >= (1 - f) a or u >= a - K S) is decided, and the superblock's place in h's
 * fullness groups, and the policy may then move the superblock to the global heap; and the
 * superblock may change heaps under you (line 9 of Figure 2 moves it under its old owner's
 * lock), so only its current owner's lock holder may write it. Those runs are returned. */
void *hl_remote_drain(struct hl_heap *h)
{
    uintptr_t all = atomic_exchange_explicit(&h->inbox, 0, memory_order_acquire);
    return take_runs(h, (void *)all, false);
}

void hl_remote_settle(struct hl_heap *h, void *runs)
{
    take_runs(h, runs, true);
}

void hl_remote_collect(struct hl_heap *h)
{
    uintptr_t all = atomic_exchange_explicit(&h->inbox, 0, memory_order_acquire);
    if (hl_remote_mode == HL_REMOTE_LIST) {
        if (hl_unlikely(hl_sb_sharded)) collect_taken(h, (struct hl_sb *)all);
        else collect_lists(h, (struct hl_sb *)all);
    } else if (hl_remote_mode == HL_REMOTE_BATCH) {
        take_runs(h, (void *)all, true);
    } else {
        collect_blocks(h, (void *)all);
    }
}

void hl_remote_thread_exit(struct hl_thread *t)
{
    if (hl_remote_mode == HL_REMOTE_LOCK) return;
    hl_remote_flush();
    struct hl_heap *h = t->heap;
    if (h && hl_remote_pending(h)) collect_for(h);
}
