/* tlab_sb_cache.c — the TLAB's superblock cache (its section of tlab.h): its start, and the free
 * of a block of another heap that looks in it first (hl_tlab_free_other's first step). */
#include "tlab.h"

unsigned hl_tlab_sbc_shift;
uintptr_t hl_tlab_sbc_mask;
static hl_tlab_free_fn *free_uncached;   /* hl_tlab_free_other without the cache */

/* p, a block of sb, whose owner is not the TLAB's heap, into its bin if sb's entry e is good
 * and the bin has room (the slow half's count); false: the free goes on as without the
 * cache. */
static __attribute__((noinline)) bool push(void *p, struct hl_sb *sb, struct hl_tlab_sbc *e)
{
    if (!hl_tlab_own_bins()) return false;
    struct hl_tlab *t = hl_tlab_mine();
    if (!hl_tlab_sb_cache_current(t->sbc, &t->sbc_gen)) return false;
    struct hl_tlab_bin *bins = hl_me.tlab_bins, *b = hl_tlab_bin_at(bins, e->slot);
    if (b->room <= 0) return false;      /* full, or the bypass bin: the slow half decides */
    unsigned c = (unsigned)(b - bins);
    hl_tlab_publish_unseen(bins, c);
    *(void **)p = b->head;
    b->head = p;
    hl_tlab_move_uncounted(bins, c, -1);
    HL_COUNT(tlab_sb_hits, 1);
    hl_stats_free(sb->size);
    return true;
}

/* The lookup first, before any test of the thread's bins: the shared array's entries are all
 * empty (never written), and a miss, the common case of a block of another heap, costs the
 * remote free no more than the lookup (tools/hoardlab cost's remote column). */
static void free_other(void *p, struct hl_sb *sb)
{
    struct hl_tlab_sbc *e = hl_tlab_sb_cache_entry(hl_tlab_mine()->sbc, sb);
    if (hl_unlikely(e->sb == (uintptr_t)sb) && push(p, sb, e)) return;
    free_uncached(p, sb);
}

void hl_tlab_sb_cache_start(void)
{
    long ways = hl_cfg.tlab_sb_cache;
    if (ways && !hl_is_pow2((size_t)ways))
        hl_die("tlab_sb_cache = %ld: not a power of two; valid: 0 (off), 1, 2, 4, 8, 16, 32, 64",
               ways);
    hl_tlab_sbc_mask = ways ? ((uintptr_t)ways - 1) * sizeof(struct hl_tlab_sbc) : 0;
    hl_tlab_sbc_shift = (unsigned)__builtin_ctzl(hl_sb_size) - 4;
    if (ways) {
        free_uncached = hl_tlab_free_other;
        hl_tlab_free_other = free_other;
    }
}
