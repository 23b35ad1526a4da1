/* test_cpucache.c — the per-CPU cache itself (src/core/cache/cpucache.c, cpucache.h) under hoard with
 * cache = cpu and cpu_cache_bytes = 4K (a stack of class c holds 4K / size blocks); the
 * critical sections under migration and signals are test_rseq.c's. The main thread is pinned
 * to one CPU, so the stack it uses is known:
 *   reuse         a block freed on a CPU is the next one malloc of its class takes there
 *   limit         however many blocks are freed, a stack holds at most its limit, its links
 *                 and room agree (each block's word below it: the head under it, room + 1)
 *   flush         a full stack gives blocks back to their superblocks: once the program has
 *                 freed everything, the superblocks' `used` is what the stacks still hold
 *   no_twice      fill, drain, fill again: no block handed out twice, nor one still live
 *   shared_by_cpu a block freed by another thread on the same CPU is the next one this
 *                 thread's malloc takes (any block may enter a CPU's cache), and that thread's
 *                 exit leaves the cache as it was (nothing is per thread)
 *   cache_fork    a child forked while the caches hold blocks mallocs and frees through
 *                 them; the parent goes on; the gauge tlab_bytes (bytes held in caches) sees them
 *   cache_batches more blocks than every CPU's stack of the class holds, malloc'd and freed:
 *                 the statistics cpu_refills and cpu_flushes count the batches
 *   flush_to_owner blocks of another thread's heap freed here: a full stack's flush gives
 *                 them back under their owner's lock once a flush, not once a block (cache.h's
 *                 give-back, issue 51: before, 1.02 acquisitions a free on the deep xfree)
 * Exits 77 (skipped) when no rseq area is registered (__rseq_size == 0), and only then. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cpucache.h"
#include "handout.h"

#define BYTES 4096
static int cpu;                          /* the CPU every thread of the test runs on */

static void pin(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    assert_int_equal(sched_setaffinity(0, sizeof set, &set), 0);
}

static uint32_t limit_of(size_t size) { return BYTES / hl_class_size(hl_class_of(size)); }

static uint64_t head_of(long on, size_t size)
{
    char *e = hl_cpu_slabs + ((size_t)on << HL_RSEQ_SHIFT) + hl_cache_slot(hl_class_of(size));
    return atomic_load((_Atomic uint64_t *)e);
}

/* The blocks on CPU `on`'s stack of the class, checked link by link; f(block, arg) each. */
static uint32_t walk(long on, size_t size, void (*f)(void *, void *), void *arg)
{
    uint64_t w = head_of(on, size);
    uint32_t n = 0;
    while (HL_RSEQ_TOP(w)) {
        void *b = HL_RSEQ_TOP(w);
        uint64_t below = *(uint64_t *)b;
        assert_int_equal(HL_RSEQ_ROOM(below), HL_RSEQ_ROOM(w) + 1);
        if (f) f(b, arg);
        if (++n > limit_of(size)) fail_msg("CPU %ld's stack holds more than %u", on, n - 1);
        w = below;
    }
    assert_int_equal(HL_RSEQ_ROOM(w), limit_of(size));   /* the bottom: all the room */
    return n;
}

static void reuse(void **state)
{
    (void)state;
    void *keep = hl_malloc(48), *p = hl_malloc(48);
    hl_free(p);
    assert_ptr_equal(HL_RSEQ_TOP(head_of(cpu, 48)), p);
    assert_ptr_equal(hl_malloc(48), p);
    hl_free(p);
    hl_free(keep);
}

static void limit(void **state)
{
    (void)state;
    size_t n = 4 * limit_of(64);
    void **p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(64));
    for (size_t i = 0; i < n; i++) {
        hl_free(p[i]);
        walk(cpu, 64, NULL, NULL);
    }
    assert_true(hl_cpu_cache_bytes() <= (size_t)get_nprocs_conf() * hl_classes->count * BYTES);
    free(p);
}

struct sbs { struct hl_sb **sb; size_t k; uint64_t held; };

static void add_sb(struct sbs *s, void *p)
{
    size_t j = 0;
    while (j < s->k && s->sb[j] != hl_sb_of(p)) j++;
    if (j == s->k) s->sb[s->k++] = hl_sb_of(p);
}
static void count_held(void *b, void *arg)
{
    struct sbs *s = arg;
    for (size_t j = 0; j < s->k; j++) s->held += hl_sb_of(b) == s->sb[j];
}

static void flush(void **state)
{
    (void)state;
    size_t n = 5 * limit_of(256);
    void **p = calloc(n, sizeof *p);
    struct sbs s = { calloc(n, sizeof *s.sb), 0, 0 };
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(256));
    for (size_t i = 0; i < n; i++) add_sb(&s, p[i]);
    for (size_t i = 0; i < n; i++) hl_free(p[i]);
    /* Out of its superblock a block is the program's or on a stack: now only the latter. */
    for (long c = 0; c < get_nprocs_conf(); c++) walk(c, 256, count_held, &s);
    uint64_t used = 0;
    for (size_t j = 0; j < s.k; j++) used += s.sb[j]->used;
    assert_int_equal(used, s.held);
    assert_true(s.held <= limit_of(256));
    free(s.sb);
    free(p);
}

static void no_twice(void **state)
{
    (void)state;
    expect_each_block_once(128, 3 * limit_of(128));
}

struct handoff { void *p; size_t bytes_after_free; };

static void *free_on_same_cpu(void *arg)
{
    struct handoff *h = arg;
    pin();
    hl_free(h->p);
    h->bytes_after_free = hl_cpu_cache_bytes();
    return NULL;
}

static void shared_by_cpu(void **state)
{
    (void)state;
    void *keep = hl_malloc(1000);
    struct handoff h = { hl_malloc(1000), 0 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_on_same_cpu, &h), 0);
    pthread_join(t, NULL);
    assert_int_equal(hl_cpu_cache_bytes(), h.bytes_after_free);   /* its exit took nothing */
    assert_ptr_equal(HL_RSEQ_TOP(head_of(cpu, 1000)), h.p);
    assert_ptr_equal(hl_malloc(1000), h.p);              /* another thread's free, on this CPU */
    hl_free(h.p);
    hl_free(keep);
}

/* ---- the cache under fork ----------------------------------------------------------------- */

static uint64_t cache_bytes(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return s.tlab_bytes;
}

static void cache_fork(void **state)
{
    (void)state;
    enum { N = 500 };
    void *p[N];
    for (int i = 0; i < N; i++) p[i] = hl_malloc(24);
    uint64_t before = cache_bytes();
    for (int i = 0; i < N; i++) hl_free(p[i]);
    assert_true(cache_bytes() > before);                 /* the frees went to a cache */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int bad = 0;
        for (int r = 0; r < 50; r++) {
            for (int i = 0; i < N; i++) {
                p[i] = hl_malloc(24);
                if (!p[i]) bad = 1;
                else memset(p[i], r, 24);
            }
            for (int i = 0; i < N; i++) hl_free(p[i]);
        }
        _exit(bad);
    }
    for (int i = 0; i < N; i++) p[i] = hl_malloc(24);
    for (int i = 0; i < N; i++) hl_free(p[i]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- batches ----------------------------------------------------------------------------- */

static void cache_batches(void **state)
{
    (void)state;
    unsigned c = hl_class_of(24);
    size_t limit = hl_cfg.cpu_cache_bytes / hl_class_size(c);
    size_t n = (size_t)(get_nprocs_conf() + 1) * limit + 1;     /* fills every CPU's stack */
    void **p = hl_malloc(n * sizeof *p);
    assert_non_null(p);
    struct hoardlab_stats s0, s1;
    hoardlab_stats(&s0);
    for (size_t i = 0; i < n; i++) assert_non_null(p[i] = hl_malloc(24));
    for (size_t i = 0; i < n; i++) hl_free(p[i]);
    hoardlab_stats(&s1);
    hl_free(p);
    print_message("batches: %zu blocks, %llu refills, %llu flushes\n", n,
                  (unsigned long long)(s1.cpu_refills - s0.cpu_refills),
                  (unsigned long long)(s1.cpu_flushes - s0.cpu_flushes));
    assert_true(s1.cpu_refills - s0.cpu_refills >= 1);
    assert_true(s1.cpu_flushes - s0.cpu_flushes >= 1);
}

/* ---- a flush of another heap's blocks -------------------------------------------------- */

#define FOREIGN (8 * BYTES / 176)        /* 8 stacks' worth of class 176 */
struct foreign { void *p[FOREIGN]; struct hl_heap *heap; };

static void *alloc_foreign(void *arg)
{
    struct foreign *f = arg;
    pin();
    for (int i = 0; i < FOREIGN; i++) f->p[i] = hl_malloc(176);
    f->heap = hl_heap_mine();
    return NULL;
}

static void flush_to_owner(void **state)
{
    (void)state;
#ifndef HL_STATS
    skip();
#else
    static struct foreign f;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, alloc_foreign, &f), 0);
    pthread_join(t, NULL);
    assert_non_null(f.heap);
    assert_ptr_not_equal(f.heap, hl_heap_mine());
    int theirs = 0;
    for (int i = 0; i < FOREIGN; i++)
        theirs += atomic_load(&hl_sb_of(f.p[i])->owner) == f.heap;
    assert_true(theirs >= FOREIGN / 2);  /* (a few may have come from this CPU's stack) */
    uint64_t before = __atomic_load_n(&f.heap->acquisitions, __ATOMIC_RELAXED);
    for (int i = 0; i < FOREIGN; i++) hl_free(f.p[i]);   /* the stack fills and flushes */
    uint64_t locks = __atomic_load_n(&f.heap->acquisitions, __ATOMIC_RELAXED) - before;
    print_message("%d blocks of another heap freed: %llu acquisitions of its lock\n", theirs,
                  (unsigned long long)locks);
    assert_true(locks >= 1);             /* (the stack holds limit_of(176); the rest went back) */
    assert_true(locks * 4 < (uint64_t)theirs);
#endif
}

/* ---- idle CPUs (cpu_cache_idle_ms, argument "idle": 100 ms) ------------------------------ */

static cpu_set_t all_cpus;               /* the process's CPUs, before main pinned itself */
static const size_t idle_sizes[] = { 16, 64, 176 };
#define NSIZES (sizeof idle_sizes / sizeof *idle_sizes)

static void pin_to(long on)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(on, &set);
    assert_int_equal(sched_setaffinity(0, sizeof set, &set), 0);
}

static uint32_t held(long on, size_t size)
{
    return limit_of(size) - (uint32_t)HL_RSEQ_ROOM(head_of(on, size));
}

/* On CPU `arg`: 2 x limit blocks of each size malloc'd, then freed (the stack fills, flushes
 * half, fills again). */
static void *fill_there(void *arg)
{
    pin_to((long)(intptr_t)arg);
    for (size_t k = 0; k < NSIZES; k++)
        malloc_then_free(idle_sizes[k], 2 * limit_of(idle_sizes[k]));
    return NULL;
}

/* Every CPU's stacks of three classes filled by a thread there, then no malloc or free in
 * the process for up to 10 s: the purge thread takes each down to a sixteenth of its limit
 * (without cpu_cache_idle_ms they stay as they are: more than half full). The blocks it
 * took are then handed out once each. Waits, never times anything. */
static void idle_cpus_give_back(void **state)
{
    (void)state;
    for (long on = 0; on < CPU_SETSIZE; on++) {
        if (!CPU_ISSET(on, &all_cpus)) continue;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, fill_there, (void *)(intptr_t)on), 0);
        pthread_join(t, NULL);
        for (size_t k = 0; k < NSIZES; k++)
            assert_true(held(on, idle_sizes[k]) > limit_of(idle_sizes[k]) / 16);
    }
    bool down = false;
    for (int waited = 0; !down && waited < 10000; waited += 50) {
        usleep(50 * 1000);
        down = true;
        for (long on = 0; on < CPU_SETSIZE; on++)
            for (size_t k = 0; CPU_ISSET(on, &all_cpus) && k < NSIZES; k++)
                down &= held(on, idle_sizes[k]) <= limit_of(idle_sizes[k]) / 16;
    }
    for (long on = 0; on < CPU_SETSIZE; on++)
        for (size_t k = 0; CPU_ISSET(on, &all_cpus) && k < NSIZES; k++)
            print_message("CPU %ld, %zu B: %u of %u blocks held after the wait\n", on,
                          idle_sizes[k], held(on, idle_sizes[k]), limit_of(idle_sizes[k]));
    assert_true(down);
    for (size_t k = 0; k < NSIZES; k++) expect_each_block_once(idle_sizes[k], 4 * limit_of(64));
}

/* Threads on every CPU malloc, write, check and free bursts of blocks, resting 0-250 ms
 * between them, so that the purge thread takes their stacks back while they rest and some
 * wake while it pops: no block is handed to two owners (each keeps its block's pattern) and
 * none is handed out twice. */
enum { BURSTS = 16 };

static void *burst_there(void *arg)
{
    long on = (long)(intptr_t)arg;
    pin_to(on);
    char who[32];
    snprintf(who, sizeof who, "CPU %ld", on);
    bursts_keep_their_bytes(idle_sizes, NSIZES, (unsigned)on * 7919u + 1, BURSTS, 250, who);
    return NULL;
}

static void woken_while_taken(void **state)
{
    (void)state;
    pthread_t t[CPU_SETSIZE];
    long n = 0;
    for (long on = 0; on < CPU_SETSIZE; on++)
        if (CPU_ISSET(on, &all_cpus))
            assert_int_equal(pthread_create(&t[n++], NULL, burst_there, (void *)(intptr_t)on), 0);
    while (n) pthread_join(t[--n], NULL);
    for (size_t k = 0; k < NSIZES; k++) expect_each_block_once(idle_sizes[k], 4 * limit_of(64));
}

int main(int argc, char **argv)
{
    bool idle = argc > 1 && !strcmp(argv[1], "idle");
    if (__rseq_size == 0) {
        fprintf(stderr, "test_cpucache: no rseq area registered (__rseq_size == 0): skipped\n");
        return 77;                       /* rseq unavailable, and nothing else, skips */
    }
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_CACHE", "cpu", 1);
    setenv("HOARD_CPU_CACHE_BYTES", "4K", 1);
    setenv("HOARD_HEAP_SELECT", "thread", 1);
    if (idle) setenv("HOARD_CPU_CACHE_IDLE_MS", "100", 1);
    if (sched_getaffinity(0, sizeof all_cpus, &all_cpus)) return 1;
    cpu = sched_getcpu();
    assert_true(cpu >= 0);
    hl_init();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) return 1;
    hl_free(hl_malloc(1));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reuse),
        cmocka_unit_test(limit),
        cmocka_unit_test(flush),
        cmocka_unit_test(no_twice),
        cmocka_unit_test(shared_by_cpu),
        cmocka_unit_test(cache_fork),
        cmocka_unit_test(cache_batches),
        cmocka_unit_test(flush_to_owner),
    };
    const struct CMUnitTest idle_tests[] = {
        cmocka_unit_test(idle_cpus_give_back),
        cmocka_unit_test(woken_while_taken),
    };
    if (idle) return cmocka_run_group_tests(idle_tests, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
