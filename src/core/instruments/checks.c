/* checks.c — the `checks = on` mode: catch double frees and frees of pointers hoardlab never
 * handed out, for every strategy alike, before the strategy's free sees them.
 *
 * A set of live blocks, filled by every allocation (interpose.c's hl_check_alloc calls) and consulted by every
 * free. Open addressing with linear probing, split into shards by the pointer's hash so threads
 * rarely meet on a lock. A slot holds 0 (empty), the block's address (live), or the address
 * with bit 0 set (freed: a tombstone that remembers the block until the next rehash). Frees
 * dropped from the table by a rehash are still remembered in a small ring per shard, so a
 * double free long after the first is named as one, not as a foreign pointer.
 *
 * Memory comes from hl_os_alloc (no malloc inside the library) and counts in A; the mode is
 * for finding bugs, not for measuring. A block handed out twice while live is an allocator bug
 * and is reported too. */
#include <pthread.h>
#include <stdlib.h>
#include "instruments.h"

bool hl_checking;

#define SHARDS     64u
#define RING       256u                /* remembered frees per shard */
#define MIN_SLOTS  1024u
#define FREED      ((uintptr_t)1)

struct shard {
    hl_lock lock;
    uintptr_t *slot;
    size_t cap, live, used;            /* used: live + tombstones */
    uintptr_t ring[RING];
    unsigned ring_next;
} HL_CACHE_ALIGNED;

static struct shard shards[SHARDS];

static inline uint64_t hash(uintptr_t p) { return (uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull; }
static inline struct shard *shard_of(uint64_t h) { return &shards[h >> 58]; }
static inline size_t home(uint64_t h, size_t cap) { return (size_t)(h ^ (h >> 29)) & (cap - 1); }

static const char *strategy_name(void) { return hl_active ? hl_active->name : "none yet"; }

/* Slot holding p (live or freed), or the empty slot where p would go. */
static uintptr_t *find(struct shard *s, uintptr_t p, uint64_t h)
{
    for (size_t i = home(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
        uintptr_t v = s->slot[i];
        if (v == 0 || (v & ~FREED) == p) return &s->slot[i];
    }
}

/* Grow (or just sweep tombstones from) a shard: a fresh table of at least four times the live
 * blocks, so the next rehash is at least cap/2 insertions away (amortised O(1)). */
static void rehash(struct shard *s)
{
    size_t cap = MIN_SLOTS;
    while (cap < 4 * (s->live + 1)) cap <<= 1;
    uintptr_t *old = s->slot;
    size_t old_cap = s->cap;
    s->slot = hl_os_alloc(cap * sizeof *s->slot, HL_PAGE, HL_OS_META);
    if (!s->slot) hl_die("checks: out of memory for the table of live blocks");
    s->cap = cap;
    s->used = s->live;
    for (size_t i = 0; i < old_cap; i++) {
        uintptr_t v = old[i];
        if (v && !(v & FREED)) *find(s, v, hash(v)) = v;
    }
    if (old) hl_os_free(old, old_cap * sizeof *old, HL_OS_META);
}

void hl_check_alloc(void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    uint64_t h = hash(p);
    struct shard *s = shard_of(h);
    hl_lock_acquire(&s->lock);
    if (hl_unlikely(!s->slot || 4 * (s->used + 1) > 3 * s->cap)) rehash(s);
    uintptr_t *slot = find(s, p, h);
    if (hl_unlikely(*slot == p)) {
        hl_say("hoardlab handed out %p twice without a free in between (strategy %s); "
               "aborting", ptr, strategy_name());
        abort();
    }
    if (*slot == 0) s->used++;         /* else it reuses the block's own tombstone */
    *slot = p;
    s->live++;
    hl_lock_release(&s->lock);
}

void hl_check_free(void *ptr)
{
    if (hl_bootstrap_owns(ptr)) return;   /* handed out before checking started */
    uintptr_t p = (uintptr_t)ptr;
    uint64_t h = hash(p);
    struct shard *s = shard_of(h);
    hl_lock_acquire(&s->lock);
    uintptr_t *slot = s->slot ? find(s, p, h) : NULL;
    if (hl_likely(slot && *slot == p)) {
        *slot = p | FREED;
        s->live--;
        s->ring[s->ring_next++ % RING] = p;
        hl_lock_release(&s->lock);
        return;
    }
    bool freed = slot && *slot == (p | FREED);
    for (unsigned i = 0; i < RING && !freed; i++) freed = s->ring[i] == p;
    hl_lock_release(&s->lock);
    if (freed)
        hl_say("double free of %p (strategy %s); aborting", ptr, strategy_name());
    else
        hl_say("free of %p, which hoardlab never returned (strategy %s); aborting", ptr,
               strategy_name());
    abort();
}

/* ---- fork: every shard lock (fork.c orders it among the others) ------------------------------ */

void hl_checks_fork(int phase)
{
    if (!hl_checking) return;
    if (phase == HL_FORK_PREPARE)
        for (unsigned i = 0; i < SHARDS; i++) hl_lock_acquire(&shards[i].lock);
    else if (phase == HL_FORK_PARENT)
        for (unsigned i = SHARDS; i-- > 0;) hl_lock_release(&shards[i].lock);
    else
        for (unsigned i = 0; i < SHARDS; i++) hl_lock_init(&shards[i].lock);
}

void hl_check_init(void) { hl_checking = hl_cfg.checks; }
