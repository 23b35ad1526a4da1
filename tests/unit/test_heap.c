/* test_heap.c — the private heap: fullness groups, allocation from the fullest superblock,
 * move-to-front on free, u and a, recycling an empty superblock for another class, taking
 * and finding the emptiest superblock, the consistency checker, and the statistics of the
 * superblocks holding blocks (hl_heaps_stats). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include "front.h"
#include "heappaths.h"

/* A heap with superblocks of class c filled to the given numbers of blocks. */
static struct hl_heap *heap_with(unsigned c, const uint32_t *fill, int n, struct hl_sb **sbs)
{
    static unsigned index = 1000;
    struct hl_heap *h = hl_heap_new(index++, true);
    for (int i = 0; i < n; i++) {
        sbs[i] = hl_sb_new(c);
        hl_heap_attach(h, sbs[i]);
        for (uint32_t b = 0; b < fill[i]; b++) hl_heap_alloc_from(h, sbs[i]);
    }
    hl_heap_check(h, -1);
    return h;
}

static void groups_and_accounting(void **state)
{
    (void)state;
    unsigned c = 0;
    uint32_t cap = hl_sb_capacity_of(c), fill[] = {0, 1, cap / 2, cap - 1, cap};
    struct hl_sb *sb[5];
    struct hl_heap *h = heap_with(c, fill, 5, sb);
    assert_int_equal(sb[0]->list, HL_LIST_EMPTY);
    assert_int_equal(sb[1]->list, 0);
    assert_int_equal(sb[2]->list, hl_heap_groups / 2);
    assert_int_equal(sb[3]->list, hl_heap_groups - 1);
    assert_int_equal(sb[4]->list, HL_LIST_FULL);
    size_t sz = hl_class_size(c);
    assert_int_equal(h->cls[c].acct->u, (1 + cap / 2 + cap - 1 + cap) * sz);
    assert_int_equal(h->cls[c].acct->a, 5 * (size_t)cap * sz);
    assert_int_equal(h->nsb, 5);
    assert_int_equal(h->nempty, 1);
    assert_int_equal(hl_heap_u(h), h->cls[c].acct->u);
}

static void allocates_from_the_fullest(void **state)
{
    (void)state;
    unsigned c = 1;
    uint32_t cap = hl_sb_capacity_of(c), fill[] = {1, cap - 2, cap / 2, cap};
    struct hl_sb *sb[4];
    struct hl_heap *h = heap_with(c, fill, 4, sb);
    void *p = hl_heap_alloc(h, c);
    assert_ptr_equal(hl_sb_of(p), sb[1]);                /* cap-2 of cap: the fullest */
    p = hl_heap_alloc(h, c);
    assert_ptr_equal(hl_sb_of(p), sb[1]);                /* now full */
    assert_int_equal(sb[1]->list, HL_LIST_FULL);
    p = hl_heap_alloc(h, c);
    assert_ptr_equal(hl_sb_of(p), sb[2]);
    hl_heap_check(h, -1);
}

static void free_moves_to_front(void **state)
{
    (void)state;
    unsigned c = 2;
    uint32_t cap = hl_sb_capacity_of(c), fill[] = {cap / 2, cap / 2, cap / 2};
    struct hl_sb *sb[3];
    struct hl_heap *h = heap_with(c, fill, 3, sb);
    unsigned g = sb[0]->list;
    assert_ptr_equal(h->cls[c].list[g], sb[2]);          /* pushed last: in front */
    void *p = hl_heap_alloc_from(h, sb[0]), *q = hl_heap_alloc_from(h, sb[0]);
    hl_heap_free(h, sb[0], q);
    if (sb[0]->list == g) assert_ptr_equal(h->cls[c].list[g], sb[0]);
    hl_heap_free(h, sb[0], p);
    assert_int_equal(sb[0]->list, g);
    assert_ptr_equal(h->cls[c].list[g], sb[0]);          /* freed into: moved to the front */
    hl_heap_check(h, -1);
}

static void empty_superblocks_are_recycled_for_any_class(void **state)
{
    (void)state;
    unsigned c = 0, other = hl_classes->count - 1;
    uint32_t fill[] = {0};
    struct hl_sb *sb[1];
    struct hl_heap *h = heap_with(c, fill, 1, sb);
    void *p = hl_heap_alloc(h, other);
    assert_non_null(p);
    assert_ptr_equal(hl_sb_of(p), sb[0]);
    assert_int_equal(sb[0]->cls, other);
    assert_int_equal(h->cls[c].acct->a, 0);
    assert_int_equal(h->cls[other].acct->a, hl_sb_bytes(sb[0]));
    assert_int_equal(h->nempty, 0);
    hl_heap_check(h, -1);
    assert_null(hl_heap_alloc(h, c));                    /* no room left for class c */
}

static void take_and_emptiest(void **state)
{
    (void)state;
    unsigned c = 3;
    uint32_t cap = hl_sb_capacity_of(c), fill[] = {cap, cap - 1, 1, cap / 2};
    struct hl_sb *sb[4];
    struct hl_heap *h = heap_with(c, fill, 4, sb);
    assert_ptr_equal(hl_heap_emptiest(h, c, 0.25), sb[2]);
    assert_ptr_equal(hl_heap_take(h, c), sb[1]);         /* the fullest with room */
    assert_int_equal(h->nsb, 3);
    hl_heap_check(h, -1);
    assert_ptr_equal(hl_heap_take(h, c), sb[3]);
    assert_ptr_equal(hl_heap_take(h, c), sb[2]);
    assert_null(hl_heap_take(h, c));                     /* only a full one left */
    assert_null(hl_heap_emptiest(h, c, 0.25));
    hl_heap_check(h, -1);
}

static void loose_blocks_come_first(void **state)
{
    (void)state;
    unsigned c = 0;
    uint32_t fill[] = {2};
    struct hl_sb *sb[1];
    struct hl_heap *h = heap_with(c, fill, 1, sb);
    struct hl_sb *elsewhere = hl_sb_new(c);
    void *foreign = hl_sb_pop(elsewhere);
    hl_heap_push_loose(h, c, foreign);
    assert_ptr_equal(hl_heap_alloc(h, c), foreign);
    assert_ptr_equal(hl_sb_of(hl_heap_alloc(h, c)), sb[0]);
}

/* sb_live and sb_live_used_bytes (heappaths.c, issue 36): superblocks holding a block, and
 * the bytes out of them, over the heaps; an empty superblock counts in neither. */
static void live_superblocks_counted(void **state)
{
    (void)state;
    struct hoardlab_stats before = {0}, after = {0};
    hl_heaps_stats(&before);
    struct hl_heap *h = hl_heap_mine();
    unsigned c = 2;
    uint32_t cap = hl_sb_capacity_of(c), fill[] = {0, 1, cap / 2, cap};
    hl_heap_lock(h);
    for (int i = 0; i < 4; i++) {
        struct hl_sb *sb = hl_sb_new(c);
        hl_heap_attach(h, sb);
        for (uint32_t b = 0; b < fill[i]; b++) hl_heap_alloc_from(h, sb);
    }
    hl_heap_unlock(h);
    hl_heaps_stats(&after);
    assert_int_equal(after.sb_live - before.sb_live, 3);
    assert_int_equal(after.sb_live_used_bytes - before.sb_live_used_bytes,
                     (1 + cap / 2 + cap) * hl_class_size(c));
}

int main(void)
{
    /* Whatever strategy runs, a heap set of our own: the mechanisms alone. */
    setenv("HOARD_ACCOUNTING", "class", 1);   /* the per-class accounts are what it checks */
    hl_init();
    hl_heaps_init(false, false);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_and_accounting),
        cmocka_unit_test(allocates_from_the_fullest),
        cmocka_unit_test(free_moves_to_front),
        cmocka_unit_test(empty_superblocks_are_recycled_for_any_class),
        cmocka_unit_test(take_and_emptiest),
        cmocka_unit_test(loose_blocks_come_first),
        cmocka_unit_test(live_superblocks_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
