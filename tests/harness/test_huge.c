/* test_huge.c — harness/huge.c's coverage parser on synthetic /proc/self/smaps_rollup text
 * (issue 50), and the live reading of this process's file. Exits 1 on a wrong answer. */
#include <stdio.h>
#include <stdlib.h>
#include "huge.h"

static int failed;

static void expect(int ok, const char *what)
{
    if (!ok) { fprintf(stderr, "test_huge: FAIL: %s\n", what); failed = 1; }
}

int main(void)
{
    long huge, rss;
    const char *rollup =
        "00400000-7ffd5a5ff000 ---p 00000000 00:00 0                          [rollup]\n"
        "Rss:              204800 kB\n"
        "Pss:              200000 kB\n"
        "Private_Dirty:    190000 kB\n"
        "Anonymous:        196608 kB\n"
        "LazyFree:              0 kB\n"
        "AnonHugePages:    153600 kB\n"
        "ShmemPmdMapped:        0 kB\n";
    double c = hb_huge_parse(rollup, &huge, &rss);
    expect(huge == 153600 && rss == 204800, "fields of a full rollup");
    expect(c > 0.7499 && c < 0.7501, "coverage 153600 / 204800 = 0.75");
    c = hb_huge_parse("Rss: 100 kB\nAnonHugePages: 0 kB\n", &huge, &rss);
    expect(c == 0 && huge == 0 && rss == 100, "no huge pages: coverage 0");
    c = hb_huge_parse("Rss: 100 kB\nPss: 100 kB\n", &huge, &rss);
    expect(c == -1 && huge == -1 && rss == 100, "no AnonHugePages line (no THP): unknown");
    c = hb_huge_parse("Rss: 0 kB\nAnonHugePages: 0 kB\n", &huge, &rss);
    expect(c == -1, "Rss 0: unknown, not a division by zero");
    c = hb_huge_parse("ShmemHugePages: 2048 kB\nRss: 4096 kB\nAnonHugePages: 2048 kB\n", &huge, &rss);
    expect(huge == 2048 && c == 0.5, "a field whose name ends in the key's is not the key");
    c = hb_huge_coverage(&huge, &rss);
    expect(c == -1 || (c >= 0 && c <= 1 && rss > 0 && huge >= 0), "this process's coverage");
    return failed;
}
