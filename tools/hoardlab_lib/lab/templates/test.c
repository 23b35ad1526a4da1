/* lab_@NAME@.c — what strategy @NAME@ must do, made by `tools/hoardlab new` (docs/lab.md).
 * Meson runs it with HOARD_STRATEGY=@NAME@ and HOARD_STATS_BATCH=0 (U exact), calling the
 * allocator's hl_ entry points directly: `tools/hoardlab test --strategy @NAME@`. Add a test
 * for each promise your strategy makes (its policy, its bound on memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "front.h"
#include "mem.h"
#include "hoardlab.h"

#define LIVE 2000

static uint64_t in_use(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return s.in_use;
}

static void the_active_strategy_is_mine(void **state)
{
    (void)state;
    hl_free(hl_malloc(1));                        /* initialises the allocator */
    assert_string_equal(hl_active->name, "@NAME@");
}

/* Blocks live at once never overlap and keep what was written into them. */
static void live_blocks_are_disjoint_and_intact(void **state)
{
    (void)state;
    static unsigned char *p[LIVE];
    for (unsigned i = 0; i < LIVE; i++) {
        size_t n = 1 + (i * 37) % 900;
        p[i] = hl_malloc(n);
        assert_non_null(p[i]);
        assert_true(hl_malloc_usable_size(p[i]) >= n);
        memset(p[i], (int)(i & 0xff), n);
    }
    for (unsigned i = 0; i < LIVE; i++) {
        size_t n = 1 + (i * 37) % 900;
        for (size_t k = 0; k < n; k++) assert_int_equal(p[i][k], i & 0xff);
        hl_free(p[i]);
    }
}

/* U (bytes in use) rises by at least what was asked and returns to where it was. */
static void in_use_counts_every_block_once(void **state)
{
    (void)state;
    uint64_t before = in_use();
    void *p[64];
    for (unsigned i = 0; i < 64; i++) p[i] = hl_malloc(100);
    assert_true(in_use() >= before + 64 * 100);
    for (unsigned i = 0; i < 64; i++) hl_free(p[i]);
    assert_int_equal(in_use(), before);
}

static void *free_them(void *arg)
{
    void **p = arg;
    for (unsigned i = 0; i < LIVE; i++) hl_free(p[i]);
    return NULL;
}

/* Blocks one thread allocates and another frees (a producer and a consumer) are given back:
 * U returns to where it was, and the allocator goes on working. */
static void blocks_freed_by_another_thread_come_back(void **state)
{
    (void)state;
    static void *p[LIVE];
    uint64_t before = in_use();
    for (unsigned i = 0; i < LIVE; i++) assert_non_null(p[i] = hl_malloc(48));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_them, p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(in_use(), before);
    void *q = hl_malloc(48);
    assert_non_null(q);
    hl_free(q);
}

/* Aligned blocks (memalign) freed give back all they took: U returns to where it was. The
 * address memalign hands out may lie inside a larger block, whose usable size less the
 * offset can equal a smaller class's size (under pow2x4 the classes are 16 bytes apart): a
 * free path that takes it for a whole block of that class leaks the larger one. Returns the
 * number of wrong cases, each printed. */
static int aligned_blocks_come_back_whole(void)
{
    int wrong = 0;
    for (size_t align = 32; align <= 4096; align *= 2)
        for (size_t n = 1; n <= 600; n += 13) {
            uint64_t before = in_use();
            void *p[8];
            for (unsigned i = 0; i < 8; i++) {
                p[i] = hl_memalign(align, n);
                if (!p[i] || (uintptr_t)p[i] % align) return wrong + 1;
            }
            for (unsigned i = 0; i < 8; i++) hl_free(p[i]);
            for (unsigned i = 0; i < 8; i++) hl_free(hl_malloc(n));  /* what a cache took */
            if (in_use() != before && wrong++ < 5)
                fprintf(stderr, "memalign(%zu, %zu) x 8, freed: in_use %llu, was %llu\n",
                        align, n, (unsigned long long)in_use(), (unsigned long long)before);
        }
    return wrong;
}

/* The same under each size-class table, each in a process of its own (the table is chosen
 * at the allocator's first call): HOARD_SIZE_CLASSES=... ./lab_@NAME@ --aligned */
static void aligned_blocks_come_back_whole_under_each_class_table(void **state)
{
    (void)state;
    extern char **environ;
    static const char *const tables[] = { "pow2", "pow2x4", "geometric" };
    for (unsigned t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        char var[64];
        snprintf(var, sizeof var, "HOARD_SIZE_CLASSES=%s", tables[t]);
        size_t n = 0;
        while (environ[n]) n++;
        char **env = calloc(n + 2, sizeof *env);
        assert_non_null(env);
        memcpy(env, environ, n * sizeof *env);
        env[n] = var;
        char *argv[] = { "/proc/self/exe", "--aligned", NULL };
        pid_t pid;
        int status;
        assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        free(env);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("aligned blocks freed did not give back what they took (size_classes = "
                     "%s); memalign's address can lie inside a larger block", tables[t]);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--aligned") == 0)
        return aligned_blocks_come_back_whole() ? 1 : 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_active_strategy_is_mine),
        cmocka_unit_test(live_blocks_are_disjoint_and_intact),
        cmocka_unit_test(in_use_counts_every_block_once),
        cmocka_unit_test(blocks_freed_by_another_thread_come_back),
        cmocka_unit_test(aligned_blocks_come_back_whole_under_each_class_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
