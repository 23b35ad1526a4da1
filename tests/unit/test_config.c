/* test_config.c — the configuration table: values from the file, the environment and the
 * strategy's defaults, in that precedence; and every kind of bad input stops with one line
 * naming the file, line, key and the valid choices, exit status 2. Each case runs in a
 * child process, because bad input ends the process by design. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"

struct outcome { int status; char err[4096], out[4096]; };

/* Run hl_config_load in a child with exactly the given HOARD_* variables (NULL-terminated
 * "NAME=value" list) and, if ini is not NULL, a config file of that text. The child prints
 * the effective values; `out` gets them, `err` gets stderr. */
static struct outcome load(const char *ini, const char *const *env)
{
    struct outcome r = { 0 };
    char path[] = "/tmp/hl-test-config-XXXXXX";
    int to_err[2], to_out[2];
    if (ini) {
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
        close(fd);
    }
    assert_int_equal(pipe(to_err), 0);
    assert_int_equal(pipe(to_out), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        clearenv();
        if (ini) setenv("HOARD_CONFIG", path, 1);
        for (const char *const *e = env; e && *e; e++) putenv((char *)*e);
        dup2(to_err[1], 2);
        dup2(to_out[1], 1);
        hl_config_load();
        hl_config_print_effective(1);
        _exit(0);
    }
    close(to_err[1]);
    close(to_out[1]);
    ssize_t n = read(to_err[0], r.err, sizeof r.err - 1);
    r.err[n > 0 ? n : 0] = 0;
    size_t got = 0;
    while ((n = read(to_out[0], r.out + got, sizeof r.out - 1 - got)) > 0) got += (size_t)n;
    r.out[got] = 0;
    close(to_err[0]);
    close(to_out[0]);
    int ws;
    waitpid(pid, &ws, 0);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
    if (ini) unlink(path);
    return r;
}

/* The effective line of key, e.g. "padding = on (file)" compressed to "on (file)". */
static const char *value_of(const struct outcome *r, const char *key, char *buf, size_t len)
{
    char needle[64];
    snprintf(needle, sizeof needle, "hoardlab: %s ", key);
    const char *line = strstr(r->out, needle);
    if (!line) return "";
    const char *eq = strchr(line, '=') + 1;
    while (*eq == ' ') eq++;
    size_t n = strcspn(eq, "\n");
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%.*s", (int)n, eq);
    /* collapse runs of spaces */
    size_t o = 0;
    for (size_t i = 0; tmp[i] && o + 1 < len; i++)
        if (!(tmp[i] == ' ' && o && buf[o - 1] == ' ')) buf[o++] = tmp[i];
    buf[o] = 0;
    return buf;
}

#define EXPECT_VALUE(r, key, want) do { char b_[256]; \
        assert_string_equal(value_of(&(r), key, b_, sizeof b_), want); } while (0)
#define EXPECT_FAIL(r, ...) do { assert_int_equal((r).status, 2); \
        const char *subs_[] = { __VA_ARGS__, NULL }; \
        for (const char **s_ = subs_; *s_; s_++) { \
            if (!strstr((r).err, *s_)) fail_msg("stderr lacks '%s': %s", *s_, (r).err); } \
        assert_int_equal(strchr((r).err, '\n') - (r).err + 1, (long)strlen((r).err)); } while (0)

static void defaults_apply(void **state)
{
    (void)state;
    struct outcome r = load(NULL, NULL);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "superblock_size", "8192 (default)");
    EXPECT_VALUE(r, "empty_fraction", "0.25 (default)");
    EXPECT_VALUE(r, "release_threshold", "4 (default)");
}

static void file_sets_values_with_suffixes_and_fractions(void **state)
{
    (void)state;
    if (!hl_strategy_find("hoard")) skip();     /* the keys below act under hoard */
    struct outcome r = load("; a comment\n[allocator]\nstrategy = hoard\n"
                            "[superblock]\nsuperblock_size = 16K\nempty_fraction = 1/8\n"
                            "[tlab]\ntlab = on\n[heaps]\nheaps = 3P\n", NULL);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "strategy", "hoard (file)");
    EXPECT_VALUE(r, "superblock_size", "16384 (file)");
    EXPECT_VALUE(r, "empty_fraction", "0.125 (file)");
    EXPECT_VALUE(r, "tlab", "on (file)");
    char want[64];
    snprintf(want, sizeof want, "%d (file)", 3 * hl_nprocs());
    EXPECT_VALUE(r, "heaps", want);
}

static void environment_overrides_file(void **state)
{
    (void)state;
    const char *env[] = { "HOARD_LOCK=spin", "HOARD_SUPERBLOCK_SIZE=1M", NULL };
    struct outcome r = load("[allocator]\nlock = mutex\n", env);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "lock", "spin (env)");
    EXPECT_VALUE(r, "superblock_size", "1048576 (env)");
}

static void strategy_defaults_sit_under_explicit_values(void **state)
{
    (void)state;
    if (!hl_strategy_find("serial")) skip();    /* its defaults are the example */
    const char *serial[] = { "HOARD_STRATEGY=serial", NULL };
    struct outcome r = load(NULL, serial);
    EXPECT_VALUE(r, "size_classes", "pow2 (strategy)");
    const char *explicit_geo[] = { "HOARD_STRATEGY=serial", "HOARD_SIZE_CLASSES=geometric",
                                   NULL };
    r = load(NULL, explicit_geo);
    EXPECT_VALUE(r, "size_classes", "geometric (env)");
}

static void unknown_strategy_names_the_choices(void **state)
{
    (void)state;
    const char *env[] = { "HOARD_STRATEGY=hoardd", NULL };
    struct outcome r = load(NULL, env);
    EXPECT_FAIL(r, "HOARD_STRATEGY", "'hoardd'");
    for (int i = 0; hl_strategies[i]; i++)        /* the choices: every strategy compiled in */
        if (!strstr(r.err, hl_strategies[i]->name))
            fail_msg("stderr lacks '%s': %s", hl_strategies[i]->name, r.err);
}

static void unknown_key_in_file(void **state)
{
    (void)state;
    struct outcome r = load("[allocator]\nverbose = off\nsuperblok = 8K\n", NULL);
    EXPECT_FAIL(r, ":3:", "unknown key 'superblok'", "[allocator]", "superblock_size");
}

static void key_in_wrong_section(void **state)
{
    (void)state;
    struct outcome r = load("[allocator]\npadding = on\n", NULL);
    EXPECT_FAIL(r, ":2:", "'padding'", "[single_heap]");
}

static void out_of_range_and_malformed_values(void **state)
{
    (void)state;
    struct outcome r = load("[superblock]\nempty_fraction = 1.5\n", NULL);
    EXPECT_FAIL(r, ":2:", "empty_fraction", "'1.5'", "0.01 .. 0.99");
    r = load("[superblock]\nsuperblock_size = 12K\n", NULL);
    EXPECT_FAIL(r, ":2:", "superblock_size", "power of two");
    r = load("[superblock]\nrelease_threshold = four\n", NULL);
    EXPECT_FAIL(r, "release_threshold", "'four'");
    r = load("[single_heap]\npadding = maybe\n", NULL);
    EXPECT_FAIL(r, "padding", "'maybe'", "on, off");
    r = load("[allocator]\nlock = ticket\n", NULL);
    EXPECT_FAIL(r, "lock", "'ticket'", "spin, mutex");
    r = load("[superblock]\nsuperblock_size = 8Q\n", NULL);
    EXPECT_FAIL(r, "superblock_size", "'8Q'");
}

/* hugepages (issue 50): its three values, and a bad one names key, value and choices. */
static void hugepages_values(void **state)
{
    (void)state;
    struct outcome r = load("[allocator]\nhugepages = huge\n", NULL);
    EXPECT_FAIL(r, ":2:", "hugepages", "'huge'", "off, madvise, filler");
    const char *bad[] = { "HOARD_HUGEPAGES=2M", NULL };
    r = load(NULL, bad);
    EXPECT_FAIL(r, "HOARD_HUGEPAGES", "'2M'", "off, madvise, filler");
    r = load(NULL, NULL);
    EXPECT_VALUE(r, "hugepages", "off (default)");
    const char *filler[] = { "HOARD_HUGEPAGES=filler", NULL };
    r = load(NULL, filler);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "hugepages", "filler (env)");
    r = load("[allocator]\nhugepages = madvise\n", NULL);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "hugepages", "madvise (file)");
}

static void malformed_line(void **state)
{
    (void)state;
    struct outcome r = load("[allocator]\nverbose = off\njust words\n", NULL);
    EXPECT_FAIL(r, ":3:", "malformed line");
    r = load("[allocator\nverbose = off\n", NULL);
    EXPECT_FAIL(r, ":1:", "malformed line");
}

static void missing_file(void **state)
{
    (void)state;
    const char *env[] = { "HOARD_CONFIG=/nonexistent/hoard.ini", NULL };
    struct outcome r = load(NULL, env);
    EXPECT_FAIL(r, "/nonexistent/hoard.ini", "cannot open");
}

static void unknown_environment_variable(void **state)
{
    (void)state;
    const char *env[] = { "HOARD_PADING=on", NULL };
    struct outcome r = load(NULL, env);
    EXPECT_FAIL(r, "HOARD_PADING", "padding");
}

static void bad_environment_value(void **state)
{
    (void)state;
    const char *env[] = { "HOARD_HEAP_SELECT=random", NULL };
    struct outcome r = load(NULL, env);
    EXPECT_FAIL(r, "HOARD_HEAP_SELECT", "'random'", "thread, hash, cpu");
}

/* A key set where it has no effect (the `acts` column) stops the program like bad input:
 * the source, the key, the strategy and where the key acts. */
static void no_op_key_from_environment(void **state)
{
    (void)state;
    if (!hl_strategy_find("serial")) skip();
    const char *env[] = { "HOARD_STRATEGY=serial", "HOARD_TLAB=on", NULL };
    struct outcome r = load(NULL, env);
    EXPECT_FAIL(r, "environment: HOARD_TLAB", "key 'tlab'", "no effect", "'serial'",
                "acts only under: ownership, hoard, hoard2026");
}

/* `tlab` is the older name of `cache` (config.c's one_cache): either gives both values, the
 * higher source wins (the strategy's tlab=on under an explicit cache), and the two set at
 * one level must agree. */
static void tlab_is_the_older_name_of_cache(void **state)
{
    (void)state;
    if (!hl_strategy_find("hoard") || !hl_strategy_find("hoard2026")) skip();
    const char *on[] = { "HOARD_STRATEGY=hoard", "HOARD_TLAB=on", NULL };
    struct outcome r = load(NULL, on);
    EXPECT_VALUE(r, "cache", "thread (env)");
    const char *cpu[] = { "HOARD_STRATEGY=hoard2026", "HOARD_CACHE=cpu", NULL };
    r = load(NULL, cpu);
    EXPECT_VALUE(r, "cache", "cpu (env)");
    EXPECT_VALUE(r, "tlab", "off (env)");
    r = load("[tlab]\ntlab = off\n", (const char *const[]){ "HOARD_STRATEGY=hoard2026", NULL });
    EXPECT_VALUE(r, "cache", "none (file)");
    const char *both[] = { "HOARD_STRATEGY=hoard", "HOARD_TLAB=on", "HOARD_CACHE=cpu", NULL };
    r = load(NULL, both);
    EXPECT_FAIL(r, "tlab = on and cache = cpu disagree", "older name");
}

static void no_op_key_from_file_names_its_line(void **state)
{
    (void)state;
    if (!hl_strategy_find("hoard")) skip();
    struct outcome r = load("[allocator]\nstrategy = hoard\n[tlab]\n; budget only\n"
                            "tlab_budget = 16K\n", NULL);
    EXPECT_FAIL(r, ":5:", "key 'tlab_budget'", "'hoard' (tlab=off)", "hoard2026, hoard202607 if tlab=on");
    const char *sel[] = { "HOARD_STRATEGY=hoard", NULL };
    r = load("[heaps]\nheap_select = thread\nheaps = 4\n", sel);
    EXPECT_FAIL(r, ":3:", "key 'heaps'", "(heap_select=thread)");
}

/* A condition met by an explicit value or by the strategy's own defaults (which are not
 * "set explicitly" themselves, so never flagged). */
static void key_acts_where_its_condition_holds(void **state)
{
    (void)state;
    if (!hl_strategy_find("hoard") || !hl_strategy_find("hoard2026") ||
        !hl_strategy_find("ownership") || !hl_strategy_find("private")) skip();
    const char *tlab[] = { "HOARD_STRATEGY=hoard", "HOARD_TLAB=on", "HOARD_TLAB_BUDGET=16K",
                           NULL };
    struct outcome r = load(NULL, tlab);
    assert_int_equal(r.status, 0);
    const char *by_default[] = { "HOARD_STRATEGY=hoard2026", "HOARD_TLAB_BUDGET=16K", NULL };
    r = load(NULL, by_default);
    assert_int_equal(r.status, 0);
    EXPECT_VALUE(r, "tlab", "on (strategy)");
    const char *remote[] = { "HOARD_STRATEGY=ownership", "HOARD_REMOTE_FREE=list",
                             "HOARD_EMPTY_FRACTION=1/8", NULL };
    r = load(NULL, remote);
    assert_int_equal(r.status, 0);
    const char *private_default[] = { "HOARD_STRATEGY=private", NULL };
    r = load(NULL, private_default);                 /* heap_select=thread, heaps unused */
    assert_int_equal(r.status, 0);
    const char *lock_remote[] = { "HOARD_STRATEGY=ownership", "HOARD_EMPTY_FRACTION=1/8", NULL };
    r = load(NULL, lock_remote);
    EXPECT_FAIL(r, "HOARD_EMPTY_FRACTION", "(remote_free=lock)");
}

static void acts_column_names_known_strategies(void **state)
{
    (void)state;
    int n = 0;
    while (hl_strategies[n]) n++;
    if (n < 7) skip();                          /* a build without some strategies */
    char err[512] = "";
    if (hl_config_check_table(err, sizeof err)) fail_msg("%s", err);
}

/* HOARD_STATS: stderr, off or empty, or a path with a slash; a bare word is a typo. */
static void stats_output_forms(void **state)
{
    (void)state;
    const char *typo[] = { "HOARD_STATS=sterr", NULL };
    struct outcome r = load(NULL, typo);
    EXPECT_FAIL(r, "HOARD_STATS", "'sterr'", "stderr, off", "'/'", "./sterr");
    static const char *const good[] = { "HOARD_STATS=stderr", "HOARD_STATS=off", "HOARD_STATS=",
                                        "HOARD_STATS=/tmp/hl-stats.json", "HOARD_STATS=./s" };
    for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *env[] = { good[i], NULL };
        r = load(NULL, env);
        if (r.status != 0) fail_msg("%s: %s", good[i], r.err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_apply),
        cmocka_unit_test(file_sets_values_with_suffixes_and_fractions),
        cmocka_unit_test(environment_overrides_file),
        cmocka_unit_test(strategy_defaults_sit_under_explicit_values),
        cmocka_unit_test(unknown_strategy_names_the_choices),
        cmocka_unit_test(unknown_key_in_file),
        cmocka_unit_test(key_in_wrong_section),
        cmocka_unit_test(out_of_range_and_malformed_values),
        cmocka_unit_test(hugepages_values),
        cmocka_unit_test(malformed_line),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(unknown_environment_variable),
        cmocka_unit_test(bad_environment_value),
        cmocka_unit_test(no_op_key_from_environment),
        cmocka_unit_test(no_op_key_from_file_names_its_line),
        cmocka_unit_test(tlab_is_the_older_name_of_cache),
        cmocka_unit_test(key_acts_where_its_condition_holds),
        cmocka_unit_test(acts_column_names_known_strategies),
        cmocka_unit_test(stats_output_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
