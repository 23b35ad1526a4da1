/* remote.h — remote frees (remote.c): frees by a thread whose heap does not own the block
 * (remote_free = list | queue | batch; `lock` is heappaths.h's locked free). hl_remote_mode
 * is HL_REMOTE_LOCK, _LIST, _QUEUE or _BATCH. The owner's fast path tests hl_remote_pending inline. */
#ifndef HL_REMOTE_H
#define HL_REMOTE_H

#include "heap.h"

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

extern int hl_remote_mode;
void hl_remote_init(void);                          /* hl_heaps_init: the key, the limits */
void hl_remote_free(struct hl_sb *sb, void *p);     /* p: a block of sb; counts the free */
void hl_remote_collect(struct hl_heap *h);          /* h locked: take back what is pending */
/* list, free_lists = sharded: sb's pending list (its thread_free), which h owns (h locked),
 * taken with one atomic operation and returned into sb (h's policy may then give sb away);
 * the number of blocks. */
uint32_t hl_remote_take(struct hl_heap *h, struct hl_sb *sb);
/* list: a superblock's whole list of n pending blocks (head .. tail), which h owns (h
 * locked), offered before it goes back into the superblock (batch: a run of them, h locked or
 * not: hl_remote_drain); true when taken as it is, still counted in the superblock's `used`
 * and h's u (tlab.c: into the collecting thread's TLAB, when its heap is h; the taker sets
 * tail's link). NULL: never. */
extern bool (*hl_remote_adopt)(struct hl_heap *h, struct hl_sb *sb, void *head, void *tail,
                               uint32_t n);
/* batch, the thread whose TLAB fills from h, h not locked: h's inbox taken, the runs its bins
 * can hold taken into them, the runs that must go back into their superblocks returned (NULL:
 * none) for hl_remote_settle, under h's lock (remote.c says what needs the lock and why). */
void *hl_remote_drain(struct hl_heap *h);
void hl_remote_settle(struct hl_heap *h, void *runs);
void hl_remote_flush(void);       /* queue: post this thread's buffers (no lock is taken) */
void hl_remote_thread_exit(struct hl_thread *t);    /* post its buffers, collect its heap */
/* The owner collects on its slow paths, and at least every HL_COLLECT_EVERY mallocs. */
#define HL_COLLECT_EVERY 64
static inline bool hl_remote_pending(const struct hl_heap *h)
{
    return atomic_load_explicit(&h->inbox, memory_order_relaxed) != 0;
}

#pragma GCC visibility pop

#endif
