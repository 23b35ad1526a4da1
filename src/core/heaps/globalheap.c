/* globalheap.c — hoard's global heap, heap 0 (Hoard §3, Figure 2), as one heap or, with
 * global_shards = n > 1, as n shards, each a heap with its own lock (the 2026 Hoard): where a
 * per-processor heap's superblock goes when the heap crosses the emptiness threshold (put),
 * and where a heap that runs out of room looks before it asks the OS (get). hoard.c decides
 * when; this file, where. The shards are made with the other heaps and numbered after them
 * (heapselect.c: hl_heap_shards, hl_heap_is_shard); locks: a per-processor heap before any
 * shard, shards in ascending shard number.
 *
 * global_shard_key picks the thread's own shard, where put goes and get looks first, and the
 * group of shards get searches next (two random ones, the fuller first, then the rest of the
 * group), before every other shard:
 *   cpu     the shard of the CPU the thread runs on; the group: all shards (Hoard #88).
 *   node    node x spn + cpu mod spn, spn = shards per node; the group: the node's shards,
 *           so a superblock is stolen from the local node first (#89). One node: as cpu.
 *   thread  thread id mod shards, whatever CPU it runs on; the group: all shards (#95). */
#include <numa.h>
#include <sched.h>
#include "globalheap.h"
#include "heapselect.h"
#include "heap.h"
#include "remote.h"
#include "selector.h"

struct where { unsigned here, lo, len; };   /* own shard; group [lo, lo + len) */

static unsigned nodes(void)
{
    static unsigned n;                   /* a race writes the same value */
    if (!n) {
        int k = numa_available() < 0 ? 1 : numa_num_configured_nodes();
        n = k < 1 ? 1 : (unsigned)k;
    }
    return n;
}

static struct where where_now(void)
{
    unsigned n = hl_heap_nshards;
    if (hl_cfg.global_shard_key == HL_SHARD_THREAD) return (struct where){ hl_me.id % n, 0, n };
    if (hl_cfg.global_shard_key == HL_SHARD_NODE) {
        unsigned cpu, node, nn = nodes() < n ? nodes() : n, spn = n / nn;
        if (getcpu(&cpu, &node)) cpu = node = 0;
        unsigned lo = (node % nn) * spn;
        return (struct where){ lo + cpu % spn, lo, spn };
    }
    return (struct where){ (unsigned)hl_select_cpu() % n, 0, n };
}

/* Shards that may hold a superblock, bit k for shard k (global_shards <= 64): a hint read
 * without a lock, so that get locks only shards that may give something, and none when the
 * global heap is empty (a heap growing, all shards empty, took 64 locks per superblock from
 * the OS). Shard k's bit changes only under shard k's lock: put sets it; take_from_shard clears it
 * when the shard is left with none. A superblock released to the OS from a shard (hoard.c,
 * release_empty) leaves the bit set, which the next take_from there clears. The hint may be
 * stale by a concurrent put, as the scan's order already allowed (a superblock put into a
 * shard just scanned); blocks other threads free into a skipped shard (remote_free) wait for
 * its next superblock, as they waited for the next scan. */
static _Atomic uint64_t stocked;

static bool may_have(uint64_t may, unsigned k) { return may >> k & 1; }

/* Shard k (locked) holds superblocks or not: its bit follows, written only when it changes (a
 * put to a stocked shard, the common case, writes no shared line). */
static void mark(unsigned k, bool has)
{
    if (may_have(atomic_load_explicit(&stocked, memory_order_relaxed), k) == has) return;
    if (has) atomic_fetch_or_explicit(&stocked, 1ull << k, memory_order_relaxed);
    else atomic_fetch_and_explicit(&stocked, ~(1ull << k), memory_order_relaxed);
}

/* A superblock of class c from shard g (locked) into h: the fullest of class c, else an empty
 * one of any class (hl_heap_take). It becomes h's before g's lock is released, so a concurrent
 * free finds it in h. */
static struct hl_sb *take_from(struct hl_heap *g, struct hl_heap *h, unsigned c)
{
    if (hl_remote_pending(g)) hl_remote_collect(g);     /* what others freed comes back first */
    struct hl_sb *sb = hl_heap_take(g, c);
    if (sb) {
        hl_purge_unpark(sb);
        if (hl_meta_foreign_blocks)       /* census = on: Table 3's count */
            HL_COUNT(census_paper, hl_meta_foreign_blocks(sb, hl_sb_size));
        hl_heap_attach(h, sb);
        HL_COUNT(global_from, 1);
    }
    if (HL_INVARIANT_CHECKS) hl_heap_check(g, -1);
    return sb;
}

/* take_from shard k of several (locked), its hint kept. */
static struct hl_sb *take_from_shard(unsigned k, struct hl_heap *h, unsigned c)
{
    struct hl_sb *sb = take_from(hl_heap_shards[k], h, c);
    if (!hl_heap_shards[k]->nsb) mark(k, false);
    return sb;
}

static struct hl_sb *take_locked(unsigned k, struct hl_heap *h, unsigned c)
{
    hl_heap_lock(hl_heap_shards[k]);
    struct hl_sb *sb = take_from_shard(k, h, c);
    hl_heap_unlock(hl_heap_shards[k]);
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

/* get: the thread's own shard; then two random shards of its group, taking from the fuller
 * (two choices concentrate the parked superblocks in few shards); then the rest of the group,
 * then every other shard, so a superblock parked anywhere is found before the OS is asked
 * (none is stranded, and the bound of §4.1 holds over the sum of the shards). Only shards
 * whose `stocked` bit is set are locked. Locks: h's (the caller's), then one shard at a time,
 * or two together in ascending shard number; a shard's lock is never held while h's is
 * waited for. */
struct hl_sb *hl_global_get(struct hl_heap *h, unsigned c)
{
    unsigned n = hl_heap_nshards;
    if (n == 1) {                                        /* one global heap: no hint */
        hl_heap_lock(hl_heap_global);
        struct hl_sb *sb = take_from(hl_heap_global, h, c);
        hl_heap_unlock(hl_heap_global);
        return sb;
    }
    uint64_t may = atomic_load_explicit(&stocked, memory_order_relaxed);
    if (!may) return NULL;                               /* every shard empty: the OS */
    struct where w = where_now();
    struct hl_sb *sb = NULL;
    if (may_have(may, w.here) && (sb = take_locked(w.here, h, c))) return sb;
    if (w.len > 2) {
        unsigned i = rnd() % w.len, j = rnd() % (w.len - 1);
        j += j >= i;                                     /* distinct from i */
        i += w.lo, j += w.lo;
        unsigned lo = i < j ? i : j, hi = i < j ? j : i;
        if (may_have(may, lo) || may_have(may, hi)) {
            struct hl_heap *a = hl_heap_shards[lo], *b = hl_heap_shards[hi];
            hl_heap_lock(a);
            hl_heap_lock(b);
            unsigned fuller = stock(a, c) >= stock(b, c) ? lo : hi;
            if (!(sb = take_from_shard(fuller, h, c)))
                sb = take_from_shard(fuller == lo ? hi : lo, h, c);
            hl_heap_unlock(b);
            hl_heap_unlock(a);
            if (sb) return sb;
        }
    }
    for (unsigned k = w.lo; k < w.lo + w.len && !sb; k++)          /* the group */
        if (k != w.here && may_have(may, k)) sb = take_locked(k, h, c);
    for (unsigned k = 0; k < n && !sb; k++)                         /* the rest */
        if (k - w.lo >= w.len && may_have(may, k)) sb = take_locked(k, h, c);
    return sb;
}

void hl_global_attach(unsigned k, struct hl_sb *sb)
{
    hl_heap_attach(hl_heap_shards[k], sb);
    if (hl_heap_nshards > 1) mark(k, true);
}

void hl_global_put(struct hl_heap *h, struct hl_sb *sb)
{
    unsigned k = where_now().here;
    struct hl_heap *g = hl_heap_shards[k];
    hl_heap_lock(g);
    hl_heap_detach(h, sb);
    if (hl_cfg.release_empty && hl_sb_empty(sb)) {
        hl_sb_release(sb);
    } else {
        hl_heap_attach(g, sb);
        if (hl_heap_nshards > 1) mark(k, true);
        if (hl_sb_empty(sb)) hl_purge_park(sb);          /* purge, retain */
    }
    HL_COUNT(global_to, 1);
    if (HL_INVARIANT_CHECKS) hl_heap_check(g, -1);
    hl_heap_unlock(g);
}
