/* globalheap.c — hoard's global heap, heap 0 (Hoard §3, Figure 2), as one heap or, with
 * global_shards = n > 1, as n shards, each a heap with its own lock (the 2026 Hoard): where a
 * per-processor heap's superblock goes when the heap crosses the emptiness threshold (put),
 * and where a heap that runs out of room looks before it asks the OS (get). hoard.c decides
 * when; this file, where. The shards are made with the other heaps and numbered after them
 * (heapselect.c: hl_heap_shards, hl_heap_is_shard); locks: a per-processor heap before any
 * shard, shards in ascending shard number. */
#include "globalheap.h"
#include "selector.h"

/* The shard of the CPU the thread runs on: where put goes and get looks first. */
static struct hl_heap *shard_here(void)
{
    return hl_heap_shards[(unsigned)hl_select_cpu() % hl_heap_nshards];
}

/* A superblock of class c from shard g (locked) into h: the fullest of class c, else an empty
 * one of any class (hl_heap_take). It becomes h's before g's lock is released, so a concurrent
 * free finds it in h. */
static struct hl_sb *take_from(struct hl_heap *g, struct hl_heap *h, unsigned c)
{
    if (hl_remote_pending(g)) hl_remote_collect(g);     /* what others freed comes back first */
    struct hl_sb *sb = hl_heap_take(g, c);
    if (sb) {
        if (hl_meta_foreign_blocks)       /* census = on: Table 3's count */
            HL_COUNT(census_paper, hl_meta_foreign_blocks(sb, hl_sb_size));
        hl_heap_attach(h, sb);
        HL_COUNT(global_from, 1);
    }
    if (HL_INVARIANT_CHECKS) hl_heap_check(g, -1);
    return sb;
}

static struct hl_sb *take_locked(struct hl_heap *g, struct hl_heap *h, unsigned c)
{
    hl_heap_lock(g);
    struct hl_sb *sb = take_from(g, h, c);
    hl_heap_unlock(g);
    return sb;
}

/* What shard g (locked) could give class c: its superblocks of c and its empty ones. */
static uint32_t stock(const struct hl_heap *g, unsigned c) { return g->cls[c].nsb + g->nempty; }

static HL_TLS uint32_t rnd_state;        /* per thread: the two random shards of get */
static uint32_t rnd(void)
{
    uint32_t x = rnd_state ? rnd_state : hl_me.id * 2654435761u + 1;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return rnd_state = x;
}

/* get: the thread's CPU's shard; then two random shards, taking from the fuller (two
 * choices concentrate the parked superblocks in few shards); then every shard in turn, so a
 * superblock parked anywhere is found before the OS is asked (none is stranded, and the
 * bound of §4.1 holds over the sum of the shards). Two shards are locked together only in
 * ascending shard number. */
struct hl_sb *hl_global_get(struct hl_heap *h, unsigned c)
{
    unsigned n = hl_heap_nshards;
    if (n == 1) return take_locked(hl_heap_global, h, c);
    struct hl_heap *here = shard_here();
    struct hl_sb *sb = take_locked(here, h, c);
    if (sb) return sb;
    if (n > 2) {
        unsigned i = rnd() % n, j = rnd() % (n - 1);
        j += j >= i;                                     /* distinct from i */
        struct hl_heap *a = hl_heap_shards[i < j ? i : j], *b = hl_heap_shards[i < j ? j : i];
        hl_heap_lock(a);
        hl_heap_lock(b);
        struct hl_heap *fuller = stock(a, c) >= stock(b, c) ? a : b;
        if (!(sb = take_from(fuller, h, c))) sb = take_from(fuller == a ? b : a, h, c);
        hl_heap_unlock(b);
        hl_heap_unlock(a);
        if (sb) return sb;
    }
    for (unsigned k = 0; k < n && !sb; k++)
        if (hl_heap_shards[k] != here) sb = take_locked(hl_heap_shards[k], h, c);
    return sb;
}

void hl_global_put(struct hl_heap *h, struct hl_sb *sb)
{
    struct hl_heap *g = shard_here();
    hl_heap_lock(g);
    hl_heap_detach(h, sb);
    if (hl_cfg.release_empty && hl_sb_empty(sb)) hl_sb_release(sb);
    else hl_heap_attach(g, sb);
    HL_COUNT(global_to, 1);
    if (HL_INVARIANT_CHECKS) hl_heap_check(g, -1);
    hl_heap_unlock(g);
}
