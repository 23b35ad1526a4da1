/* stats_prog.c — built against an installed hoardlab with pkg-config (tests/install): under
 * LD_PRELOAD of the installed libhoardlab.so, counts its own allocations through the
 * statistics API and checks that the library serving it is the one under LIBDIR (argv[1]). */
#define _GNU_SOURCE     /* dladdr */
#include <hoardlab.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: stats_prog LIBDIR STRATEGY\n");
        return 2;
    }
    enum { N = 1000, SIZE = 64 };
    static void *blocks[N];
    struct hoardlab_stats before, after;
    hoardlab_stats(&before);
    for (int i = 0; i < N; i++)
        if (!(blocks[i] = malloc(SIZE)))
            return 1;
    hoardlab_stats(&after);
    for (int i = 0; i < N; i++)
        free(blocks[i]);

    Dl_info info;
    const char *lib = dladdr((void *)hoardlab_stats, &info) ? info.dli_fname : "?";
    const char *strategy = hoardlab_strategy();
    printf("library %s\nstrategy %s\nmallocs %llu\nin_use %llu\n", lib,
           strategy ? strategy : "(null)",
           (unsigned long long)(after.mallocs - before.mallocs),
           (unsigned long long)(after.in_use - before.in_use));
    int ok = strncmp(lib, argv[1], strlen(argv[1])) == 0 && lib[strlen(argv[1])] == '/' &&
             strategy && strcmp(strategy, argv[2]) == 0 &&
             after.mallocs - before.mallocs >= N && after.in_use - before.in_use >= N * SIZE;
    if (!ok)
        fprintf(stderr, "stats_prog: expected the library under %s, strategy %s, >= %d mallocs "
                "and >= %d bytes in use\n", argv[1], argv[2], N, N * SIZE);
    return ok ? 0 : 1;
}
