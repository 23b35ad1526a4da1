/* census.c — allocator-induced false sharing, counted (Hoard §5.3, Table 3), two ways: the
 * broad count below (census_false_blocks, _lines), and the paper's own, narrower one
 * (census_paper: hoard asks hl_census_foreign_blocks when a heap takes a superblock from the
 * global heap how many blocks in it other live threads still hold).
 *
 * For every cache line (HL_CACHE_LINE bytes) that holds live blocks, the census keeps which
 * blocks they are and which thread each was handed to. When a block is handed to a thread
 * while another live thread holds a live block on one of the lines it touches, the allocator
 * has put two threads' data on one line: census_false_blocks counts such blocks, and
 * census_false_lines the distinct lines on which it happened at least once.
 *
 * Only a block's first and last line can hold other blocks (blocks do not overlap), so a block
 * enters at most two lines, and since blocks are at least HL_ALIGN bytes a line holds at most
 * HL_CACHE_LINE / HL_ALIGN of them. Threads are told apart by a serial number that is never
 * reused (dense thread ids are); a thread that has exited holds nothing any more. A block
 * freed by another thread simply leaves.
 *
 * Metadata false sharing (the uC++ report's free-list heads): hl_census_touch(object) records,
 * per cache line, the thread and object that touched it last; a touch by another thread of
 * another object on that line is one census_meta_false. That is the coherence miss padding
 * removes. One spin lock guards the tables: the census is a
 * measurement mode, and it must not add to the allocator's own lock counts, hence no hl_lock.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include "instruments.h"

#define PER_LINE    (HL_CACHE_LINE / HL_ALIGN)
#define MAX_SERIALS (1u << 22)

struct line {
    uintptr_t key;                   /* line number + 1; 0: empty entry */
    uintptr_t block[PER_LINE];       /* start of each live block on the line; 0: none */
    uint32_t holder[PER_LINE];       /* serial of the thread it was handed to */
};

struct table { uintptr_t *keys; struct line *lines; size_t cap, used; };

static atomic_flag census_lock = ATOMIC_FLAG_INIT;
static struct table live;            /* lines with live blocks: struct line entries */
static struct table flagged;         /* lines already counted in census_false_lines: keys */
static _Atomic uint8_t *alive;       /* alive[serial]: 1 while that thread runs */
static _Atomic uint32_t next_serial;

#define META_SLOTS 4096                 /* direct-mapped by line; a collision restarts a line */
struct meta_line { uintptr_t key; uintptr_t object; uint32_t toucher; };
static struct meta_line *meta;

static void *map(size_t bytes)
{
    void *p = hl_os_mmap(bytes, MAP_NORESERVE);
    return p == MAP_FAILED ? NULL : p;
}

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&census_lock, memory_order_acquire)) sched_yield();
}

static void unlock(void) { atomic_flag_clear_explicit(&census_lock, memory_order_release); }

static size_t home(const struct table *t, uintptr_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (t->cap - 1);
}

/* ---- one open-addressing table shape for both: keys, and optionally a line per key -------- */

static uintptr_t key_at(const struct table *t, size_t i)
{
    return t->lines ? t->lines[i].key : t->keys[i];
}

static size_t find(const struct table *t, uintptr_t key)
{
    size_t i = home(t, key);
    while (key_at(t, i) && key_at(t, i) != key) i = (i + 1) & (t->cap - 1);
    return i;
}

static bool table_alloc(struct table *t, size_t cap, bool with_lines)
{
    t->cap = cap;
    t->used = 0;
    t->keys = NULL;
    t->lines = NULL;
    if (with_lines) return (t->lines = map(cap * sizeof *t->lines)) != NULL;
    return (t->keys = map(cap * sizeof *t->keys)) != NULL;
}

/* Double the table when half full; false (and the table unchanged) if mmap fails. */
static bool table_room(struct table *t)
{
    if ((t->used + 1) * 2 <= t->cap) return true;
    struct table old = *t;
    if (!table_alloc(t, old.cap * 2, old.lines != NULL)) {
        *t = old;
        return false;
    }
    for (size_t i = 0; i < old.cap; i++) {
        uintptr_t k = key_at(&old, i);
        if (!k) continue;
        size_t j = find(t, k);
        if (t->lines) t->lines[j] = old.lines[i];
        else t->keys[j] = k;
        t->used++;
    }
    hl_os_munmap(old.lines ? (void *)old.lines : (void *)old.keys,
           old.cap * (old.lines ? sizeof *old.lines : sizeof *old.keys));
    return true;
}

/* Remove entry i of the line table, shifting later entries of its probe run back. */
static void line_remove(struct table *t, size_t i)
{
    size_t j = i;
    t->lines[i].key = 0;
    t->used--;
    for (;;) {
        j = (j + 1) & (t->cap - 1);
        if (!t->lines[j].key) return;
        size_t h = home(t, t->lines[j].key);
        bool stays = i < j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            t->lines[i] = t->lines[j];
            t->lines[j].key = 0;
            i = j;
        }
    }
}

/* ---- the hooks --------------------------------------------------------------------------- */

/* A fork while another thread holds the census lock would leave the child's copy held. */
void hl_census_fork(int phase)
{
    if (!alive) return;                     /* census off */
    if (phase == HL_FORK_PREPARE) lock();
    else unlock();
}

bool hl_census_init(void)
{
    alive = map(MAX_SERIALS * sizeof *alive);
    meta = map(META_SLOTS * sizeof *meta);
    if (!alive || !meta || !table_alloc(&live, 1u << 16, true) || !table_alloc(&flagged, 1u << 10, false)) {
        hl_say("census: out of memory; census off");
        return false;
    }
    return true;
}

static uint32_t serial_of(struct hl_thread *t)
{
    if (hl_unlikely(!t->census)) {
        uint32_t s = atomic_fetch_add(&next_serial, 1);
        if (s >= MAX_SERIALS) s = MAX_SERIALS - 1;     /* beyond 4M threads: they merge */
        atomic_store_explicit(&alive[s], 1, memory_order_relaxed);
        t->census = (void *)&alive[s];
    }
    return (uint32_t)((_Atomic uint8_t *)t->census - alive);
}

/* Enter block p (held by serial s) on line n; true if another live thread holds a block
 * there. */
static bool enter(uintptr_t n, uintptr_t p, uint32_t s)
{
    if (!table_room(&live)) return false;          /* out of memory: stop counting */
    size_t i = find(&live, n + 1);
    struct line *l = &live.lines[i];
    if (!l->key) {                       /* a fresh entry: removal leaves old slots behind */
        memset(l, 0, sizeof *l);
        l->key = n + 1;
        live.used++;
    }
    bool shared = false;
    int free_slot = -1;
    for (int k = 0; k < (int)PER_LINE; k++) {
        if (!l->block[k]) free_slot = k;
        else if (l->holder[k] != s &&
                 atomic_load_explicit(&alive[l->holder[k]], memory_order_relaxed))
            shared = true;
    }
    if (free_slot >= 0) {                /* always, as blocks do not overlap */
        l->block[free_slot] = p;
        l->holder[free_slot] = s;
    }
    if (shared) {
        size_t f = find(&flagged, n + 1);
        if (!flagged.keys[f] && table_room(&flagged)) {
            flagged.keys[find(&flagged, n + 1)] = n + 1;
            flagged.used++;
            HL_COUNT(census_false_lines, 1);
        }
    }
    return shared;
}

static void leave(uintptr_t n, uintptr_t p)
{
    size_t i = find(&live, n + 1);
    struct line *l = &live.lines[i];
    if (!l->key) return;                 /* handed out before the census started */
    bool empty = true;
    for (int k = 0; k < (int)PER_LINE; k++) {
        if (l->block[k] == p) l->block[k] = 0;
        if (l->block[k]) empty = false;
    }
    if (empty) line_remove(&live, i);
}

void hl_census_alloc(struct hl_thread *t, void *p, size_t usable)
{
    uintptr_t a = (uintptr_t)p, first = a / HL_CACHE_LINE;
    uintptr_t last = (a + (usable ? usable : 1) - 1) / HL_CACHE_LINE;
    uint32_t s = serial_of(t);
    lock();
    bool shared = enter(first, a, s);
    if (last != first && enter(last, a, s)) shared = true;
    unlock();
    if (shared) HL_COUNT(census_false_blocks, 1);
}

void hl_census_free(void *p, size_t usable)
{
    uintptr_t a = (uintptr_t)p, first = a / HL_CACHE_LINE;
    uintptr_t last = (a + (usable ? usable : 1) - 1) / HL_CACHE_LINE;
    lock();
    leave(first, a);
    if (last != first) leave(last, a);
    unlock();
}

void hl_census_touch(struct hl_thread *t, const void *object)
{
    uintptr_t n = (uintptr_t)object / HL_CACHE_LINE;
    uint32_t s = serial_of(t);
    struct meta_line *m = &meta[(n * 0x9e3779b97f4a7c15ull >> 40) % META_SLOTS];
    lock();
    bool falsely = m->key == n + 1 && m->toucher != s && m->object != (uintptr_t)object;
    *m = (struct meta_line){ n + 1, (uintptr_t)object, s };
    unlock();
    if (falsely) HL_COUNT(census_meta_false, 1);
}

/* Blocks that start in [start, start + bytes) and that a live thread other than t holds (a
 * block on two lines is counted on its first). */
uint64_t hl_census_foreign_blocks(struct hl_thread *t, const void *start, size_t bytes)
{
    uintptr_t a = (uintptr_t)start, first = a / HL_CACHE_LINE;
    uintptr_t last = (a + bytes - 1) / HL_CACHE_LINE;
    uint32_t s = serial_of(t);
    uint64_t n = 0;
    lock();
    for (uintptr_t line = first; line <= last; line++) {
        const struct line *l = &live.lines[find(&live, line + 1)];
        if (!l->key) continue;
        for (int k = 0; k < (int)PER_LINE; k++)
            n += l->block[k] && l->block[k] / HL_CACHE_LINE == line && l->holder[k] != s &&
                 atomic_load_explicit(&alive[l->holder[k]], memory_order_relaxed);
    }
    unlock();
    return n;
}

void hl_census_thread_exit(struct hl_thread *t)
{
    if (t->census) atomic_store_explicit((_Atomic uint8_t *)t->census, 0, memory_order_relaxed);
}
