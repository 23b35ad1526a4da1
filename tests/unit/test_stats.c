/* test_stats.c — the statistics (src/core/stats.c, stats.h) under hoard with stats_batch = 0
 * (U exact at every call):
 *   counters_summed   every per-thread counter of HOARDLAB_STATS (from = thread) is summed
 *                     over the live threads, and still counted once they exit (folded into
 *                     the retired counts): four threads each add (i + 1) << 32 to every
 *                     counter, so the high halves of the totals must rise by exactly 10,
 *                     whatever the allocations around the test count in the low halves
 *   in_use_exact      U rises and falls by a block's class size on malloc and free, also for
 *                     blocks a thread that exited left live; the peak is at least U, and a
 *                     reset brings it down to U
 *   json_every_field  the JSON line HOARD_STATS writes holds the strategy, the pid and every
 *                     statistic of HOARDLAB_STATS once, and is one line */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"

#define T 4
#define HIGH(x) ((x) >> 32)

static pthread_barrier_t counted, read_live;

static void *bump_counters(void *arg)
{
    uint64_t bump = (uint64_t)(uintptr_t)arg << 32;
    hl_free(hl_malloc(8));                               /* registered */
#define BUMP(name, from, across, help) HL_IF_COUNTER(from, hl_me.ctr.name += bump;)
    HOARDLAB_STATS(BUMP)
#undef BUMP
    pthread_barrier_wait(&counted);
    pthread_barrier_wait(&read_live);                    /* alive while main reads */
    return NULL;
}

static void check_high(const struct hoardlab_stats *before, const struct hoardlab_stats *now,
                       const char *when)
{
#define CHECK(name, from, across, help)                                                       \
    HL_IF_COUNTER(from, if (HIGH(now->name) - HIGH(before->name) != 10)                       \
        fail_msg("%s: %s rose by %llu x 2^32, not 10", when, #name,                           \
                 (unsigned long long)(HIGH(now->name) - HIGH(before->name)));)
    HOARDLAB_STATS(CHECK)
#undef CHECK
}

static void counters_summed(void **state)
{
    (void)state;
    struct hoardlab_stats s0, live, exited;
    pthread_t t[T];
    pthread_barrier_init(&counted, NULL, T + 1);
    pthread_barrier_init(&read_live, NULL, T + 1);
    hoardlab_stats(&s0);
    for (uintptr_t i = 0; i < T; i++)
        assert_int_equal(pthread_create(&t[i], NULL, bump_counters, (void *)(i + 1)), 0);
    pthread_barrier_wait(&counted);
    hoardlab_stats(&live);
    pthread_barrier_wait(&read_live);
    for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
    hoardlab_stats(&exited);
    pthread_barrier_destroy(&counted);
    pthread_barrier_destroy(&read_live);
    check_high(&s0, &live, "live threads");
    check_high(&s0, &exited, "exited threads");
}

static void *leave_live(void *arg)
{
    void **p = arg;
    for (int i = 0; i < 10; i++) p[i] = hl_malloc(1000);
    return NULL;
}

static void in_use_exact(void **state)
{
    (void)state;
    size_t size = hl_class_size(hl_class_of(1000));
    struct hoardlab_stats s0, s1, s2, s3;
    hoardlab_stats(&s0);
    void *p = hl_malloc(1000);
    hoardlab_stats(&s1);
    assert_int_equal(s1.in_use - s0.in_use, size);
    assert_true(s1.in_use_peak >= s1.in_use);
    hl_free(p);
    void *left[10];
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, leave_live, left), 0);
    pthread_join(t, NULL);
    hoardlab_stats(&s2);                                 /* (pthread's own blocks: none left) */
    assert_int_equal(s2.in_use - s0.in_use, 10 * size);
    for (int i = 0; i < 10; i++) hl_free(left[i]);
    hoardlab_stats(&s3);
    assert_int_equal(s3.in_use, s0.in_use);
    assert_true(s3.in_use_peak >= s0.in_use + 10 * size);
    hl_stats_reset_peaks();
    hoardlab_stats(&s3);
    assert_int_equal(s3.in_use_peak, s3.in_use);
}

static void json_every_field(void **state)
{
    (void)state;
    char path[64], line[8192];
    snprintf(path, sizeof path, "/tmp/test_stats.%d.json", (int)getpid());
    unlink(path);
    const char *was = hl_cfg.stats;
    hl_cfg.stats = path;
    hl_stats_at_exit();
    hl_cfg.stats = was;
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    unlink(path);
    line[n] = 0;
    assert_true(n > 2 && line[0] == '{' && !strcmp(line + n - 2, "}\n"));
    assert_ptr_equal(strchr(line, '\n'), line + n - 1);  /* one line */
    char want[128];
    snprintf(want, sizeof want, "\"strategy\": \"%s\", \"pid\": %d,", hl_active->name,
             (int)getpid());
    assert_ptr_equal(strstr(line, want), line + 1);
    int fields = 0;
#define FIELD(name, from, across, help)                                                       \
    {                                                                                         \
        const char *at = strstr(line, "\"" #name "\": ");                                     \
        if (!at) fail_msg("no \"%s\" in %s", #name, line);                                    \
        if (strstr(at + 1, "\"" #name "\": ")) fail_msg("\"%s\" twice in %s", #name, line);   \
        fields++;                                                                             \
    }
    HOARDLAB_STATS(FIELD)
#undef FIELD
    int colons = 0;
    for (char *c = line; *c; c++) colons += *c == ':';
    assert_int_equal(colons, fields + 2);                /* + strategy and pid, nothing else */
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_STATS_BATCH", "0", 1);
    setenv("HOARD_COUNTING", "on", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counters_summed),
        cmocka_unit_test(in_use_exact),
        cmocka_unit_test(json_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
