/* hlcost.c — the loop `tools/hoardlab cost` runs under callgrind to count an allocator's
 * instructions per malloc+free pair. Like hlbench it only calls malloc and free, so it
 * measures any allocator under LD_PRELOAD.
 *
 *   hlcost SIZE PAIRS local    one thread: PAIRS times p = malloc(SIZE); free(p)
 *   hlcost SIZE PAIRS remote   a second thread mallocs PAIRS blocks, the main thread frees them
 *
 * Both modes first create and join a thread, so every allocator runs in its multi-threaded
 * mode (glibc, for one, skips its locks until a second thread exists). The per-pair cost is the
 * slope between two runs with different PAIRS, which cancels start-up and exit. The array of
 * pointers in `remote` comes from mmap, so it costs no allocator work.
 *
 * The main thread is pinned to the first processor of its affinity mask and, in `remote`, the
 * producer to the second (when there is one): a strategy that picks heaps by processor
 * (heap_select = cpu) would otherwise switch heaps, or free into the producer's heap or
 * another, as valgrind's scheduler moved the threads; pinned, the counts repeat exactly and
 * the remote free is remote. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static size_t size, pairs;
static void **blocks;

/* Keeps the compiler from pairing malloc with free away. */
static void use(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static void *nothing(void *arg) { return arg; }

static void *produce(void *arg)
{
    for (size_t i = 0; i < pairs; i++) use(blocks[i] = malloc(size));
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "local") && strcmp(argv[3], "remote"))) {
        fprintf(stderr, "usage: hlcost SIZE PAIRS local|remote\n");
        return 2;
    }
    size = strtoull(argv[1], NULL, 0);
    pairs = strtoull(argv[2], NULL, 0);
    /* cpu[0] for the main thread, cpu[1] for the producer */
    cpu_set_t mask, one;
    int cpu[2] = {-1, -1}, n = 0;
    if (!sched_getaffinity(0, sizeof mask, &mask))
        for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
            if (CPU_ISSET(c, &mask)) cpu[n++] = c;
    if (n > 0) {
        CPU_ZERO(&one);
        CPU_SET(cpu[0], &one);
        if (sched_setaffinity(0, sizeof one, &one)) return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL)) return 1;
    if (!strcmp(argv[3], "local")) {
        for (size_t i = 0; i < pairs; i++) {
            void *p = malloc(size);
            use(p);
            free(p);
        }
        return 0;
    }
    blocks = mmap(NULL, pairs * sizeof *blocks, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (blocks == MAP_FAILED) return 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (n == 2) {
        CPU_ZERO(&one);
        CPU_SET(cpu[1], &one);
        if (pthread_attr_setaffinity_np(&attr, sizeof one, &one)) return 1;
    }
    if (pthread_create(&t, &attr, produce, NULL) || pthread_join(t, NULL)) return 1;
    for (size_t i = 0; i < pairs; i++) free(blocks[i]);
    return 0;
}
