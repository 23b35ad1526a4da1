/* remote.h — remote frees: a block freed by a thread whose heap does not own the block's
 * superblock. A mailbox with two sides, each knowing only the mailbox between them:
 *
 *   sender.c   the freeing thread's side: what it does with the block (below, per mode), its
 *              buffers and buckets, and its help to an owner that does not collect;
 *   mailbox.c  a heap's inbox, a lock-free stack of announced superblocks (list), posts
 *              (queue) or messages (batch), and what it counts (inbox_bytes, inbox_blocks);
 *              the formats of what travels in it are below;
 *   inbox.c    the owner's side: collect (under the heap's lock), drain (batch, without it),
 *              settle (runs back into their superblocks), forward (runs whose superblock
 *              left the heap, to its owner's inbox). Collect and drain *return* the runs a
 *              front cache may take whole (hl_remote_collect_runs, hl_remote_drain): the
 *              caller (tlab.c) takes what its bins hold and settles the rest; nothing calls up.
 *
 * The `remote_free` key chooses how a block reaches its owner heap (ownership, hoard): lock
 * (the paper: heap.h's free paths, nothing here); list (one CAS onto its superblock's
 * `remote` list, the first push announcing the superblock in the owner's inbox); queue (a
 * buffer of the freeing thread per destination heap, posted whole); batch (snmalloc's
 * message passing: 16 buckets of runs of one superblock's blocks, each sent whole; "batch"
 * below). docs/remote-free.md gives each, when pending frees are collected, the bounds
 * (remote_queue_cap, help_bytes) and fork; docs/free-lists.md sharded's use of the list.
 *
 * One batch free under hoard2026: tlab.h's free finds another owner -> tlab.c's
 * free_other_batch -> sender.h's hl_remote_batch_free (onto the thread's open run of its
 * class, which joins its owner's bucket when it closes) -> sender.c's send_bucket ->
 * hl_mailbox_send below (one CAS onto the owner's inbox) at remote_batch_bytes, the sender's
 * malloc slow path or its exit -> the owner's TLAB slow path drains its inbox (inbox.c's
 * hl_remote_drain), takes the runs its bins hold (tlab_remote.c's hl_tlab_remote_take_runs)
 * and settles the rest into their superblocks under the heap's lock (hl_remote_settle).
 *
 * What a reader must keep:
 *   - a pending block stays in its superblock's `used`, the owner's u and A, and is out of U:
 *     a superblock with pending blocks is never empty, released or re-formatted;
 *   - pending memory is bounded whatever the owner does: the owner collects on its slow
 *     paths and every HL_COLLECT_EVERY mallocs, the freeing thread helps at help_at and
 *     help_bytes (below);
 *   - a collector checks the owner under its own lock (an owner changes only under the old
 *     owner's) and forwards what is no longer its own, lock-free: no lock inside another;
 *   - both lists only gain by CAS push and lose everything at once by exchange: no ABA.
 */
#ifndef HL_REMOTE_H
#define HL_REMOTE_H

#include "heap.h"
#include "ds.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* ---- the mailbox (mailbox.c) and what travels in it ----------------------------------------
 * hl_remote_mode is HL_REMOTE_LOCK, _LIST, _QUEUE or _BATCH (config.h). */
extern int hl_remote_mode;

/* list: a superblock's `remote` word is the top block (bits 4..47; blocks are 16-aligned and
 * the arena lies below 2^47), the number of blocks on the list (bits 48..63, saturating) and
 * ANNOUNCED (bit 0), so one CAS pushes a block, counts it and tells whether to announce. */
#define HL_LIST_ANNOUNCED   ((uintptr_t)1)
#define HL_LIST_COUNT_SHIFT 48
#define HL_LIST_COUNT_MAX   ((uintptr_t)0xffff)
#define HL_LIST_TOP(word)   ((void *)((word) & (((uintptr_t)1 << HL_LIST_COUNT_SHIFT) - 16)))

/* A run: blocks of one superblock linked through their first words, its first block's
 * second word saying where it ends and how long it is (HL_RUN_LAST, HL_RUN_N), so a run is
 * settled or taken without reading its other blocks (BatchIt, ISMM 2024). batch's messages
 * are chains of runs, linked through their last blocks, and so is what the inbox returns
 * (hl_remote_collect_runs, hl_remote_drain) for a front cache to take. Every block is
 * 16-aligned and at least 16 bytes (sizeclass.c), so it has that second word. */
#define HL_RUN_SHIFT 48
#define HL_RUN_MAX ((uint32_t)0xffff)
#define HL_RUN_LAST(w) ((void *)((w) & (((uintptr_t)1 << HL_RUN_SHIFT) - 1)))
#define HL_RUN_N(w) ((uint32_t)((w) >> HL_RUN_SHIFT))
static inline void hl_run_mark(void *first, void *last, uint32_t n)
{
    ((uintptr_t *)first)[1] = (uintptr_t)last | (uintptr_t)n << HL_RUN_SHIFT;
}

void hl_mailbox_init(void);                         /* the key's limits (hl_remote_init) */
/* Pending frees the owner has not collected are free memory Hoard's threshold cannot see.
 * To keep them bounded whatever the owner does, a sender collects for it (under its lock,
 * once per many frees) when queue or batch have posted hl_mailbox_help_bytes = max(K, 1) x S
 * bytes to one heap (list's own bound is per superblock: sender.c's help_at). */
extern size_t hl_mailbox_help_bytes;
extern uint32_t hl_mailbox_queue_cap;   /* remote_queue_cap under queue; 0: unbounded */

/* Inline, as they were static in one file before the sides were split: the remote pair of
 * queue costs 8 instructions more with them out of line (tools/hoardlab cost). */

/* Push the chain head .. tail onto *stack (a heap's inbox), linking tail to the old top: the
 * generic stack's push (lfstack.h), its release CAS publishing the chain to the collector. */
static inline void hl_mailbox_push(_Atomic uintptr_t *stack, void *head, void **tail_link)
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

/* list: sb onto its owner's inbox. */
static inline void hl_mailbox_announce(struct hl_sb *sb)
{
    struct hl_heap *h = atomic_load_explicit(&sb->owner, memory_order_acquire);
    hl_mailbox_push(&h->inbox, sb, (void **)&sb->inbox_next);
}

/* queue, batch: the chain head .. tail of n blocks, `bytes`, onto h's inbox, counted in its
 * inbox_bytes (and inbox_blocks, with a remote_queue_cap); true when h's inbox has reached
 * the bytes at which a sender helps (collects for h). */
static inline bool hl_mailbox_send(struct hl_heap *h, void *head, void *tail, uint32_t n,
                                   size_t bytes)
{
    if (hl_mailbox_queue_cap)            /* counted only where a bound reads it */
        atomic_fetch_add_explicit(&h->inbox_blocks, n, memory_order_relaxed);
    hl_mailbox_push(&h->inbox, head, (void **)tail);
    return atomic_fetch_add_explicit(&h->inbox_bytes, bytes, memory_order_relaxed) + bytes
           >= hl_mailbox_help_bytes;
}

/* queue: h's inbox holds remote_queue_cap blocks or more (a free takes the lock path). */
static inline bool hl_mailbox_full(const struct hl_heap *h)
{
    return hl_mailbox_queue_cap &&
           atomic_load_explicit(&h->inbox_blocks, memory_order_relaxed) >= hl_mailbox_queue_cap;
}

/* What the owner took out of h's inbox: bytes, and blocks (counted with a queue cap only). */
static inline void hl_mailbox_taken(struct hl_heap *h, size_t bytes, uint32_t blocks)
{
    atomic_fetch_sub_explicit(&h->inbox_bytes, bytes, memory_order_relaxed);
    if (hl_mailbox_queue_cap)
        atomic_fetch_sub_explicit(&h->inbox_blocks, blocks, memory_order_relaxed);
}

/* The owner collects on its slow paths, and at least every HL_COLLECT_EVERY mallocs. */
#define HL_COLLECT_EVERY 64
static inline bool hl_remote_pending(const struct hl_heap *h)
{
    return atomic_load_explicit(&h->inbox, memory_order_relaxed) != 0;
}

/* ---- the owner's side (inbox.c) -------------------------------------------------------------- */

void hl_remote_collect(struct hl_heap *h);          /* h locked: take back what is pending */
/* h locked: as hl_remote_collect, but the lists and runs of h's superblocks that could be
 * handed over whole are returned as a chain of runs (NULL: none), still pending (counted in
 * their superblocks' `used`, h's u and remote_pending): the caller takes each one or gives
 * the rest to hl_remote_settle under the same lock. */
void *hl_remote_collect_runs(struct hl_heap *h);
/* batch, h not locked: h's inbox taken, runs of other heaps forwarded, the runs of h's
 * superblocks returned as hl_remote_collect_runs returns them (inbox.c says what needs the
 * lock and why). */
void *hl_remote_drain(struct hl_heap *h);
/* h locked: each run of the chain back into its superblock (or on to its current owner). */
void hl_remote_settle(struct hl_heap *h, void *runs);
/* list, free_lists = sharded: sb's pending list (its thread_free), which h owns (h locked),
 * taken with one atomic operation and returned into sb (h's policy may then give sb away);
 * the number of blocks. */
uint32_t hl_remote_take(struct hl_heap *h, struct hl_sb *sb);
/* queue full (remote_queue_cap): p straight into its superblock under its owner's lock. */
void hl_remote_return_one(struct hl_sb *sb, void *p);

#pragma GCC visibility pop

#include "sender.h"                     /* the sending side: remote/'s face is both */

#endif
