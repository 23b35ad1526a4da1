/* census.c — the false-sharing census computed from OUTSIDE the allocator (issue 47): from the
 * addresses a workload received, the thread each was handed to, and when each was live, with
 * no hook inside the allocator (libhoardlab's census, src/core/instruments/census.c, counts the
 * same thing from inside it, and only libhoardlab has it). Pure: no allocator state is read.
 *
 * A block is counted when it was handed to a thread while a block of another holder was live
 * on one of the cache lines it touches (a block touches its first and last line; blocks do not
 * overlap, so only those two can hold other blocks). `from` and `to` are ticks of one counter
 * the workload advances: `from` read after malloc returned, `to` before free is called, so a
 * block reused after its free never overlaps the block it was (the census can miss an overlap
 * that lasted less than a tick: it counts at least zero, never a pair that was not there). */
#include <stdlib.h>
#include "util.h"

struct entry { uintptr_t line; uint64_t from, to; uint32_t holder; size_t block; };

static int by_line_then_from(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return 0;
}

int hb_census_count(const struct hb_census_block *b, size_t n, size_t line_size,
                    unsigned long long *false_blocks, unsigned long long *false_lines)
{
    *false_blocks = *false_lines = 0;
    if (!n) return 0;
    if (!line_size) line_size = 64;
    struct entry *e = malloc(2 * n * sizeof *e);
    unsigned char *hit = calloc(n, 1);
    size_t cap = 16, m = 0;
    struct entry *act = malloc(cap * sizeof *act);
    if (!e || !hit || !act) {
        free(e), free(hit), free(act);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uintptr_t first = b[i].addr / line_size;
        uintptr_t last = (b[i].addr + (b[i].size ? b[i].size : 1) - 1) / line_size;
        e[m++] = (struct entry){ first, b[i].from, b[i].to, b[i].holder, i };
        if (last != first) e[m++] = (struct entry){ last, b[i].from, b[i].to, b[i].holder, i };
    }
    qsort(e, m, sizeof *e, by_line_then_from);
    size_t live = 0;
    for (size_t k = 0; k < m; k++) {
        if (k == 0 || e[k].line != e[k - 1].line) live = 0;     /* a new line: none live */
        bool flagged = false;
        size_t keep = 0;
        for (size_t a = 0; a < live; a++)                       /* drop the blocks freed */
            if (act[a].to > e[k].from) act[keep++] = act[a];
        live = keep;
        for (size_t a = 0; a < live; a++)
            if (act[a].holder != e[k].holder) flagged = true;
        if (flagged) {
            if (!hit[e[k].block]) ++*false_blocks;
            hit[e[k].block] = 1;
        }
        if (live == cap) {
            struct entry *grown = realloc(act, 2 * cap * sizeof *act);
            if (!grown) {
                free(e), free(hit), free(act);
                return -1;
            }
            act = grown, cap *= 2;
        }
        act[live++] = e[k];
        e[k].holder = flagged;          /* act[] has the holder; e[k] keeps the flag */
    }
    /* the lines with a flagged entry (entries of a line are adjacent) */
    uintptr_t counted_line = 0;
    bool any = false;
    for (size_t k = 0; k < m; k++)
        if (e[k].holder && (!any || e[k].line != counted_line)) {
            ++*false_lines;
            counted_line = e[k].line;
            any = true;
        }
    free(e), free(hit), free(act);
    return 0;
}
