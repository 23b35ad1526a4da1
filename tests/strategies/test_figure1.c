/* test_figure1.c — the Hoard paper's Figure 1 example (§3.2) replayed step by step, with f = 1/4
 * and K = 0, two threads and heaps (thread i uses heap i), plus the global heap 0. After every
 * step it checks which superblock sits in which heap, and u and a.
 *
 * Superblocks hold four blocks, as drawn. Initially the global heap is empty, heap 1 holds a
 * partly full superblock A (x1, x2, x3) and an empty one B, heap 2 a full one C (y1..y4).
 *   1. t1: x9 = malloc   -> from the fullest superblock of heap 1: A (now full)
 *   2. t1: free(y4)      -> back to C in heap 2, not to heap 1; heap 2 is 3/4 full, which is
 *                           not MORE than f empty: nothing moves
 *   3. t2: free(x2)      -> back to A in heap 1
 *   4. t2: free(x9)      -> heap 1 crosses the threshold: superblocks go to the global heap
 *
 * Where this differs from the paper's narrative, and why: the text says the free of x2 does not
 * make heap 1 cross the threshold and the free of x9 then moves the empty superblock B. With
 * K = 0 that cannot be: heap 1 holds B completely empty beside A, so u_1 <= a_1 / 2 <
 * (1 - f) a_1 from the start (the figure's initial state itself breaks the invariant), and the
 * first free in heap 1, of x2, already crosses it. Figure 2's rule, applied literally, moves
 * the completely empty B at step 3 (after which heap 1, 3 of 4 blocks in use, is within the
 * threshold), and at step 4 (2 of 4 in use) moves A, which is half empty, so at least f. The
 * paper's points hold: a freed block goes back to its own superblock's heap (y4 to heap 2,
 * thread 1 never reuses it), and the completely free superblock goes to the global heap first.
 * Hoard's free does not depend on which thread calls it (it finds the owner heap), so the
 * steps run on the test's thread; malloc is given the heap explicitly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "hoard.h"

static struct hl_heap *heap[3];               /* 0 global, 1 and 2 per-processor */

static void find_heap(struct hl_heap *h, void *arg)
{
    (void)arg;
    if (h->index <= 2) heap[h->index] = h;
}

static struct hl_heap *owner(const void *p)
{
    return atomic_load_explicit(&hl_sb_of(p)->owner, memory_order_relaxed);
}

/* Blocks in use and blocks held in class c of heap h, in blocks. */
static void expect_heap(unsigned h, unsigned c, size_t used, size_t held)
{
    size_t sz = hl_class_size(c);
    assert_int_equal(heap[h]->cls[c].acct->u, used * sz);
    assert_int_equal(heap[h]->cls[c].acct->a, held * sz);
    assert_int_equal(heap[h]->nsb, held / 4);
    hl_heap_check(heap[h], -1);
}

static void figure1(void **state)
{
    (void)state;
    hl_heaps_foreach(find_heap, NULL);
    assert_non_null(heap[0]);
    assert_ptr_equal(heap[0], hl_heap_global);
    assert_non_null(heap[1]);
    assert_non_null(heap[2]);

    unsigned c = 0;                                      /* a class of four blocks */
    while (c < hl_classes->count && hl_sb_capacity_of(c) != 4) c++;
    assert_true(c < hl_classes->count);
    size_t sz = hl_class_size(c);

    /* The initial state, built directly (no threshold is applied while building it). */
    struct hl_sb *A = hl_sb_new(c), *B = hl_sb_new(c), *C = hl_sb_new(c);
    hl_heap_attach(heap[1], A);
    hl_heap_attach(heap[1], B);
    hl_heap_attach(heap[2], C);
    void *x1 = hl_heap_alloc_from(heap[1], A), *x2 = hl_heap_alloc_from(heap[1], A),
         *x3 = hl_heap_alloc_from(heap[1], A);
    void *y[4];
    for (int i = 0; i < 4; i++) y[i] = hl_heap_alloc_from(heap[2], C);
    expect_heap(0, c, 0, 0);
    expect_heap(1, c, 3, 8);
    expect_heap(2, c, 4, 4);

    /* 1. t1: x9 = malloc(s): the fullest superblock of heap 1 is A. */
    void *x9 = hl_hoard_malloc_in(heap[1], sz);
    assert_ptr_equal(hl_sb_of(x9), A);
    assert_true(hl_sb_full(A) && hl_sb_empty(B));
    expect_heap(1, c, 4, 8);

    /* 2. t1: free(y4): back to C, in heap 2; heap 2 is not more than f empty. */
    hl_heap_row_free(y[3]);
    assert_ptr_equal(owner(y[0]), heap[2]);
    assert_int_equal(C->used, 3);
    expect_heap(2, c, 3, 4);
    expect_heap(0, c, 0, 0);
    /* Thread 1's next block does not come from C: y4's memory is heap 2's alone. */
    void *x10 = hl_hoard_malloc_in(heap[1], sz);
    assert_ptr_equal(hl_sb_of(x10), B);
    hl_heap_row_free(x10);                                  /* u1 4 blocks of a1 8: B moves */
    assert_ptr_equal(owner(x1), heap[1]);
    assert_ptr_equal(B->owner, heap[0]);
    expect_heap(0, c, 0, 4);
    /* Undo that aside: B back to heap 1, empty, as in the figure. */
    hl_heap_detach(heap[0], B);
    hl_heap_attach(heap[1], B);
    expect_heap(1, c, 4, 8);

    /* 3. t2: free(x2): back to A in heap 1. Heap 1 (u 3 of a 8 blocks) crosses the
     * threshold; the completely empty B goes to the global heap; then u 3 of a 4 is not more
     * than f empty. */
    hl_heap_row_free(x2);
    assert_ptr_equal(owner(x1), heap[1]);
    assert_ptr_equal(B->owner, heap[0]);
    expect_heap(1, c, 3, 4);
    expect_heap(0, c, 0, 4);
    expect_heap(2, c, 3, 4);

    /* 4. t2: free(x9): heap 1 has 2 of 4 blocks in use, more than f empty: A (exactly half
     * empty, so at least f empty) goes to the global heap with x1 and x3 still in it. */
    hl_heap_row_free(x9);
    assert_ptr_equal(owner(x1), heap[0]);
    assert_ptr_equal(owner(x3), heap[0]);
    expect_heap(1, c, 0, 0);
    expect_heap(0, c, 2, 8);
    expect_heap(2, c, 3, 4);
    assert_ptr_equal(heap[0]->cls[c].list[HL_LIST_EMPTY], B);

    /* Afterwards heap 1 takes superblocks back from the global heap before asking the OS:
     * the fullest with room first (A), and frees of x1 and x3 stay in the global heap. */
    size_t os = hl_os_bytes();
    void *x11 = hl_hoard_malloc_in(heap[1], sz);
    assert_ptr_equal(hl_sb_of(x11), A);
    assert_ptr_equal(A->owner, heap[1]);
    assert_int_equal(hl_os_bytes(), os);
    expect_heap(1, c, 3, 4);
    expect_heap(0, c, 0, 4);
}

/* The checks build (-Dchecks=true) must stop on a heap that breaks Hoard's invariant, and on
 * a superblock filed in the wrong fullness group. Each case runs in a child process. */
static int dies_with_sigabrt(void (*fn)(unsigned c), unsigned c)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDERR_FILENO);
        fn(c);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void broken_invariant(unsigned c)
{
    struct hl_heap *h = hl_heap_new(77, true);
    for (int i = 0; i < 8; i++) {                        /* 8 superblocks, 1 of 4 blocks used */
        struct hl_sb *sb = hl_sb_new(c);
        hl_heap_attach(h, sb);
        hl_heap_alloc_from(h, sb);
    }
    hl_hoard_malloc_in(h, hl_class_size(c));             /* the check after it must abort */
}

static void misfiled_superblock(unsigned c)
{
    struct hl_heap *h = hl_heap_new(78, true);
    struct hl_sb *sb = hl_sb_new(c);
    hl_heap_attach(h, sb);
    hl_heap_alloc_from(h, sb);
    sb->used++;                                          /* counts no longer match its group */
    sb->carved++;
    hl_hoard_malloc_in(h, hl_class_size(c));
}

static void checker_catches_breakage(void **state)
{
    (void)state;
    if (!HL_INVARIANT_CHECKS) skip();
    unsigned c = 0;
    while (c < hl_classes->count && hl_sb_capacity_of(c) != 4) c++;
    assert_true(dies_with_sigabrt(broken_invariant, c));
    assert_true(dies_with_sigabrt(misfiled_superblock, c));
}

int main(void)
{
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_RELEASE_THRESHOLD", "0", 1);
    setenv("HOARD_EMPTY_FRACTION", "1/4", 1);
    setenv("HOARD_HEAP_SELECT", "hash", 1);
    setenv("HOARD_HEAPS", "2", 1);
    setenv("HOARD_RELEASE_EMPTY", "off", 1);
    setenv("HOARD_REMOTE_FREE", "lock", 1);             /* the paper's trace: locked frees */
    setenv("HOARD_ACCOUNTING", "class", 1);             /* u and a per class, as traced */
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(figure1),
        cmocka_unit_test(checker_catches_breakage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
