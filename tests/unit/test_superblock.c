/* test_superblock.c — the superblock mechanism: header by masking, lazy carving, LIFO and FIFO
 * free lists, the in-use count, re-formatting an empty superblock for another class, and the
 * boundary at S/2 where objects go to the OS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "front.h"
#include "mem.h"
#include "large.h"
#include "superblock.h"

static void header_by_masking(void **state)
{
    (void)state;
    for (unsigned c = 0; c < hl_classes->count; c += 3) {
        struct hl_sb *sb = hl_sb_new(c);
        assert_non_null(sb);
        assert_int_equal((uintptr_t)sb % hl_sb_size, 0);
        assert_int_equal(hl_pagemap_get(sb), HL_OWNER_STRATEGY);
        uint32_t cap = sb->capacity;
        assert_true(cap >= 1);
        assert_true(HL_SB_HEADER + (size_t)cap * sb->size <= hl_sb_size);
        char *prev = NULL;
        for (uint32_t i = 0; i < cap; i++) {
            char *p = hl_sb_pop(sb);
            assert_ptr_equal(hl_sb_of(p), sb);
            assert_ptr_equal(hl_sb_of(p + sb->size - 1), sb);
            assert_int_equal((uintptr_t)p % HL_ALIGN, 0);
            if (prev) assert_ptr_equal(p, prev + sb->size);        /* carved in order */
            prev = p;
        }
        assert_true(hl_sb_full(sb));
        assert_int_equal(sb->used, cap);
        hl_sb_check(sb);
        hl_sb_release(sb);
    }
}

static void lifo_reuses_the_last_freed(void **state)
{
    (void)state;
    struct hl_sb *sb = hl_sb_new(2);
    void *a = hl_sb_pop(sb), *b = hl_sb_pop(sb), *c = hl_sb_pop(sb);
    hl_sb_push(sb, a);
    hl_sb_push(sb, c);
    assert_int_equal(sb->used, 1);
    hl_sb_check(sb);
    assert_ptr_equal(hl_sb_pop(sb), c);
    assert_ptr_equal(hl_sb_pop(sb), a);
    assert_ptr_not_equal(hl_sb_pop(sb), b);              /* the free list is used up: carve */
    hl_sb_check(sb);
    (void)b;
}

static void fifo_reuses_the_first_freed(void **state)
{
    (void)state;
    int saved = hl_sb_fifo;
    hl_sb_fifo = 1;
    struct hl_sb *sb = hl_sb_new(2);
    void *a = hl_sb_pop(sb), *b = hl_sb_pop(sb), *c = hl_sb_pop(sb);
    hl_sb_push(sb, a);
    hl_sb_push(sb, c);
    hl_sb_push(sb, b);
    hl_sb_check(sb);
    assert_ptr_equal(hl_sb_pop(sb), a);
    assert_ptr_equal(hl_sb_pop(sb), c);
    hl_sb_push(sb, a);
    assert_ptr_equal(hl_sb_pop(sb), b);
    assert_ptr_equal(hl_sb_pop(sb), a);
    hl_sb_check(sb);
    hl_sb_fifo = saved;
}

static void empty_superblock_serves_any_class(void **state)
{
    (void)state;
    unsigned small = 0, big = hl_classes->count - 1;
    struct hl_sb *sb = hl_sb_new(small);
    void *p = hl_sb_pop(sb);
    hl_sb_push(sb, p);
    assert_true(hl_sb_empty(sb));
    hl_sb_format(sb, big);
    assert_int_equal(sb->cls, big);
    assert_int_equal(sb->size, hl_class_size(big));
    assert_int_equal(sb->capacity, hl_sb_capacity_of(big));
    assert_int_equal(sb->tlab_slot, hl_cache_slot(big));
    char *q = hl_sb_pop(sb);
    assert_ptr_equal(q, (char *)sb + HL_SB_HEADER);
    hl_sb_check(sb);
}

static void objects_above_half_a_superblock_go_to_the_os(void **state)
{
    (void)state;
    assert_int_equal(hl_large_threshold, hl_sb_size / 2);
    void *small = hl_malloc(hl_sb_size / 2), *large = hl_malloc(hl_sb_size / 2 + 1);
    assert_int_equal(hl_pagemap_get(small), HL_OWNER_STRATEGY);
    assert_int_equal(hl_pagemap_get(large), HL_OWNER_LARGE);
    assert_int_equal(hl_sb_of(small)->magic, HL_SB_MAGIC);
    assert_true(hl_malloc_usable_size(small) >= hl_sb_size / 2);
    hl_free(small);
    hl_free(large);
}

static void memalign_inside_superblocks(void **state)
{
    (void)state;
    for (size_t align = 32; align <= hl_sb_size / 4; align *= 2)
        for (size_t size = 1; size + align <= hl_large_threshold; size = size * 3 + 7) {
            char *p = hl_memalign(align, size);
            assert_non_null(p);
            assert_int_equal((uintptr_t)p % align, 0);
            assert_int_equal(hl_pagemap_get(p), HL_OWNER_STRATEGY);
            size_t u = hl_malloc_usable_size(p);
            assert_true(u >= size);
            struct hl_sb *sb = hl_sb_of(p);
            char *b = hl_sb_block(sb, p);
            assert_true(p + u == b + sb->size);          /* usable to the block's end */
            /* An inner pointer sends the TLAB's free of every block of sb to its slow path. */
            if (b != p) assert_int_equal(sb->tlab_slot, HL_CACHE_BYPASS);
            memset(p, 0x5a, u);
            hl_free(p);
        }
    /* An inner pointer and ordinary blocks of the same superblock are freed correctly. */
    void *a = hl_memalign(64, 40), *b = hl_malloc(hl_malloc_usable_size(a));
    struct hl_sb *sb = hl_sb_of(b);
    assert_int_equal(sb->tlab_slot,
                     atomic_load(&sb->interior) ? HL_CACHE_BYPASS : hl_cache_slot(sb->cls));
    hl_free(a);
    hl_free(b);
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 0);
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_by_masking),
        cmocka_unit_test(lifo_reuses_the_last_freed),
        cmocka_unit_test(fifo_reuses_the_first_freed),
        cmocka_unit_test(empty_superblock_serves_any_class),
        cmocka_unit_test(objects_above_half_a_superblock_go_to_the_os),
        cmocka_unit_test(memalign_inside_superblocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
