/* test_tlab.c — the thread-local allocation buffers (src/core/tlab.c, tlab.h) under hoard
 * with tlab = on, a heap per thread, tlab_budget = 8K (a bin of class c holds 8K / size):
 *   reuse        a block the thread frees is the next one its malloc of the class returns
 *   budget       however many blocks the thread frees, a bin holds at most its limit, and
 *                its room is the limit less the blocks on its chain
 *   flush        an overflowing bin gives blocks back to their superblocks: once the program
 *                has freed everything, the superblocks' `used` is what the bin still holds
 *   no_twice     fill, drain, fill again: no block is handed out twice, nor one still live
 *   thread_exit  a thread's exit gives every block of its TLAB back to its superblock, and
 *                the gauge tlab_bytes drops by what the TLAB held
 * Each test uses a size class of its own, so the bins of one do not disturb another.
 * With the argument "scavenge" (tlab_scavenge_ms = 10, the guarded fast paths), instead:
 *   idle_given_back    a thread that filled its bins and sleeps has them taken down to a
 *                      sixteenth by the purge thread; awake, it allocates as before
 *   woken_while_taken  threads rest 0-19 ms between bursts while the purge thread takes
 *                      their bins: no block changes while its thread holds it
 *   fork_while_taken   fork while another thread's bins are being taken: the child allocates */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tlab.h"
#include "handout.h"

#define BUDGET 8192

static struct hl_tlab_bin *bin_of(size_t size) { return &hl_me.tlab_bins[hl_class_of(size)]; }

static uint32_t limit_of(size_t size) { return BUDGET / hl_class_size(hl_class_of(size)); }

/* The blocks on bin b's chain, into out[] (if not NULL); a chain longer than the bin's limit
 * (or one that loops) fails the test. */
static uint32_t chain(const struct hl_tlab_bin *b, void **out)
{
    uint32_t n = 0;
    for (void *p = b->head; p; p = *(void **)p) {
        if (n == b->limit) fail_msg("the bin holds more than its limit %u", b->limit);
        if (out) out[n] = p;
        n++;
    }
    return n;
}
static uint32_t chain_length(const struct hl_tlab_bin *b) { return chain(b, NULL); }

static bool on_chain(const struct hl_tlab_bin *b, const void *q)
{
    void *held[BUDGET / 16];
    for (uint32_t i = 0, n = chain(b, held); i < n; i++)
        if (held[i] == q) return true;
    return false;
}

/* The distinct superblocks of n blocks, and the sum of their `used`. */
static size_t superblocks_of(void **p, size_t n, struct hl_sb **sbs)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct hl_sb *sb = hl_sb_of(p[i]);
        size_t j = 0;
        while (j < k && sbs[j] != sb) j++;
        if (j == k) sbs[k++] = sb;
    }
    return k;
}
static uint64_t used_of(struct hl_sb **sbs, size_t k)
{
    uint64_t used = 0;
    for (size_t j = 0; j < k; j++) used += sbs[j]->used;
    return used;
}

static void reuse(void **state)
{
    (void)state;
    void *keep = hl_malloc(48), *p = hl_malloc(48);
    hl_free(p);
    assert_true(on_chain(bin_of(48), p));
    assert_ptr_equal(hl_malloc(48), p);                  /* the same thread gets it back */
    hl_free(p);
    hl_free(keep);
}

static void budget(void **state)
{
    (void)state;
    size_t n = 4 * limit_of(64);
    void **p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(64));
    for (size_t i = 0; i < n; i++) {
        hl_free(p[i]);
        struct hl_tlab_bin *b = bin_of(64);
        assert_int_equal(b->room, (int32_t)(b->limit - chain_length(b)));
    }
    assert_int_equal(bin_of(64)->limit, limit_of(64));
    assert_true(hl_tlab_bytes() <= (size_t)BUDGET * hl_classes->count);
    free(p);
}

static void flush(void **state)
{
    (void)state;
    size_t n = 5 * limit_of(256);
    void **p = calloc(n, sizeof *p);
    struct hl_sb **sbs = calloc(n, sizeof *sbs);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(256));
    size_t k = superblocks_of(p, n, sbs);
    assert_true(used_of(sbs, k) >= n);
    for (size_t i = 0; i < n; i++) hl_free(p[i]);
    /* Out of its superblock a block is either the program's or in the TLAB: now only the
     * latter, and no more than the bin's limit of them. */
    void *held[BUDGET / 16];
    uint32_t in_bin = 0, n_held = chain(bin_of(256), held);
    for (uint32_t i = 0; i < n_held; i++)
        for (size_t j = 0; j < k; j++) in_bin += hl_sb_of(held[i]) == sbs[j];
    assert_int_equal(used_of(sbs, k), in_bin);
    assert_true(in_bin <= limit_of(256));
    free(sbs);
    free(p);
}

static void no_twice(void **state)
{
    (void)state;
    expect_each_block_once(128, 3 * limit_of(128));
}

struct exit_run { size_t n; void **p; size_t bytes_held; };

static void *fill_and_exit(void *arg)
{
    struct exit_run *r = arg;
    for (size_t i = 0; i < r->n; i++) r->p[i] = hl_malloc(512);
    for (size_t i = 0; i < r->n; i++) hl_free(r->p[i]);
    r->bytes_held = chain_length(bin_of(512)) * hl_class_size(hl_class_of(512));
    return NULL;
}

static void thread_exit(void **state)
{
    (void)state;
    size_t before = hl_tlab_bytes();
    struct exit_run r = { .n = limit_of(512) };
    r.p = calloc(r.n, sizeof *r.p);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_and_exit, &r), 0);
    pthread_join(t, NULL);
    assert_true(r.bytes_held > 0);                       /* its frees were in its TLAB */
    struct hl_sb **sbs = calloc(r.n, sizeof *sbs);
    size_t k = superblocks_of(r.p, r.n, sbs);
    assert_int_equal(used_of(sbs, k), 0);                /* every block back */
    assert_int_equal(hl_tlab_bytes(), before);           /* its bins are no one's now */
    free(sbs);
    free(r.p);
}

/* ---- scavenging (argument "scavenge": tlab_scavenge_ms = 10) ------------------------------- */

static const size_t idle_sizes[] = { 48, 96, 320 };
#define NSIZES (sizeof idle_sizes / sizeof *idle_sizes)

struct sleeper {
    pthread_mutex_t m;
    pthread_cond_t c;
    int stage;
    size_t held, floor;                  /* bytes its bins held, and a sixteenth of their limits */
};

static void stage_set(struct sleeper *s, int stage)
{
    pthread_mutex_lock(&s->m);
    s->stage = stage;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
}
static void stage_wait(struct sleeper *s, int stage)
{
    pthread_mutex_lock(&s->m);
    while (s->stage < stage) pthread_cond_wait(&s->c, &s->m);
    pthread_mutex_unlock(&s->m);
}

/* Fill every bin of idle_sizes (2 x limit blocks malloc'd, then freed: the bin overflows and
 * keeps half to all of its limit), say what they hold, sleep until woken, then check no block
 * is handed out twice. */
static void *fill_and_sleep(void *arg)
{
    struct sleeper *s = arg;
    for (size_t k = 0; k < NSIZES; k++) {
        malloc_then_free(idle_sizes[k], 2 * limit_of(idle_sizes[k]));
        size_t size = hl_class_size(hl_class_of(idle_sizes[k]));
        s->held += chain_length(bin_of(idle_sizes[k])) * size;
        s->floor += limit_of(idle_sizes[k]) / 16 * size;
    }
    stage_set(s, 1);
    stage_wait(s, 2);
    for (size_t k = 0; k < NSIZES; k++) expect_each_block_once(idle_sizes[k], 3 * limit_of(48));
    return NULL;
}

/* (The main thread's bins, which the purge thread may take too while it waits, only lower
 * tlab_bytes.) */
static void idle_given_back(void **state)
{
    (void)state;
    struct sleeper s = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };
    size_t before = hl_tlab_bytes();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_and_sleep, &s), 0);
    stage_wait(&s, 1);
    assert_true(s.held > 2 * s.floor);
    size_t now = hl_tlab_bytes();
    for (int waited = 0; now > before + s.floor && waited < 10000; waited += 10) {
        usleep(10 * 1000);
        now = hl_tlab_bytes();
    }
    print_message("tlab_bytes: %zu before; the thread's bins held %zu (a sixteenth of their "
                  "limits: %zu); %zu after the wait\n", before, s.held, s.floor, now);
    assert_true(now <= before + s.floor);
    stage_set(&s, 2);
    pthread_join(t, NULL);
}

static void *bursts(void *arg)
{
    char who[32];
    snprintf(who, sizeof who, "thread %ld", (long)(intptr_t)arg);
    bursts_keep_their_bytes(idle_sizes, NSIZES, (unsigned)(intptr_t)arg * 7919u + 1, 40, 20, who);
    return NULL;
}

static void woken_while_taken(void **state)
{
    (void)state;
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, bursts, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (size_t k = 0; k < NSIZES; k++) expect_each_block_once(idle_sizes[k], 3 * limit_of(48));
}

static void fork_while_taken(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, bursts, (void *)(intptr_t)9), 0);
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (size_t k = 0; k < NSIZES; k++) hl_free(hl_malloc(idle_sizes[k]));
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        usleep(7 * 1000);
    }
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    bool scavenge = argc > 1 && !strcmp(argv[1], "scavenge");
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_TLAB", "on", 1);
    setenv("HOARD_TLAB_BUDGET", "8K", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    if (scavenge) setenv("HOARD_TLAB_SCAVENGE_MS", "10", 1);
    hl_init();
    hl_free(hl_malloc(1));                               /* the main thread's bins */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reuse),
        cmocka_unit_test(budget),
        cmocka_unit_test(flush),
        cmocka_unit_test(no_twice),
        cmocka_unit_test(thread_exit),
    };
    const struct CMUnitTest scavenging[] = {
        cmocka_unit_test(idle_given_back),
        cmocka_unit_test(woken_while_taken),
        cmocka_unit_test(fork_while_taken),
    };
    return scavenge ? cmocka_run_group_tests(scavenging, NULL, NULL)
                    : cmocka_run_group_tests(tests, NULL, NULL);
}
