/* sender.h — the freeing thread's side of remote frees (sender.c; remote.h has the design
 * and the mailbox between the two sides). */
#ifndef HL_SENDER_H
#define HL_SENDER_H

#include "remote.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

void hl_remote_init(void);                          /* hl_heaps_init: the key, the limits */
void hl_remote_free(struct hl_sb *sb, void *p);     /* p: a block of sb; counts the free */
void hl_remote_flush(void);       /* queue, batch: post this thread's buffers (no lock is taken) */
void hl_remote_thread_exit(struct hl_thread *t);    /* post its buffers, collect its heap */

/* batch: the freeing thread's remote cache (sender.c says how it works).
 * HL_REMOTE_BUCKETS buckets, hashed by owner heap; the common free is inline here, for
 * tlab.c's path of another heap's blocks, which calls it without passing through
 * hl_tlab_free_slow and hl_remote_free (docs/remote-free.md counts the instructions). A
 * bucket's chain is a sequence of runs, each of one superblock's blocks, built apart from
 * the bucket in one of HL_REMOTE_RUNS open runs chosen by size class (class mod 16), so
 * frees of mixed sizes still make long runs; a run joins its bucket when it closes. */
#define HL_REMOTE_BUCKET_BITS 4
#define HL_REMOTE_BUCKETS (1u << HL_REMOTE_BUCKET_BITS)
struct hl_remote_bucket {
    struct hl_heap *heap;                /* where it is sent (NULL: the bucket is empty) */
    void *head, *tail;                   /* the closed runs' chain: newest, oldest block */
    uint32_t n;                          /* the closed runs' blocks */
    uint32_t open;                       /* its open runs (hl_remote_runs) */
    int64_t left;                        /* bytes it may take before it is sent, less 1 */
    char pad[24];
};
/* The hash is a byte offset into the array: a bucket is a line. */
_Static_assert(sizeof(struct hl_remote_bucket) == 64, "hl_remote_bucket_at scales by 64");
extern HL_TLS struct hl_remote_bucket hl_remote_buckets[HL_REMOTE_BUCKETS];

/* An open run: blocks of sb in the order they were freed, oldest (head) to newest (last),
 * so that the owner hands them out again in that order (tlab_remote.c's
 * hl_tlab_remote_take_runs), linked through their first words, counted in bucket b's bytes
 * already; `left` blocks it may still take (below 0: it is full) of its longest, cap. */
#define HL_REMOTE_RUNS 16
struct hl_remote_run {
    struct hl_sb *sb;                    /* NULL: none open */
    void *head, *last;
    struct hl_remote_bucket *b;
    int32_t left;
    uint32_t cap;
    char pad[24];                        /* a line: the free's index is a shift */
};
_Static_assert(sizeof(struct hl_remote_run) == 64, "hl_remote_batch_free scales by 64");
extern HL_TLS struct hl_remote_run hl_remote_runs[HL_REMOTE_RUNS];

/* The byte offset of h's bucket: Fibonacci hashing of the heap's address (the top bits of its
 * low 32 times 2^32 / phi), so neighbouring heaps land far apart, and the free reads nothing
 * of the heap, whose first line its owner writes. Three instructions: multiply, shift, mask. */
static inline uint32_t hl_remote_bucket_at(const struct hl_heap *h)
{
    return ((uint32_t)(uintptr_t)h * 2654435769u) >> (32 - HL_REMOTE_BUCKET_BITS - 6) &
           (HL_REMOTE_BUCKETS - 1) << 6;
}

/* The slow half (sender.c): the free of p into open run r when it opens a run there (in
 * owner's bucket), and the send of a bucket that reached its budget (p in it already); each
 * counts the free. */
void hl_remote_batch_open(struct hl_remote_run *r, struct hl_sb *sb, struct hl_heap *owner,
                          void *p);
void hl_remote_batch_send(struct hl_remote_bucket *b, size_t size);

/* batch: p, a block of sb, which owner (read by the caller) owned a moment ago and the
 * calling thread's heap does not, counted as freed: onto the open run of its class when that
 * run is sb's and below its cap (in the bucket the run was opened in), else a run opened in
 * owner's bucket; the bucket is sent when it reaches its byte budget. The open run's length
 * is its cap less `left` and the bucket's bytes its budget less 1 less its `left`, each
 * counted down to below 0, so that each test is a subtraction and a branch on its sign. */
static inline __attribute__((always_inline)) void hl_remote_batch_free(struct hl_sb *sb,
                                                                       struct hl_heap *owner,
                                                                       void *p)
{
    if (HL_INVARIANT_CHECKS) hl_sb_check_block(sb, p, "free");
    size_t size = sb->size;
    struct hl_remote_run *r = (struct hl_remote_run *)((char *)hl_remote_runs +
                                                       ((uint32_t)sb->cls & (HL_REMOTE_RUNS - 1)) * 64);
    HL_COUNT(remote_frees, 1);
    HL_COUNT(remote_pending, size);
    if (hl_unlikely(r->sb != sb || --r->left < 0)) {
        hl_remote_batch_open(r, sb, owner, p);
        return;
    }
    *(void **)r->last = p;               /* in free order: the newest's link is set when it */
    r->last = p;                         /* closes */
    struct hl_remote_bucket *b = r->b;
    if (hl_unlikely((b->left -= (int64_t)size) < 0)) {
        hl_remote_batch_send(b, size);
        return;
    }
    hl_stats_free(size);
}

#pragma GCC visibility pop

#endif
