/* inbox.c — the owner's side of remote frees (remote.h): what other threads freed into a
 * heap, taken from its inbox (mailbox.c) and settled: each list (list), post (queue) or run
 * (batch) back into its superblock, h's u and the superblock's fullness group moved, h's
 * policy run when due (hl_heap_after_free), or forwarded to the superblock's current owner
 * when it left h. hl_remote_collect settles everything under h's lock; for a front cache,
 * hl_remote_collect_runs (locked) and hl_remote_drain (batch, unlocked) return the runs it
 * may take whole, and the caller settles the rest (hl_remote_settle). */
#include <stdlib.h>
#include "remote.h"

static inline void *next_of(void *p) { return *(void **)p; }

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
void hl_remote_return_one(struct hl_sb *sb, void *p)
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
 * its owner's inbox; h's own give their whole list back, or, with keep, those whose count and
 * tail are known are returned as runs (remote.h), unwalked, for the caller to take. */
static void *collect_lists(struct hl_heap *h, struct hl_sb *sb, bool keep)
{
    void *runs = NULL;
    while (sb) {
        struct hl_sb *next = sb->inbox_next;
        if (!owns(h, sb)) {
            hl_mailbox_announce(sb);
        } else {
            /* The tail first: until the exchange empties the list no push can set another. */
            void *tail = atomic_load_explicit(&sb->remote_tail, memory_order_relaxed);
            uintptr_t list = atomic_exchange_explicit(&sb->remote, 0, memory_order_acq_rel);
            void *head = HL_LIST_TOP(list);
            uint32_t n = (uint32_t)(list >> HL_LIST_COUNT_SHIFT);
            /* Its count and tail known, the list is not walked: a run for the caller (its
             * blocks are read when handed out), or back into sb at once. */
            if (!HL_INVARIANT_CHECKS && n < HL_LIST_COUNT_MAX) {
                if (keep) {
                    hl_run_mark(head, tail, n);
                    *(void **)tail = runs;
                    runs = head;
                } else {
                    returned(h, sb, head, tail, n);
                }
                sb = next;
                continue;
            }
            tail = tail_of(sb, head, &n);
            returned(h, sb, head, tail, n);
        }
        sb = next;
    }
    return runs;
}

/* free_lists = sharded: collect_lists, where an owner may have taken a list already
 * (hl_remote_take: empty, or holding later pushes whose remote_tail is stale), so each list
 * is walked, back into its superblock. */
static void collect_taken(struct hl_heap *h, struct hl_sb *sb)
{
    while (sb) {
        struct hl_sb *next = sb->inbox_next;
        if (!owns(h, sb)) {
            hl_mailbox_announce(sb);
        } else {
            uintptr_t list = atomic_exchange_explicit(&sb->remote, 0, memory_order_acq_rel);
            void *head = HL_LIST_TOP(list);
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
    uintptr_t list = atomic_fetch_and_explicit(&sb->remote, HL_LIST_ANNOUNCED,
                                               memory_order_acq_rel);
    void *head = HL_LIST_TOP(list);
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
            hl_mailbox_send(to, p, tail, n, (size_t)n * sb->size);
        }
        p = next;
    }
    hl_mailbox_taken(h, bytes, blocks);
}

/* list: a run head .. tail (n blocks of sb) that a collection of h had taken while sb was h's,
 * and that h's settling finds in another heap (h's own policy moved sb to the global heap
 * during that collection): back onto sb's list in one CAS, announced to its owner if the list
 * was empty (its last block then this run's tail), as a sender's push would. Never as a
 * message of blocks (route_runs' way under batch): a list heap's inbox holds superblocks.
 * Pending still, as it was. */
static void forward_list_run(struct hl_sb *sb, void *head, void *tail, uint32_t n)
{
    _Atomic uintptr_t *list = &sb->remote;
    uintptr_t old = atomic_load_explicit(list, memory_order_relaxed), word;
    do {
        uintptr_t count = (old >> HL_LIST_COUNT_SHIFT) + n;
        if (count > HL_LIST_COUNT_MAX) count = HL_LIST_COUNT_MAX;
        *(void **)tail = HL_LIST_TOP(old);
        word = (uintptr_t)head | count << HL_LIST_COUNT_SHIFT | HL_LIST_ANNOUNCED;
    } while (!atomic_compare_exchange_weak_explicit(list, &old, word, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if (!(old & HL_LIST_ANNOUNCED)) {
        atomic_store_explicit(&sb->remote_tail, tail, memory_order_relaxed);
        hl_mailbox_announce(sb);
    }
}

/* A chain of runs (remote.h): batch's messages as sent to h, or what hl_remote_collect_runs
 * and hl_remote_drain returned. Each run is sorted from its first block's second word,
 * without reading its other blocks: on to the current owner as a message of one run if its
 * superblock left h, back into its superblock (h locked), or, with keep, returned to the
 * caller (linked run to run through their last blocks) for it to take or settle. The run's
 * last block is read for the link to the next run. Returns the kept runs, and in *bytes what
 * the chain held. */
static void *route_runs(struct hl_heap *h, void *p, bool keep, size_t *bytes)
{
    void *kept = NULL, **kept_link = &kept;
    size_t all = 0;
    while (p) {
        uintptr_t meta = ((uintptr_t *)p)[1];
        void *last = HL_RUN_LAST(meta), *next = next_of(last);
        uint32_t n = HL_RUN_N(meta);
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
        if (!owns(h, sb) && hl_remote_mode == HL_REMOTE_LIST) {
            forward_list_run(sb, p, last, n);            /* (a list inbox holds superblocks) */
        } else if (!owns(h, sb)) {       /* its superblock left h: on to the owner */
            hl_mailbox_send(atomic_load_explicit(&sb->owner, memory_order_acquire), p, last, n,
                            run_bytes);
        } else if (keep) {
            *kept_link = p;
            kept_link = (void **)last;
        } else {
            *(void **)last = NULL;
            returned(h, sb, p, last, n);
        }
        all += run_bytes;
        p = next;
    }
    *kept_link = NULL;
    *bytes = all;
    return kept;
}

/* The owner's drain without its heap's lock, for the thread whose TLAB fills from h (tlab.c's
 * malloc slow path); docs/remote-free.md ("What is locked, and why") gives the reasons. It
 * may do unlocked only what touches no superblock header and no heap field: the inbox's
 * exchange, a run into the caller's bins (tlab_remote.c's hl_tlab_remote_take_runs writes
 * only the bins and reads the superblock's tlab_slot, fixed while the superblock has blocks in
 * use, as these pending ones are), and a run sent on to its owner. The owner test may be a moment old either way;
 * both outcomes are correct (a block in a TLAB is out of its superblock whoever owns it; an
 * old owner's collection forwards again). Putting a run back into its superblock moves the
 * superblock's `used`, free list and fullness group and h's u, and the superblock may change
 * heaps under its old owner's lock: the caller settles those under the lock. */
void *hl_remote_drain(struct hl_heap *h)
{
    size_t bytes;
    uintptr_t all = atomic_exchange_explicit(&h->inbox, 0, memory_order_acquire);
    void *runs = route_runs(h, (void *)all, true, &bytes);
    hl_mailbox_taken(h, bytes, 0);
    return runs;
}

/* Runs a caller kept (out of the inbox already: no inbox bytes to take). The owner is read
 * again, now under h's lock. */
void hl_remote_settle(struct hl_heap *h, void *runs)
{
    size_t bytes;
    route_runs(h, runs, false, &bytes);
}

/* The inbox of h (locked) taken; with keep, the runs a front cache may take are returned. */
static inline __attribute__((always_inline)) void *collect(struct hl_heap *h, bool keep)
{
    uintptr_t all = atomic_exchange_explicit(&h->inbox, 0, memory_order_acquire);
    void *runs = NULL;
    if (hl_remote_mode == HL_REMOTE_LIST) {
        if (hl_unlikely(hl_sb_sharded)) collect_taken(h, (struct hl_sb *)all);
        else runs = collect_lists(h, (struct hl_sb *)all, keep);
    } else if (hl_remote_mode == HL_REMOTE_BATCH) {
        size_t bytes;
        runs = route_runs(h, (void *)all, keep, &bytes);
        hl_mailbox_taken(h, bytes, 0);
    } else {
        collect_blocks(h, (void *)all);
    }
    return runs;
}

void hl_remote_collect(struct hl_heap *h) { collect(h, false); }
void *hl_remote_collect_runs(struct hl_heap *h) { return collect(h, true); }

