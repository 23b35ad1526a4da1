/* test_rseq.c — the per-CPU cache's critical sections (src/core/cache/rseq.h; the cache itself,
 * cache = cpu, is test_cpucache.c's):
 *   migrate  four threads (more than CPUs: they preempt one another on a CPU's stack) push
 *            and pop blocks of their own on per-CPU stacks while another moves them from
 *            CPU to CPU with sched_setaffinity as fast as it can; afterwards
 *            every block is in the thread's hand or on exactly one stack, each stack's links
 *            and room agree, and none is lost or there twice. HL_RSEQ_OPS sets the number of
 *            operations (default 1 M; the long run: 10 M);
 *   signal   the same with a SIGALRM storm (setitimer) whose handler pushes and pops on the
 *            same stacks, so handlers run inside the thread's critical sections, each such
 *            restart counted (hl_rseq_restarts, the statistic rseq_restarts);
 *   bypass   a thread whose rseq area reads cpu_id -1 or -2 (not registered, registration
 *            failed) finds the bypass slabs 4 GiB up: no push or pop succeeds; the last CPU's
 *            slab is the last below them;
 * Runs with HOARD_STRATEGY=hoard HOARD_CACHE=cpu (tests/unit/meson.build). Without rseq
 * (__rseq_size == 0) each test is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "rseq.h"

#define LIMIT 200                        /* blocks a stack may hold */
#define NBLOCKS 1000                     /* more than the stacks of two CPUs hold */
#define SLOT 32                          /* the stacks' entry in each slab */

static char *slabs;                      /* CPU 0's slab, laid out as rseq.h says */
static long ncpus;
static _Alignas(16) char blocks[NBLOCKS][16];

static void setup_stacks(void)
{
    ncpus = get_nprocs_conf();
    if (!slabs) slabs = hl_rseq_slabs_map(ncpus);
    assert_non_null(slabs);
    memset(slabs, 0, (size_t)ncpus * HL_RSEQ_SLAB);     /* (the bypass is never written) */
    for (long c = 0; c < ncpus; c++)
        *(uint64_t *)(slabs + c * HL_RSEQ_SLAB + SLOT) = HL_RSEQ_HEAD(NULL, LIMIT);
    hl_rseq_offset = __rseq_offset;
}

/* Blocks out of the stacks, each block's index counted in seen; a stack whose links or
 * room disagree fails the test. */
static void drain_and_count(int *seen)
{
    for (long c = 0; c < ncpus; c++) {
        uint64_t w = *(uint64_t *)(slabs + c * HL_RSEQ_SLAB + SLOT);
        uint32_t held = 0;
        while (HL_RSEQ_TOP(w)) {
            char (*b)[16] = HL_RSEQ_TOP(w);
            long i = b - blocks;
            assert_true(i >= 0 && i < NBLOCKS);
            seen[i]++;
            held++;
            uint64_t below = *(uint64_t *)b;
            assert_int_equal(HL_RSEQ_ROOM(below), HL_RSEQ_ROOM(w) + 1);  /* room, one up */
            w = below;
        }
        assert_int_equal(HL_RSEQ_ROOM(w), LIMIT);                       /* the bottom */
        assert_true(held <= LIMIT);
    }
}

/* A hand of blocks and one step of the random walk: push one from the hand or pop one to it. */
struct hand { void *b[NBLOCKS]; int n; uint64_t rng; long moves; long last_cpu; };

static void step(struct hand *h)
{
    h->rng ^= h->rng << 13, h->rng ^= h->rng >> 7, h->rng ^= h->rng << 17;
    size_t at = (size_t)-1;
    bool push = h->n > 0 && (h->n == NBLOCKS || (h->rng & 1));
    if (push) {
        if (hl_rseq_push(slabs, SLOT, h->b[h->n - 1], &at)) h->n--;
    } else {
        void *p = hl_rseq_pop(slabs, SLOT, &at);
        if (p) h->b[h->n++] = p;
    }
    if (at != (size_t)-1) {                              /* committed: on this slab */
        long cpu = (long)(at >> HL_RSEQ_SHIFT);
        if (cpu != h->last_cpu) h->moves++;
        h->last_cpu = cpu;
    }
}

static void hand_fill(struct hand *h, int from, int to)
{
    for (int i = from; i < to; i++) h->b[h->n++] = blocks[i];
}

static void check_all(struct hand *a, struct hand *b)
{
    static int seen[NBLOCKS];
    memset(seen, 0, sizeof seen);
    for (struct hand *h = a; h; h = h == a ? b : NULL)
        for (int i = 0; i < h->n; i++) seen[(char (*)[16])h->b[i] - blocks]++;
    drain_and_count(seen);
    for (int i = 0; i < NBLOCKS; i++)
        if (seen[i] != 1) fail_msg("block %d seen %d times", i, seen[i]);
}

static long ops(void)
{
    const char *e = getenv("HL_RSEQ_OPS");
    return e && *e ? atol(e) : 1000000;
}

static void skip_without_rseq(void)
{
    if (__rseq_size == 0) skip();
}

/* ---- migrate ---------------------------------------------------------------------------- */

/* More threads than CPUs, so that threads share a CPU's stack and preempt one another in
 * its sections (one thread alone could never corrupt a stack), moved around by the mover. */
#define WORKERS 4
static _Atomic pid_t worker_tid[WORKERS];
static _Atomic int workers_done;
static _Atomic long migrations_forced, ops_done;
static struct hand worker_hand[WORKERS];

static void *mover(void *arg)
{
    (void)arg;
    cpu_set_t set;
    for (long i = 0; atomic_load(&workers_done) < WORKERS; i++) {
        pid_t tid = atomic_load(&worker_tid[i % WORKERS]);
        CPU_ZERO(&set);
        CPU_SET((i / WORKERS) % ncpus, &set);
        if (tid && sched_setaffinity(tid, sizeof set, &set) == 0)
            atomic_fetch_add(&migrations_forced, 1);
        if (i % WORKERS == 0) sched_yield();
    }
    return NULL;
}

static void *worker(void *arg)
{
    struct hand *h = arg;
    long n = ops() / WORKERS, i;
    atomic_store(&worker_tid[h - worker_hand], gettid());
    /* at least n operations, and on until the mover has forced ops() / 5000 moves */
    for (i = 0; i < n || atomic_load(&migrations_forced) < ops() / 5000; i++) step(h);
    atomic_fetch_add(&workers_done, 1);
    atomic_fetch_add(&ops_done, i);
    return NULL;
}

static void sections_migrate(void **state)
{
    (void)state;
    skip_without_rseq();
    setup_stacks();
    pthread_t w[WORKERS], m;
    long moves = 0;
    for (int i = 0; i < WORKERS; i++) {
        hand_fill(&worker_hand[i], i * NBLOCKS / WORKERS, (i + 1) * NBLOCKS / WORKERS);
        worker_hand[i].rng = 88172645463325252ull + (uint64_t)i;
        worker_hand[i].last_cpu = -1;
    }
    pthread_create(&m, NULL, mover, NULL);
    for (int i = 0; i < WORKERS; i++) pthread_create(&w[i], NULL, worker, &worker_hand[i]);
    for (int i = 0; i < WORKERS; i++) pthread_join(w[i], NULL);
    pthread_join(m, NULL);
    static int seen[NBLOCKS];
    for (int k = 0; k < WORKERS; k++) {
        moves += worker_hand[k].moves;
        for (int i = 0; i < worker_hand[k].n; i++) seen[(char (*)[16])worker_hand[k].b[i] - blocks]++;
    }
    drain_and_count(seen);
    for (int i = 0; i < NBLOCKS; i++)
        if (seen[i] != 1) fail_msg("block %d seen %d times", i, seen[i]);
    print_message("migrate: %ld operations by %d threads, %ld affinity changes forced, %ld CPU "
                  "changes seen\n", atomic_load(&ops_done), WORKERS, atomic_load(&migrations_forced), moves);
    if (ncpus > 1) assert_true(moves > 0);               /* the case happened */
}

/* ---- signal ----------------------------------------------------------------------------- */

static struct hand main_hand, handler_hand;
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
    (void)sig;
    for (int i = 0; i < 8; i++) step(&handler_hand);
    handled++;
}

static void sections_signal(void **state)
{
    (void)state;
    skip_without_rseq();
    setup_stacks();
    memset(&main_hand, 0, sizeof main_hand);
    memset(&handler_hand, 0, sizeof handler_hand);
    hand_fill(&main_hand, 0, NBLOCKS / 2);
    hand_fill(&handler_hand, NBLOCKS / 2, NBLOCKS);
    main_hand.rng = 1234567, handler_hand.rng = 7654321;
    main_hand.last_cpu = handler_hand.last_cpu = -1;
    struct sigaction sa = { .sa_handler = on_alarm };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 20 }, { 0, 20 } };      /* every 20 us: a storm */
    setitimer(ITIMER_REAL, &it, NULL);
    long n = ops();
    uint64_t restarts = __atomic_load_n(&hl_rseq_restarts, __ATOMIC_RELAXED);
    for (long i = 0; i < n; i++) step(&main_hand);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_DFL);
    check_all(&main_hand, &handler_hand);
    restarts = __atomic_load_n(&hl_rseq_restarts, __ATOMIC_RELAXED) - restarts;
    print_message("signal: %ld operations, %d handlers run, %llu sections restarted\n", n,
                  (int)handled, (unsigned long long)restarts);
    assert_true(handled > 0);
    /* A handler lands in one of the main loop's sections a good part of the time: with a
     * hundred handlers, none restarting one would mean the abort handler does not count. */
    if (handled >= 100) assert_true(restarts > 0);
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    assert_true(s.rseq_restarts >= restarts);            /* the statistic reads the count */
}

/* ---- bypass ----------------------------------------------------------------------------- */

/* The sections on a stand-in rseq area whose cpu_id we set (never registered: nothing
 * restarts; this thread alone uses the test's stacks meanwhile). */
static struct rseq fake_area;

static bool fake_push_pop(int32_t cpu, size_t *at)
{
    ptrdiff_t real = hl_rseq_offset;
    hl_rseq_offset = (char *)&fake_area - (char *)__builtin_thread_pointer();
    fake_area.cpu_id = (uint32_t)cpu;
    bool pushed = hl_rseq_push(slabs, SLOT, blocks[0], at);
    void *p = hl_rseq_pop(slabs, SLOT, at);
    hl_rseq_offset = real;
    assert_true(pushed == (p != NULL));
    if (p) assert_ptr_equal(p, blocks[0]);
    return pushed;
}

static void sections_bypass(void **state)
{
    (void)state;
    setup_stacks();
    size_t at = 0;
    assert_false(fake_push_pop(RSEQ_CPU_ID_UNINITIALIZED, &at));      /* -1 */
    assert_false(fake_push_pop(RSEQ_CPU_ID_REGISTRATION_FAILED, &at)); /* -2 */
    assert_true(fake_push_pop((int32_t)(ncpus - 1), &at));
    assert_int_equal(at, (size_t)(ncpus - 1) << HL_RSEQ_SHIFT);
    assert_true(fake_push_pop(0, &at));
    assert_int_equal(at, 0);
}

int main(void)
{
    hl_free(hl_malloc(1));               /* init, with HOARD_CACHE=cpu from the test's env */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sections_migrate),
        cmocka_unit_test(sections_signal),
        cmocka_unit_test(sections_bypass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
