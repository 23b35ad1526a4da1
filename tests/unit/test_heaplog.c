/* test_heaplog.c — the heap log (heap_log, src/core/instruments/heaplog.c) under hoard: a heap that
 * drains gives superblocks to the global heap, and the log's attach line into the global heap
 * names the heap it came from (a move), after that heap's detach line of the same superblock;
 * a heap that then allocates takes one back (a move out of the global heap); every line
 * carries the heap's superblocks per list, which add up to what it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"
#include "instruments.h"
#include "heapselect.h"

#define BLOCKS 4000
static char log_path[64];

struct entry {
    char kind;
    unsigned long long t, thread, heap, global, cls, sb, u, a, live, total;
    char from[8], to[8], peer[16];
};

/* Parse one line of the log; false for the header and any other line. */
static bool parse(const char *line, struct entry *e, unsigned lists)
{
    int n = 0, k;
    if (sscanf(line, "%c %llu %llu %llu %llu %llu %llx %7s %7s %15s %llu %llu %llu%n",
               &e->kind, &e->t, &e->thread, &e->heap, &e->global, &e->cls, &e->sb, e->from,
               e->to, e->peer, &e->u, &e->a, &e->live, &n) != 13 || line[0] == '#')
        return false;
    e->total = 0;
    for (unsigned i = 0; i < lists; i++) {
        unsigned long long c;
        if (sscanf(line + n, "%llu%n", &c, &k) != 1) return false;
        e->total += c, n += k;
    }
    return true;
}

static void moves_to_and_from_the_global_heap(void **state)
{
    (void)state;
    static void *p[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) assert_non_null(p[i] = hl_malloc(64));
    for (int i = 0; i < BLOCKS; i++) hl_free(p[i]);      /* drains: superblocks to heap 0 */
    for (int i = 0; i < BLOCKS; i++) assert_non_null(p[i] = hl_malloc(64));   /* back */
    for (int i = 0; i < BLOCKS; i++) hl_free(p[i]);
    hl_heaplog_write();

    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    char line[2048];
    unsigned lists = 0, to_global = 0, from_global = 0, lines = 0;
    unsigned long long detached_sb = 0, detached_heap = ~0ull;
    struct entry e;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "# pid %*u groups %u", &lists) == 1) lists += 2;
        if (!parse(line, &e, lists)) continue;
        lines++;
        if (e.kind == 'd') detached_sb = e.sb, detached_heap = e.heap;
        if (e.kind != 'a' || e.peer[0] == '-') continue;
        /* a move: the same thread's detach of the same superblock came just before */
        assert_int_equal(e.sb, detached_sb);
        assert_int_equal(strtoull(e.peer, NULL, 10), detached_heap);
        if (e.global && detached_heap != e.heap) to_global++;
        if (!e.global && detached_heap == 0) from_global++;
        if (e.global) assert_true(e.total > 0 && e.a > 0);
    }
    fclose(f);
    unlink(log_path);
    assert_int_not_equal(lists, 0);
    assert_true(lines > 0);
    assert_true(to_global > 0);
    assert_true(from_global > 0);
}

int main(void)
{
    snprintf(log_path, sizeof log_path, "/tmp/hoardlab-test-heaplog-%d.txt", (int)getpid());
    setenv("HOARD_STRATEGY", "hoard", 1);
    setenv("HOARD_HEAP_LOG", log_path, 1);
    setenv("HOARD_RELEASE_THRESHOLD", "0", 1);     /* K = 0: a drained heap keeps nothing */
    hl_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moves_to_and_from_the_global_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
