/* test_lockfree.c — the `lockfree` strategy (Michael 2004): every Anchor transition of
 * Figures 4 and 6 on one superblock, the descriptor list and its reuse under hazard pointers,
 * the size-class partial list in the configured order (run once with partial_list=fifo and
 * once with lifo), the Partial slots' ring (with one slot and with partial_slots = 16), a
 * multithreaded stress with remote frees, thread churn, and the checks
 * build's anchor verification. hl_lockfree_check() runs at every quiescent point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "hazard.h"
#include "large.h"
#include "lockfree.h"

#define MAXCREDITS 64

/* A class whose superblock holds a few blocks (so a test walks it through every state), and
 * which no other test uses. */
static size_t small_sb_size(unsigned *maxcount)
{
    for (size_t n = hl_large_threshold / 8; n <= hl_large_threshold; n += 16) {
        void *p = hl_malloc(n);
        unsigned m = hl_lockfree_maxcount(hl_lockfree_desc_of(p));
        hl_free(p);
        if (m >= 4 && m <= 12) { *maxcount = m; return n; }
    }
    fail_msg("no class with 4..12 blocks per superblock");
    return 0;
}

static void expect(void *d, unsigned state, unsigned count)
{
    struct hl_lf_anchor a = hl_lockfree_anchor(d);
    assert_int_equal(a.state, state);
    assert_int_equal(a.count, count);
    hl_lockfree_check();
}

/* Figure 4 and 6 on one superblock of m blocks:
 *   new superblock: ACTIVE, credits m-2, count 0;  credits used up, last credit: FULL;
 *   a free: FULL -> PARTIAL into the heap's Partial slot;  malloc from the slot: PARTIAL ->
 *   ACTIVE with credits (UpdateActive) or FULL;  the last free of a non-active superblock:
 *   EMPTY, removed from the Partial slot and retired (RemoveEmptyDesc). */
static void anchor_transitions(void **state)
{
    (void)state;
    unsigned m = 0;
    size_t n = small_sb_size(&m);
    unsigned c = hl_class_of(n);
    void *blk[16], *d, *act, *old[16];
    unsigned nold = 0;
    /* Use up the class's active superblock (small_sb_size left one): the next is new. */
    old[nold++] = hl_malloc(n);
    void *d0 = hl_lockfree_desc_of(old[0]);
    for (;;) {
        blk[0] = hl_malloc(n);
        if ((d = hl_lockfree_desc_of(blk[0])) != d0) break;
        old[nold++] = blk[0];
        assert_true(nold < 16);
    }
    int credits = hl_lockfree_credits(c, &act);
    assert_ptr_equal(act, d);
    assert_int_equal(credits, (int)m - 2);  /* min(m - 1, MAXCREDITS) - 1 */
    expect(d, HL_LF_ACTIVE, 0);
    for (unsigned i = 1; i < m - 1; i++) {  /* the credits */
        blk[i] = hl_malloc(n);
        assert_ptr_equal(hl_lockfree_desc_of(blk[i]), d);
        expect(d, HL_LF_ACTIVE, 0);
    }
    assert_int_equal(hl_lockfree_credits(c, &act), 0);
    blk[m - 1] = hl_malloc(n);              /* the last credit, no more blocks: FULL */
    assert_int_equal(hl_lockfree_credits(c, &act), -1);
    expect(d, HL_LF_FULL, 0);
    for (unsigned i = 0; i < m; i++)         /* all distinct, all inside */
        for (unsigned j = i + 1; j < m; j++) assert_ptr_not_equal(blk[i], blk[j]);

    hl_free(blk[1]);                        /* FULL -> PARTIAL, into the Partial slot */
    expect(d, HL_LF_PARTIAL, 1);
    assert_ptr_equal(hl_lockfree_partial_slot(c), d);
    hl_free(blk[2]);
    hl_free(blk[3]);
    expect(d, HL_LF_PARTIAL, 3);

    blk[1] = hl_malloc(n);                  /* MallocFromPartial: one block, 2 credits */
    assert_ptr_equal(hl_lockfree_desc_of(blk[1]), d);
    assert_null(hl_lockfree_partial_slot(c));
    assert_int_equal(hl_lockfree_credits(c, &act), 1);
    assert_ptr_equal(act, d);
    expect(d, HL_LF_ACTIVE, 0);
    blk[2] = hl_malloc(n);
    blk[3] = hl_malloc(n);                  /* last credit: FULL again */
    expect(d, HL_LF_FULL, 0);

    /* Free all but one (PARTIAL, count grows), then the last: EMPTY, out of the slot. */
    for (unsigned i = 1; i < m; i++) {
        hl_free(blk[i]);
        expect(d, HL_LF_PARTIAL, i);
    }
    assert_ptr_equal(hl_lockfree_partial_slot(c), d);
    struct hoardlab_stats before;
    hoardlab_stats(&before);
    hl_free(blk[0]);
    assert_int_equal(hl_lockfree_anchor(d).state, HL_LF_EMPTY);
    assert_null(hl_lockfree_partial_slot(c));
    struct hoardlab_stats after;
    hoardlab_stats(&after);
    assert_int_equal(after.descriptors + 1, before.descriptors);   /* retired */
    hl_lockfree_check();
    for (unsigned i = 0; i < nold; i++) hl_free(old[i]);
    hl_lockfree_check();
}

/* Credits are capped at MAXCREDITS: a superblock of more blocks refills Active from its count
 * when the last credit is taken (MallocFromActive lines 13-17, UpdateActive). */
static void credits_refill(void **state)
{
    (void)state;
    void *p[200], *act;
    p[0] = hl_malloc(16);
    void *d = hl_lockfree_desc_of(p[0]);
    unsigned c = hl_class_of(16), m = hl_lockfree_maxcount(d);
    assert_true(m > 2 * MAXCREDITS + 2);
    for (int i = 1; i < 200; i++) {
        p[i] = hl_malloc(16);
        int cr = hl_lockfree_credits(c, &act);
        assert_true(cr >= -1 && cr < MAXCREDITS);
        hl_lockfree_check();
    }
    for (int i = 199; i >= 0; i--) hl_free(p[i]);
    hl_lockfree_check();
}

/* DescAlloc / DescRetire: a retired descriptor comes back, but not while a hazard pointer
 * holds it. */
static void descriptor_reuse(void **state)
{
    (void)state;
    hl_lockfree_hp_flush();                  /* nothing else retired: DescAvail order known */
    void *d = hl_lockfree_desc_alloc();
    assert_non_null(d);
    struct hl_hp_rec *r = hl_hp_mine();
    atomic_store(&r->slot[3], d);
    hl_lockfree_desc_retire(d);
    hl_lockfree_hp_flush();
    void *e = hl_lockfree_desc_alloc();
    assert_ptr_not_equal(e, d);              /* still hazardous: not on DescAvail yet */
    hl_hp_clear(r, 3);
    hl_lockfree_hp_flush();
    void *f = hl_lockfree_desc_alloc();
    assert_ptr_equal(f, d);                  /* LIFO DescAvail: the one just freed */
    hl_lockfree_desc_retire(e);
    hl_lockfree_desc_retire(f);
    hl_lockfree_hp_flush();
}

/* The size-class list of partial superblocks: FIFO (the paper's choice) or LIFO. */
static void partial_list_order(void **state)
{
    (void)state;
    unsigned c = hl_class_of(hl_large_threshold);   /* a class no other test fills */
    while (hl_lockfree_list_get(c)) {}
    void *d[3];
    for (int i = 0; i < 3; i++) { d[i] = hl_lockfree_desc_alloc(); hl_lockfree_list_put(c, d[i]); }
    bool fifo = hl_cfg.partial_list == HL_LIST_FIFO;
    for (int i = 0; i < 3; i++) assert_ptr_equal(hl_lockfree_list_get(c), d[fifo ? i : 2 - i]);
    assert_null(hl_lockfree_list_get(c));
    hl_lockfree_list_put(c, d[0]);           /* interleaved */
    hl_lockfree_list_put(c, d[1]);
    assert_ptr_equal(hl_lockfree_list_get(c), d[fifo ? 0 : 1]);
    hl_lockfree_list_put(c, d[2]);
    assert_ptr_equal(hl_lockfree_list_get(c), d[fifo ? 1 : 2]);
    assert_ptr_equal(hl_lockfree_list_get(c), d[fifo ? 2 : 0]);
    assert_null(hl_lockfree_list_get(c));
    for (int i = 0; i < 3; i++) hl_lockfree_desc_retire(d[i]);
    hl_lockfree_hp_flush();
}

/* ---- threads ------------------------------------------------------------------------------ */

#define THREADS 4
#define OPS     40000
#define RING    256

/* Each thread passes blocks to the next through a ring of atomic slots: most frees are remote. */
static _Atomic(unsigned char *) ring[THREADS][RING];
static _Atomic int corrupt;

static unsigned char *make(unsigned seed)
{
    size_t span = hl_large_threshold < 3016 ? hl_large_threshold - 16 : 3000;  /* no large */
    size_t n = 16 + seed % span;
    unsigned char *p = hl_malloc(n);
    memset(p, (unsigned char)n, n);
    memcpy(p, &n, sizeof n);
    return p;
}

static void check_and_free(unsigned char *p)
{
    size_t n = 0;
    memcpy(&n, p, sizeof n);
    for (size_t i = sizeof n; i < n; i++)
        if (p[i] != (unsigned char)n) { atomic_store(&corrupt, 1); break; }
    hl_free(p);
}

static void *stress_worker(void *arg)
{
    int me = (int)(intptr_t)arg, next = (me + 1) % THREADS;
    unsigned seed = 777u + (unsigned)me * 7919u;
    unsigned char *own[64] = {0};
    for (int op = 0; op < OPS; op++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % 64, r = (seed >> 16) % RING;
        if (own[k]) check_and_free(own[k]);
        own[k] = make(seed >> 4);
        /* hand one to the next thread; free what the previous one left for us */
        unsigned char *p = atomic_exchange(&ring[next][r], make(seed >> 3));
        if (p) check_and_free(p);
        p = atomic_exchange(&ring[me][(r * 7) % RING], NULL);
        if (p) check_and_free(p);
    }
    for (int k = 0; k < 64; k++) if (own[k]) check_and_free(own[k]);
    return NULL;
}

static void stress_remote_frees(void **state)
{
    (void)state;
    struct hoardlab_stats s0, s1;
    hoardlab_stats(&s0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, stress_worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        for (int r = 0; r < RING; r++) {
            unsigned char *p = atomic_exchange(&ring[i][r], NULL);
            if (p) check_and_free(p);
        }
    assert_int_equal(atomic_load(&corrupt), 0);
    hl_lockfree_check();                     /* quiescent: every anchor consistent */
    hoardlab_stats(&s1);
    assert_true(s1.cas_attempts > s0.cas_attempts + 2ull * THREADS * OPS);
    assert_true(s1.cas_free_attempts > s0.cas_free_attempts);
    assert_true(s1.cas_free_attempts <= s1.cas_attempts);
    assert_true(s1.cas_retries <= s1.cas_attempts);
    /* No lock on malloc or free; the locks that remain are the core's, off the common path:
     * thread registration and exit (thread.c), new memory (arena.c, meta.c). */
    assert_true(s1.lock_acquisitions - s0.lock_acquisitions < 1000);
    printf("# stress: %llu CAS (%llu retried), of free %llu (%llu); %llu locks; superblocks "
           "active %llu partial %llu full %llu empty %llu, descriptors %llu\n",
           (unsigned long long)(s1.cas_attempts - s0.cas_attempts),
           (unsigned long long)(s1.cas_retries - s0.cas_retries),
           (unsigned long long)(s1.cas_free_attempts - s0.cas_free_attempts),
           (unsigned long long)(s1.cas_free_retries - s0.cas_free_retries),
           (unsigned long long)(s1.lock_acquisitions - s0.lock_acquisitions),
           (unsigned long long)s1.sb_active, (unsigned long long)s1.sb_partial,
           (unsigned long long)s1.sb_full, (unsigned long long)s1.sb_empty,
           (unsigned long long)s1.descriptors);
}

/* Short-lived threads, a few at a time, each leaving blocks for the next one to free. */
#define CHURN 600
#define WAVE  4
static _Atomic(void *) left[WAVE][8];

static void *short_life(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    void *mine[32];
    for (int i = 0; i < 32; i++) { mine[i] = hl_malloc((size_t)(16 + i * 131)); memset(mine[i], i, 16); }
    for (int i = 0; i < 8; i++) {
        void *p = atomic_exchange(&left[w][i], mine[i]);
        if (p) hl_free(p);
    }
    for (int i = 8; i < 32; i++) hl_free(mine[i]);
    return NULL;
}

static void thread_churn(void **state)
{
    (void)state;
    struct hoardlab_stats s0, s1;
    for (int round = 0; round < CHURN / WAVE; round++) {
        pthread_t t[WAVE];
        for (unsigned i = 0; i < WAVE; i++)
            assert_int_equal(pthread_create(&t[i], NULL, short_life, (void *)(uintptr_t)i), 0);
        for (unsigned i = 0; i < WAVE; i++) pthread_join(t[i], NULL);
        if (round == 10) hoardlab_stats(&s0);
    }
    hoardlab_stats(&s1);
    hl_lockfree_check();
    /* Memory held stays what the first rounds needed (ids, heaps and records are reused). */
    assert_true(s1.os_bytes <= s0.os_bytes + (4u << 20));
    assert_true(hl_hp_pending() < 100000);
    for (unsigned w = 0; w < WAVE; w++)
        for (int i = 0; i < 8; i++) {
            void *p = atomic_exchange(&left[w][i], NULL);
            if (p) hl_free(p);
        }
    hl_lockfree_check();
}

/* Partial slots (partial_slots, issue 34): superblocks a thread's frees make PARTIAL park in
 * its heap's ring of slots, and reach the class list (where any heap takes them) only when the
 * ring is full. Thread A fills SB superblocks of a class no other test uses and frees one block
 * of each (FULL -> PARTIAL, SB puts into A's heap); then thread B, alive beside A and so on
 * another heap, allocates one block of the class. With one slot (the paper's) SB - 1 of A's
 * superblocks went to the class list and B gets one of them: the two threads now share it.
 * With SB slots or more, A's heap keeps them all and B gets a superblock of its own. */
#define SB 5
static size_t ring_size;
static void *ring_probe;                  /* main's block of the class */
static void *ring_desc[SB];
static sem_t ring_ready, ring_done;
static void *ring_b_desc;

static void *ring_a(void *arg)
{
    (void)arg;
    unsigned m = hl_lockfree_maxcount(hl_lockfree_desc_of(ring_probe));
    void *blk[SB * 16];
    for (unsigned i = 0; i < SB * m; i++) blk[i] = hl_malloc(ring_size);
    for (unsigned k = 0; k < SB; k++) {
        ring_desc[k] = hl_lockfree_desc_of(blk[k * m]);
        for (unsigned i = 0; i < m; i++) assert_ptr_equal(hl_lockfree_desc_of(blk[k * m + i]), ring_desc[k]);
        expect(ring_desc[k], HL_LF_FULL, 0);
    }
    for (unsigned k = 0; k < SB; k++) hl_free(blk[k * m]);     /* SB puts into A's heap */
    sem_post(&ring_ready);
    sem_wait(&ring_done);
    for (unsigned k = 0; k < SB; k++)
        for (unsigned i = 1; i < m; i++) hl_free(blk[k * m + i]);
    return NULL;
}

static void *ring_b(void *arg)
{
    (void)arg;
    void *p = hl_malloc(ring_size);
    ring_b_desc = hl_lockfree_desc_of(p);
    hl_free(p);
    return NULL;
}

static void partial_slots_keep_superblocks(void **state)
{
    (void)state;
    if (hl_cfg.heap_select == HL_SELECT_CPU) skip();   /* A and B may share a CPU's heap */
    /* A class of 3..12 blocks a superblock, other than small_sb_size's. */
    unsigned skip_m = 0, taken = hl_class_of(small_sb_size(&skip_m));
    for (size_t n = hl_large_threshold / 8; n <= hl_large_threshold && !ring_size; n += 16) {
        void *p = hl_malloc(n);
        unsigned m = hl_lockfree_maxcount(hl_lockfree_desc_of(p));
        if (hl_class_of(n) != taken && m >= 3 && m <= 12) { ring_size = n; ring_probe = p; }
        else hl_free(p);
    }
    assert_true(ring_size > 0);
    sem_init(&ring_ready, 0, 0);
    sem_init(&ring_done, 0, 0);
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, ring_a, NULL), 0);
    sem_wait(&ring_ready);
    assert_int_equal(pthread_create(&b, NULL, ring_b, NULL), 0);
    pthread_join(b, NULL);
    sem_post(&ring_done);
    pthread_join(a, NULL);
    bool shared = false;
    for (unsigned k = 0; k < SB; k++) shared |= ring_b_desc == ring_desc[k];
    if (hl_cfg.partial_slots >= SB) assert_false(shared);
    else assert_true(shared);
    hl_free(ring_probe);
    hl_lockfree_check();
}

/* memalign: an interior pointer frees its whole block; usable_size counts to the block end. */
static void memalign_interior(void **state)
{
    (void)state;
    for (size_t a = 32; a <= 1024; a *= 2) {
        void *p;
        assert_int_equal(hl_posix_memalign(&p, a, 100), 0);
        assert_int_equal((uintptr_t)p % a, 0);
        assert_true(hl_malloc_usable_size(p) >= 100);
        memset(p, 1, 100);
        hl_free(p);
        hl_lockfree_check();
    }
}

/* Checks build: a double free is caught by the anchor verification (the block is already on
 * its superblock's avail list) and aborts. */
static void checks_catch_double_free(void **state)
{
    (void)state;
#ifdef HL_CHECKS
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        void *keep = hl_malloc(64), *p = hl_malloc(64);
        hl_free(p);
        close(2);
        hl_free(p);                          /* must abort */
        (void)keep;
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
#else
    skip();
#endif
}

int main(void)
{
    setenv("HOARD_STRATEGY", "lockfree", 0);
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(anchor_transitions),
        cmocka_unit_test(credits_refill),
        cmocka_unit_test(descriptor_reuse),
        cmocka_unit_test(partial_list_order),
        /* before the stress tests, which leave superblocks on every small class's list */
        cmocka_unit_test(partial_slots_keep_superblocks),
        cmocka_unit_test(memalign_interior),
        cmocka_unit_test(checks_catch_double_free),
        cmocka_unit_test(stress_remote_frees),
        cmocka_unit_test(thread_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
