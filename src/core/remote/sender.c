/* sender.c — the freeing thread's side of remote frees (remote.h): a block whose superblock
 * another heap owns, by the `remote_free` key: list pushes it onto its superblock's list
 * (one CAS; the first push announces the superblock in the owner's inbox), queue buffers it
 * per owner heap and posts a buffer of 32, batch puts it into a bucket hashed by owner heap,
 * as runs of one superblock's blocks, and sends a bucket whole at remote_batch_bytes. What
 * travels goes through mailbox.c; a sender that finds an owner's pending frees past a limit
 * collects for it (inbox.c), so pending memory stays bounded whatever the owner does. */
#include <stdlib.h>
#include "sender.h"

#define SLOTS 8                          /* queue: destination heaps buffered per thread */
#define BATCH 32                         /* queue: blocks per post */

/* list: a sender collects for the owner when one superblock's list reaches f x capacity
 * blocks (help_at, per class), so pending memory stays below f x a in every heap (queue's
 * and batch's bound, in bytes per heap, is the mailbox's: mailbox.c). */
static uint32_t *help_at;

struct outbox { struct hl_heap *heap; void *head, *tail; uint32_t n; size_t bytes; };
static HL_TLS struct outbox outbox[SLOTS];

/* batch: the freeing thread's remote cache (sender.h's hl_remote_buckets), each bucket sent
 * whole when it holds batch_bytes (remote_batch_bytes). Its `heap` is the heap of its first
 * block; the others may be of any heap that hashes to it (forwarded at collection). A bucket's
 * chain is a sequence of runs (remote.h), the newest run first, each of blocks of one
 * superblock in the order they were freed; a run is built in one of the thread's open runs
 * (sender.h's hl_remote_runs, one per class mod 16) and joins its bucket when it closes, so
 * frees of mixed sizes still make long runs. */
static size_t batch_bytes;
/* The longest run of class c: with a TLAB, a quarter of a bin's first limit (tlab_budget /
 * size), so an owner's empty bin takes three runs whole without its heap's lock
 * (hl_remote_drain: a run goes into a bin's spare chain only if a free still fits after it);
 * else HL_RUN_MAX. */
static uint32_t *run_cap;
HL_TLS struct hl_remote_bucket hl_remote_buckets[HL_REMOTE_BUCKETS];
HL_TLS struct hl_remote_run hl_remote_runs[HL_REMOTE_RUNS];
static HL_TLS uint32_t bucket_used;      /* bit i: bucket i holds blocks (for the flush) */

void hl_remote_init(void)
{
    hl_mailbox_init();
    help_at = hl_meta_alloc(hl_classes->count * sizeof *help_at);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        double n = (double)hl_sb_capacity_of(c) * hl_cfg.empty_fraction;
        help_at[c] = n < 1 ? 1 : n > HL_LIST_COUNT_MAX ? (uint32_t)HL_LIST_COUNT_MAX : (uint32_t)n;
    }
    batch_bytes = hl_cfg.remote_batch_bytes;
    run_cap = hl_meta_alloc(hl_classes->count * sizeof *run_cap);
    for (unsigned c = 0; c < hl_classes->count; c++) {
        size_t n = hl_cfg.tlab ? hl_cfg.tlab_budget / hl_class_size(c) / 4 : HL_RUN_MAX;
        run_cap[c] = n < 1 ? 1 : n > HL_RUN_MAX ? HL_RUN_MAX : (uint32_t)n;
    }
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
    bool help = hl_mailbox_send(h, o->head, o->tail, o->n, o->bytes);
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
        hl_mailbox_announce(sb);
    }
    /* The owner read before the push: if sb moved since, its new owner collects it, and
     * collecting a heap that has nothing pending costs an exchange. Heaps are never freed. */
    if (owner) collect_for(owner);
    if (publish) hl_stats_publish(NULL, true);
}

/* list, queue: p (a block of sb) checked and counted as a remote free, pending; its size.
 * (batch: sender.h's hl_remote_batch_free.) In their out-of-line frees, so that
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
        n = (old >> HL_LIST_COUNT_SHIFT) + ((old >> HL_LIST_COUNT_SHIFT) < HL_LIST_COUNT_MAX);
        *(void **)p = HL_LIST_TOP(old);
        /* acq_rel: the collector's exchange that emptied the list happens before this push,
         * so its last reads of sb->inbox_next come before our announce writes it. */
        if (atomic_compare_exchange_weak_explicit(list, &old,
                                                  (uintptr_t)p | n << HL_LIST_COUNT_SHIFT |
                                                  HL_LIST_ANNOUNCED,
                                                  memory_order_acq_rel, memory_order_relaxed))
            break;
        HL_COUNT(cas_retries, 1);
        HL_COUNT(cas_free_retries, 1);
    }
    bool first = !(old & HL_LIST_ANNOUNCED), publish = hl_stats_count(size, true);
    if (hl_unlikely(first || n == help || publish))
        push_after(sb, p, first, n == help ? owner : NULL, publish);
}

/* ---- batch: the freeing thread's remote cache (snmalloc) -----------------------------------
 *
 * 16 buckets hashed by owner heap, never evicted; a bucket is sent whole to the heap of its
 * first block (which forwards other heaps' runs) at remote_batch_bytes, on any malloc slow
 * path of the thread and at its exit. A bucket is built as runs of one superblock's blocks,
 * each saying its length and end in its first block, so the owner reads two words a run. The
 * sender takes no lock; the owner drains without its heap's lock and takes only the runs that
 * go back into their superblocks under it, once a drain. docs/remote-free.md says how it
 * differs from queue and why that lock stays ("What is locked, and why"). */

/* Open run r closed: its length and end into its first block, and the run in front of its
 * bucket's chain (whose last block's link is set when the bucket is sent). The run holds
 * its cap less the blocks it may still take (a full one's `left` has gone below 0). */
static void close_run(struct hl_remote_run *r)
{
    struct hl_remote_bucket *b = r->b;
    uint32_t n = r->cap - (uint32_t)(r->left > 0 ? r->left : 0);
    hl_run_mark(r->head, r->last, n);
    *(void **)r->last = b->head;
    if (!b->head) b->tail = r->last;
    b->head = r->head;
    b->n += n;
    b->open--;
    r->sb = NULL;
}

/* The bucket whole to its heap, one CAS, its open runs closed first; may_help: no lock is
 * held (post). Out of line: the free that fills a bucket is one in a thousand. */
static __attribute__((noinline)) void send_bucket(struct hl_remote_bucket *b, bool may_help)
{
    for (unsigned i = 0; b->open && i < HL_REMOTE_RUNS; i++)
        if (hl_remote_runs[i].sb && hl_remote_runs[i].b == b) close_run(&hl_remote_runs[i]);
    struct hl_heap *h = b->heap;
    bool help = hl_mailbox_send(h, b->head, b->tail, b->n,
                                (size_t)((int64_t)batch_bytes - 1 - b->left));
    bucket_used &= ~(1u << (b - hl_remote_buckets));
    b->head = NULL;
    b->heap = NULL;                      /* the next run opened in it opens the bucket */
    if (help && may_help) collect_for(h);
}

/* sender.h's hl_remote_batch_free when p opens a run (once a run): r's run, if open,
 * closed into its bucket, and a run of sb opened at p in owner's bucket, which an empty
 * bucket then goes to. A thread past its exit hook, whose buckets the hook sent, sends each
 * block at once, so every free of it opens a run (the send closes it). */
__attribute__((noinline)) void hl_remote_batch_open(struct hl_remote_run *r, struct hl_sb *sb,
                                                    struct hl_heap *owner, void *p)
{
    size_t size = sb->size;
    if (r->sb) close_run(r);
    struct hl_remote_bucket *b = (struct hl_remote_bucket *)((char *)hl_remote_buckets +
                                                             hl_remote_bucket_at(owner));
    if (!b->heap) {
        b->heap = owner;
        b->head = NULL;
        b->n = 0;
        b->open = 0;
        b->left = (int64_t)batch_bytes - 1;
        bucket_used |= 1u << (b - hl_remote_buckets);
    }
    b->open++;
    r->sb = sb;
    r->b = b;
    r->head = r->last = p;
    r->cap = run_cap[sb->cls];
    r->left = (int32_t)r->cap - 1;
    if ((b->left -= (int64_t)size) < 0 || hl_me.state != 1) send_bucket(b, true);
    hl_stats_free(size);
}

/* sender.h's hl_remote_batch_free when the bucket reached its budget. No lock is held
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
    if (hl_mailbox_full(h)) {
        hl_remote_return_one(sb, p);
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

void hl_remote_thread_exit(struct hl_thread *t)
{
    if (hl_remote_mode == HL_REMOTE_LOCK) return;
    hl_remote_flush();
    struct hl_heap *h = t->heap;
    if (h && hl_remote_pending(h)) collect_for(h);
}
