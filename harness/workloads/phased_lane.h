/* phased_lane.h — a phased thread's table of its live blocks (a lane), and the two heap
 * orders it is kept in: a min-heap on each block's death, which every allocation and free of
 * the workload goes through (so it is inline here), and a heapsort into allocation order,
 * which the drain runs once to pick its survivors by age.
 *
 * A thread's table of its live blocks comes from mmap, not from the allocator measured, and its
 * pages beyond the blocks that survive the drain are given back at the drain (MADV_DONTNEED),
 * so RSS after the drain holds no table the harness no longer needs (with 16..512 B blocks
 * the table is a fifth of the blocks' bytes; with keep_* or churn its resident size before
 * and after the drain is recorded: lane_table_kb, by mincore). The drain sorts in place:
 * nothing it does takes memory from the allocator measured (glibc's qsort takes a buffer the
 * size of the table from malloc, the allocator measured, and some keep it after the drain). */
#ifndef HB_PHASED_LANE_H
#define HB_PHASED_LANE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

struct blk { uint64_t death; char *p; size_t n; uint64_t seq; };   /* seq: allocation order */

struct lane {                       /* one thread's live set: a min-heap on death */
    struct blk *heap;
    size_t len, cap;
    uint64_t seq;                   /* allocations so far: the next block's place in order */
    _Alignas(64) _Atomic unsigned long long live_bytes;   /* published every step */
    char pad[64 - sizeof(unsigned long long)];
};

/* ---- the min-heap on death ----------------------------------------------------------------- */

static inline void lane_push(struct lane *L, struct blk b)
{
    size_t i = L->len++;
    while (i && L->heap[(i - 1) / 2].death > b.death) {
        L->heap[i] = L->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    L->heap[i] = b;
}

static inline void lane_sift_down(struct lane *L, size_t i)
{
    struct blk b = L->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= L->len) break;
        if (c + 1 < L->len && L->heap[c + 1].death < L->heap[c].death) c++;
        if (L->heap[c].death >= b.death) break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    L->heap[i] = b;
}

static inline struct blk lane_pop(struct lane *L)
{
    struct blk top = L->heap[0];
    L->heap[0] = L->heap[--L->len];
    if (L->len) lane_sift_down(L, 0);
    return top;
}

/* ---- the heapsort into allocation order ---------------------------------------------------- */

static inline void blk_seq_sift(struct blk *a, size_t n, size_t i)
{
    struct blk b = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && a[c + 1].seq > a[c].seq) c++;
        if (a[c].seq <= b.seq) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = b;
}

/* The table in allocation order, in place (no memory from the allocator measured). */
static inline void blk_sort_by_seq(struct blk *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) blk_seq_sift(a, n, i);
    for (size_t end = n; end > 1; end--) {
        struct blk t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        blk_seq_sift(a, end - 1, 0);
    }
}

/* kB of a lane's table resident now (mincore): the harness's own memory in RSS. */
static inline unsigned long long lane_table_kb(const struct lane *L)
{
    unsigned char vec[1024];
    size_t pages = (L->cap * sizeof *L->heap + 4095) / 4096, n = 0;
    for (size_t at = 0; at < pages; at += sizeof vec) {
        size_t m = pages - at < sizeof vec ? pages - at : sizeof vec;
        if (mincore((char *)L->heap + at * 4096, m * 4096, vec)) return 0;
        for (size_t k = 0; k < m; k++) n += vec[k] & 1;
    }
    return (unsigned long long)n * 4;
}

#endif
