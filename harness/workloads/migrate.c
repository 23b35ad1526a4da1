/* migrate.c — threads that move between CPUs while they allocate and free (issue 27): the
 * pattern behind Hoard pull request #103's claim that keying heap ownership to the CPU (PR
 * #88's `heap_select = cpu`) makes memory grow and throughput decay when threads migrate,
 * where a thread-stable home heap does not.
 *
 * Each thread keeps a live set of `live` blocks of random sizes in [min_size, max_size] and
 * replaces a random one at a time (a free and a malloc: one operation). After every `every`
 * operations all threads meet at a barrier (a migration epoch ends), thread 0 records the
 * epoch (its throughput, the live bytes, libhoardlab's A now and the resident set), and each
 * thread moves: sched_setaffinity to the next CPU of the process's allowed set, thread i to
 * CPU (i + k + 1) mod n after epoch k, so on 2 CPUs two threads swap at every epoch. A move
 * of the calling thread takes effect before sched_setaffinity returns; sched_getcpu()
 * afterwards confirms it (`moves_seen`). With one allowed CPU nothing moves (`moves` = 0).
 *
 * The live sets are made on each thread's first CPU before the measured phase; blocks are
 * stamped per thread (a block never changes threads, only the thread changes CPUs). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "../hlbench.h"

const struct hb_param hb_migrate_params[] = {
    { "epochs",   HB_INT, "200",   true,  "migration epochs (each thread moves after each)" },
    { "every",    HB_INT, "10000", false, "N: operations (a free + a malloc) per thread "
                                          "between moves" },
    { "live",     HB_INT, "1000",  false, "blocks each thread keeps live" },
    { "min_size", HB_INT, "16",    false, "smallest block, bytes" },
    { "max_size", HB_INT, "512",   false, "largest block, bytes" },
    { NULL, 0, NULL, false, NULL },
};

struct migrate {
    long long epochs, every, live;
    uint64_t lo, hi;
    int *cpu, ncpu;                     /* the process's allowed CPUs */
    pthread_barrier_t step;
    _Atomic unsigned long long live_bytes, moves, moves_seen, move_failures;
    double mark;                        /* thread 0: when the last epoch ended */
    long rss_peak_kb;
};

/* Bind the calling thread to one CPU; true when sched_getcpu() then reports that CPU. */
static bool migrate_move(struct migrate *M, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        atomic_fetch_add(&M->move_failures, 1);
        return false;
    }
    atomic_fetch_add(&M->moves, 1);
    return sched_getcpu() == cpu;
}

static void migrate_record(struct hb_run *r, struct migrate *M, long long k)
{
    struct hoardlab_stats s;
    double now = hb_now(), dt = now - M->mark;
    long rss = hb_rss_kb();
    M->mark = now;
    if (rss > M->rss_peak_kb) M->rss_peak_kb = rss;
    hb_json_obj(r->extra, NULL);
    hb_json_int(r->extra, "epoch", k);
    hb_json_real(r->extra, "seconds", now - r->t0);
    hb_json_real(r->extra, "throughput",
                 dt > 0 ? (double)(M->every * r->threads) / dt : 0.0);
    hb_json_uint(r->extra, "live_bytes", atomic_load(&M->live_bytes));
    if (hb_hoardlab_stats(&s)) hb_json_uint(r->extra, "held_bytes", s.held_bytes);
    else hb_json_null(r->extra, "held_bytes");
    hb_json_int(r->extra, "rss_kb", rss);
    hb_json_end(r->extra, '}');
}

static void migrate_thread(struct hb_run *r, int i, void *arg)
{
    struct migrate *M = arg;
    uint64_t salt = hb_mix(r->seed ^ 0x3196a7e ^ (uint64_t)i);
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i + 2700);
    if (M->ncpu > 1 && migrate_move(M, M->cpu[i % M->ncpu])) atomic_fetch_add(&M->moves_seen, 1);
    struct hb_block *set = hb_live_set(&g, M->live, M->lo, M->hi, salt);
    unsigned long long mine = 0;
    for (long long k = 0; k < M->live; k++) mine += set[k].n;
    atomic_fetch_add(&M->live_bytes, mine);
    pthread_barrier_wait(&M->step);
    if (i == 0) {
        hb_begin(r);
        M->mark = r->t0;
    }
    pthread_barrier_wait(&M->step);
    for (long long k = 0; k < M->epochs; k++) {
        for (long long s = 0; s < M->every; s++) {
            struct hb_block *b = &set[hb_rand(&g) % (uint64_t)M->live];
            hb_release(b->p, b->n, salt);
            size_t n = (size_t)hb_range(&g, M->lo, M->hi);
            atomic_fetch_add_explicit(&M->live_bytes, n - b->n, memory_order_relaxed);
            b->n = n;
            b->p = hb_alloc(n, salt);
        }
        pthread_barrier_wait(&M->step);
        if (i == 0) migrate_record(r, M, k);
        pthread_barrier_wait(&M->step);
        if (M->ncpu > 1 && migrate_move(M, M->cpu[(i + k + 1) % M->ncpu]))
            atomic_fetch_add(&M->moves_seen, 1);
    }
    atomic_fetch_add(&r->ops, (unsigned long long)(M->epochs * M->every));
    pthread_barrier_wait(&M->step);
    if (i == 0) hb_end(r);
    pthread_barrier_wait(&M->step);
    for (long long k = 0; k < M->live; k++) hb_release(set[k].p, set[k].n, salt);
    free(set);
}

int hb_migrate(struct hb_run *r)
{
    struct migrate M = { .epochs = hb_int(r, "epochs"), .every = hb_int(r, "every"),
                         .live = hb_int(r, "live"), .lo = (uint64_t)hb_int(r, "min_size"),
                         .hi = (uint64_t)hb_int(r, "max_size") };
    if (M.every < 1 || M.live < 1 || hb_int(r, "min_size") < 1 || M.hi < M.lo)
        hb_usage("migrate needs every >= 1, live >= 1, 1 <= min_size <= max_size");
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed)) hb_fail("sched_getaffinity: %s",
                                                                strerror(errno));
    if (!(M.cpu = calloc(CPU_SETSIZE, sizeof *M.cpu))) hb_fail("out of memory");
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) M.cpu[M.ncpu++] = c;
    pthread_barrier_init(&M.step, NULL, (unsigned)r->threads);
    hb_json_int(r->extra, "cpus", M.ncpu);
    hb_json_arr(r->extra, "epochs");
    hb_parallel(r, r->threads, migrate_thread, &M);
    hb_json_end(r->extra, ']');
    hb_json_uint(r->extra, "moves", atomic_load(&M.moves));
    hb_json_uint(r->extra, "moves_seen", atomic_load(&M.moves_seen));
    hb_json_uint(r->extra, "move_failures", atomic_load(&M.move_failures));
    hb_json_int(r->extra, "rss_kb_peak", M.rss_peak_kb);
    if (r->loaded) hb_json_uint(r->extra, "a_bytes", r->end.held_bytes_peak);
    else hb_json_null(r->extra, "a_bytes");
    pthread_barrier_destroy(&M.step);
    free(M.cpu);
    return 0;
}
