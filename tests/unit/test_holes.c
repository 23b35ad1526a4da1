/* test_holes.c — purge_holes = on (src/core/mem/superblock.c, src/core/heap/purge.c): free pages
 * inside superblocks that still hold blocks go back to the OS without losing a free block.
 * One configuration per meson run (tests/unit/meson.build):
 *   - spread survivors: 16..512 B blocks, every 32nd kept, the rest freed; hoardlab_collect()
 *     gives back every page no survivor touches (below the carved end) (mincore: not resident; hole_purged_bytes and
 *     purged_bytes count them), every superblock's free list and holes still account for all
 *     its free blocks (hl_sb_check), and allocating as much again hands out no block twice
 *     (no two live blocks overlap), the survivors' contents intact, holes taken back;
 *   - with the program idle after such a drain, the purge thread's sweep makes nearly every
 *     unit no survivor touches a hole (no collect; it waits for the sweep, never times it);
 *   - the free lists survive a purge at the lowest group's crossing, too (no collect);
 *   - threads allocate, keep every 32nd block, free and reuse the same pages while another
 *     thread purges them again and again (hoardlab_collect): every block keeps its contents.
 * Bounds come from the survivors' addresses, never from time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "hoard.h"
#include "purge.h"
#include "tlab.h"

#define KEEP 32                          /* every KEEP-th block survives */

static unsigned rnd(unsigned *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }
static size_t size_of(unsigned *s) { return 16 + rnd(s) % 497; }   /* 16 .. 512 B */

static void fill(unsigned char *p, size_t n, unsigned tag)
{
    for (size_t j = 0; j < n; j++) p[j] = (unsigned char)(tag * 31 + j);
}
static void expect(const unsigned char *p, size_t n, unsigned tag)
{
    for (size_t j = 0; j < n; j++)
        if (p[j] != (unsigned char)(tag * 31 + j))
            fail_msg("block %p (tag %u): byte %zu is %u, not %u", (const void *)p, tag, j, p[j],
                     (unsigned char)(tag * 31 + j));
}

/* Every superblock of every heap: its header, free list and holes agree (hl_sb_check). */
static void check_sbs(struct hl_heap *h, void *arg)
{
    (void)arg;
    hl_heap_enter(h);
    for (unsigned c = 0; c < hl_classes->count; c++)
        for (unsigned l = 0; l <= HL_LIST_EMPTY; l++)
            for (struct hl_sb *sb = h->cls[c].list[l]; sb; sb = sb->next) hl_sb_check(sb);
    hl_heap_check(h, -1);
    hl_heap_leave(h);
}

static uint64_t holes_now(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    assert_true(s.purged_bytes >= s.hole_purged_bytes);
    return s.hole_purged_bytes;
}

struct blk { uintptr_t at; size_t len; };
static int by_at(const void *a, const void *b)
{
    uintptr_t x = ((const struct blk *)a)->at, y = ((const struct blk *)b)->at;
    return x < y ? -1 : x > y;
}

/* No two of the n live blocks overlap (each as long as its usable size). */
static void expect_disjoint(struct blk *v, size_t n)
{
    qsort(v, n, sizeof *v, by_at);
    for (size_t i = 1; i < n; i++)
        if (v[i - 1].at + v[i - 1].len > v[i].at)
            fail_msg("blocks %#lx (%zu B) and %#lx overlap", (unsigned long)v[i - 1].at,
                     v[i - 1].len, (unsigned long)v[i].at);
}

/* The unit u of sb holds a byte of a survivor: marks in *live (a bit per unit). */
static void mark_live(uint64_t *live, const void *p, size_t usable, const struct hl_sb *sb)
{
    size_t off = (size_t)((const char *)p - (const char *)sb);
    for (size_t u = off >> hl_sb_hole_shift; u <= (off + usable - 1) >> hl_sb_hole_shift; u++)
        *live |= 1ull << u;
}

enum { N = 60000 };                      /* ~16 MiB of 16..512 B blocks */
static unsigned char *v[N];
static size_t len[N];
static unsigned tags[N];

/* The survivors' superblocks and, per superblock, a bit per unit a survivor touches. */
enum { MAXSB = 4096 };
static struct hl_sb *sbs[MAXSB];
static uint64_t live[MAXSB];
static unsigned nsb;

/* N blocks of 16..512 B allocated, every KEEP-th kept and the rest freed, in allocation
 * order or shuffled (a page then empties only late in the drain, as in a program's); sbs
 * and live set. */
static void drain_to_spread(unsigned seed, bool shuffled)
{
    static unsigned order[N];
    for (unsigned i = 0; i < N; i++) {
        len[i] = size_of(&seed);
        assert_non_null(v[i] = hl_malloc(len[i]));
        fill(v[i], len[i], i);
        order[i] = i;
    }
    for (unsigned i = N - 1; shuffled && i > 0; i--) {
        unsigned j = rnd(&seed) % (i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (unsigned k = 0; k < N; k++) {
        unsigned i = order[k];
        if (i % KEEP) {
            hl_free(v[i]);
            v[i] = NULL;
        }
    }
    nsb = 0;
    for (unsigned i = 0; i < N; i += KEEP) {
        struct hl_sb *sb = hl_sb_of(v[i]);
        unsigned k = 0;
        while (k < nsb && sbs[k] != sb) k++;
        if (k == nsb) {
            assert_true(nsb < MAXSB);
            sbs[nsb] = sb, live[nsb++] = 1;                /* the header's unit */
        }
        mark_live(&live[k], v[i], hl_sb_usable(v[i]), sb);
    }
}

/* The units of sbs[k] that can be holes: wholly carved, not the header's; 0 if none. */
static unsigned last_unit(const struct hl_sb *sb)
{
    size_t end = HL_SB_HEADER + (size_t)sb->carved * sb->size;
    if (sb->size > hl_sb_hole_unit || end >> hl_sb_hole_shift < 2) return 0;
    return (unsigned)(end >> hl_sb_hole_shift) - 1;
}

static void spread_survivors_are_given_back(void **state)
{
    (void)state;
    drain_to_spread(7, false);
    uint64_t before = holes_now();
    hoardlab_collect();                  /* this thread's TLAB first, then every heap */
    size_t want = 0, resident = 0, units = 0, unit = hl_sb_hole_unit;
    unsigned char vec[64 * 16];
    for (unsigned k = 0; k < nsb; k++) {
        struct hl_sb *sb = sbs[k];
        unsigned last = last_unit(sb);
        assert_int_equal(mincore(sb, hl_sb_size, vec), 0);
        for (unsigned u = 1; u <= last; u++) {
            units++;
            if (live[k] >> u & 1) continue;
            want++;
            for (size_t pg = u * unit / HL_PAGE; pg < (u + 1) * unit / HL_PAGE; pg++)
                if (vec[pg] & 1) {
                    resident++;
                    break;
                }
        }
    }
    uint64_t holes = holes_now();
    printf("# %u superblocks hold survivors: %zu of their %zu units hold none; after collect "
           "%zu of those resident, hole_purged_bytes %llu (before %llu)\n", nsb, want, units,
           resident, (unsigned long long)holes, (unsigned long long)before);
    assert_true(want > units / 8);       /* the layout spreads: many units hold no survivor */
    assert_true(resident <= want / 20);  /* given back */
    assert_true(holes >= (uint64_t)want * unit * 9 / 10);
    hl_heaps_foreach(check_sbs, NULL);
    for (unsigned i = 0; i < N; i += KEEP) expect(v[i], len[i], i);

    /* As much again: the holes are taken back, no block twice. */
    unsigned seed = 11;
    for (unsigned i = 0; i < N; i++)
        if (i % KEEP) {
            len[i] = size_of(&seed);
            assert_non_null(v[i] = hl_malloc(len[i]));
            fill(v[i], len[i], i + 1000000);
        }
    struct blk *all = malloc(N * sizeof *all);
    for (unsigned i = 0; i < N; i++) all[i] = (struct blk){ (uintptr_t)v[i], hl_sb_usable(v[i]) };
    expect_disjoint(all, N);
    free(all);
    for (unsigned i = 0; i < N; i++) expect(v[i], len[i], i % KEEP ? i + 1000000 : i);
    uint64_t after = holes_now();
    printf("# allocated as much again: hole_purged_bytes %llu\n", (unsigned long long)after);
    assert_true(after < holes);
    for (unsigned i = 0; i < N; i++) {
        hl_free(v[i]);
        v[i] = NULL;
    }
    hoardlab_collect();
    hl_heaps_foreach(check_sbs, NULL);
}

/* The units of the survivors' superblocks that hold none, and of those how many are holes
 * now (each superblock read under its owner's lock). */
static void count_holes(size_t *want, size_t *holes)
{
    *want = *holes = 0;
    for (unsigned k = 0; k < nsb; k++) {
        struct hl_heap *h = hl_heap_lock_owner(sbs[k]);
        for (unsigned u = 1, last = last_unit(sbs[k]); u <= last; u++)
            if (!(live[k] >> u & 1)) {
                ++*want;
                *holes += sbs[k]->holes >> u & 1;
            }
        hl_heap_unlock(h);
    }
}

/* With the program idle after a drain in random order (no malloc, no free, no collect), the
 * purge thread's sweep purges the holes the frees after the lowest group's last quartering
 * left (about a third of them here: without the sweep the test fails): nearly
 * every unit no survivor touches becomes a hole, less one a superblock (below). Waits for
 * it up to 20 s (the sweep's period is at most decay_ms or purge_delay, here 1 s), never
 * timing it. */
static void idle_sweep_gives_back(void **state)
{
    (void)state;
    drain_to_spread(5, true);
    hl_tlab_flush();                     /* what this thread's TLAB holds goes back first */
    size_t want, holes, first;
    count_holes(&want, &first);
    holes = first;
    /* (a superblock's last free unit stays back if all its free blocks would be in holes:
     * one a superblock is allowed; 8 KiB superblocks have one unit to give at most, so the
     * test cannot fail there) */
    for (int i = 0; i < 200 && holes + nsb < want * 9 / 10; i++) {
        usleep(100 * 1000);
        count_holes(&want, &holes);
    }
    printf("# %u superblocks hold survivors, %zu units hold none: holes %zu after the drain, "
           "%zu after the sweep\n", nsb, want, first, holes);
    assert_true(want > 0);
    assert_true(holes + nsb >= want * 9 / 10);
    hl_heaps_foreach(check_sbs, NULL);
    for (unsigned i = 0; i < N; i++) {
        if (v[i]) expect(v[i], len[i], i);
        hl_free(v[i]);
        v[i] = NULL;
    }
}

/* The lowest group's crossing purges too (no collect): each size drained to every 32nd block
 * through frees into the heaps, then reused; the free lists and holes stay whole. */
static void crossing_purge_keeps_free_lists(void **state)
{
    (void)state;
    uint64_t before = holes_now(), most = 0;
    unsigned seed = 3;
    for (int round = 0; round < 3; round++) {
        for (unsigned i = 0; i < N; i++) {
            if (v[i]) continue;
            len[i] = size_of(&seed);
            assert_non_null(v[i] = hl_malloc(len[i]));
            fill(v[i], len[i], tags[i] = i + (unsigned)round * 100000);
        }
        for (unsigned i = 0; i < N; i++)
            if ((i + (unsigned)round) % KEEP) {
                expect(v[i], len[i], tags[i]);
                hl_free(v[i]);
                v[i] = NULL;
            }
        hl_heaps_foreach(check_sbs, NULL);
        uint64_t h = holes_now();
        if (h > most) most = h;
    }
    printf("# hole_purged_bytes at most %llu after a round's frees (before %llu)\n",
           (unsigned long long)most, (unsigned long long)before);
    assert_true(most > before);          /* frees into the lowest group purged some */
    for (unsigned i = 0; i < N; i++) {
        if (v[i]) expect(v[i], len[i], tags[i]);
        hl_free(v[i]);
        v[i] = NULL;
    }
    hl_heaps_foreach(check_sbs, NULL);
}

/* Threads allocate, keep every 32nd block, free the rest, and reuse those pages, while the
 * main thread purges them again and again. */
static _Atomic bool stop;
static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    enum { K = 4096, ROUNDS = 40 };
    unsigned char **b = calloc(K, sizeof *b);
    size_t *n = calloc(K, sizeof *n);
    unsigned *tag = calloc(K, sizeof *tag);
    for (unsigned r = 0; r < ROUNDS || !atomic_load(&stop); r++) {
        for (unsigned k = 0; k < K; k++) {
            if (b[k]) continue;
            n[k] = size_of(&seed);
            tag[k] = rnd(&seed);
            b[k] = hl_malloc(n[k]);
            assert_non_null(b[k]);
            fill(b[k], n[k], tag[k]);
        }
        for (unsigned k = 0; k < K; k++)
            if ((k + r) % KEEP) {
                expect(b[k], n[k], tag[k]);
                hl_free(b[k]);
                b[k] = NULL;
            }
        if (r > 100000) break;
    }
    for (unsigned k = 0; k < K; k++)
        if (b[k]) {
            expect(b[k], n[k], tag[k]);
            hl_free(b[k]);
        }
    free(b), free(n), free(tag);
    return NULL;
}

static void purge_while_others_reuse(void **state)
{
    (void)state;
    enum { T = 3 };
    pthread_t t[T];
    atomic_store(&stop, false);
    for (uintptr_t i = 0; i < T; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
    size_t given = 0;
    for (int i = 0; i < 300; i++) {
        given += hoardlab_collect();
        usleep(200);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < T; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
    printf("# collect gave back %zu bytes while the threads ran\n", given);
    hoardlab_collect();
    hl_heaps_foreach(check_sbs, NULL);
}

int main(void)
{
    hl_init();
    hl_free(hl_malloc(1));
    if (!hl_cfg.purge_holes) {
        printf("# purge_holes is off: nothing to test\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_sweep_gives_back),
        cmocka_unit_test(spread_survivors_are_given_back),
        cmocka_unit_test(crossing_purge_keeps_free_lists),
        cmocka_unit_test(purge_while_others_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
