/* churn.c — thread churn: many short-lived threads, memory bounded at the end.
 *
 * churn [--threads N] [--wave W]
 *
 * N threads (20,000 by default) in waves of W alive at once. Each allocates blocks of mixed
 * sizes, frees most of them, frees blocks an earlier thread of its wave left behind (their
 * owner may have exited), and hands a few to the main thread, which verifies and frees them
 * after the thread is gone. A dying thread's heap must be reused, not leaked: memory held from
 * the OS (A) and the resident set after all N threads stay within twice their value after the
 * first tenth, plus 64 MiB (times RELIABILITY_SCALE, which also multiplies N). */
#include <pthread.h>
#include <stdatomic.h>
#include "rel.h"

#define HANDED 3
#define LEFT   4

struct job { unsigned id; void *handed[HANDED]; size_t hlen[HANDED]; };

static _Atomic(void *) left_behind[64][LEFT];     /* per wave slot: blocks for a later thread */
static _Atomic size_t left_len[64][LEFT];

static void *short_life(void *arg)
{
    struct job *j = arg;
    uint64_t rng = j->id * 2654435761u + 1;
    enum { N = 40 };
    void *p[N];
    size_t len[N];
    for (unsigned i = 0; i < N; i++) {
        uint64_t r = rel_rand(&rng);
        len[i] = i == 0 && j->id % 16 == 0 ? 200000 : 1 + r % (i < 30 ? 256 : 4000);
        p[i] = i % 5 == 4 ? r_calloc(1, len[i]) : r_malloc(len[i]);
        if (!p[i]) rel_fail("thread %u: malloc(%zu) failed", j->id, len[i]);
        rel_stamp(p[i], len[i], j->id * 64 + i);
    }
    for (unsigned i = 0; i < N; i++)
        if (rel_damaged(p[i], len[i], j->id * 64 + i) >= 0)
            rel_fail("thread %u: block %u damaged", j->id, i);
    for (unsigned k = 0; k < HANDED; k++) {          /* to the main thread */
        j->handed[k] = p[k];
        j->hlen[k] = len[k];
    }
    unsigned slot = j->id % 64;
    for (unsigned k = 0; k < LEFT; k++) {            /* swap with what a predecessor left */
        unsigned i = HANDED + k;
        size_t n = len[i];
        void *old = atomic_exchange(&left_behind[slot][k], NULL);
        size_t old_n = atomic_load(&left_len[slot][k]);
        if (old) {
            if (rel_damaged(old, old_n, 7) >= 0) rel_fail("left-behind block damaged");
            r_free(old);                             /* its thread has exited */
        }
        rel_stamp(p[i], n, 7);
        atomic_store(&left_len[slot][k], n);
        atomic_store(&left_behind[slot][k], p[i]);
    }
    for (unsigned i = HANDED + LEFT; i < N; i++) r_free(p[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned total = 20000, wave = 8;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) total = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wave")) wave = (unsigned)atoi(argv[i + 1]);
        else { fprintf(stderr, "usage: churn [--threads N] [--wave W]\n"); return 2; }
    }
    if (wave < 1 || wave > 64) wave = 8;
    total = (unsigned)(total * rel_scale());
    const char *strategy = rel_require_hoardlab();
    struct job jobs[64];
    pthread_t tid[64];
    uint64_t a_warm = 0, rss_warm = 0;
    for (unsigned done = 0; done < total;) {
        unsigned n = total - done < wave ? total - done : wave;
        for (unsigned t = 0; t < n; t++) {
            jobs[t] = (struct job){ .id = done + t };
            int e = pthread_create(&tid[t], NULL, short_life, &jobs[t]);
            if (e) rel_fail("pthread_create after %u threads: %s", done + t, strerror(e));
        }
        for (unsigned t = 0; t < n; t++) {
            pthread_join(tid[t], NULL);
            for (unsigned k = 0; k < HANDED; k++) {  /* freed after their thread exited */
                if (rel_damaged(jobs[t].handed[k], jobs[t].hlen[k], jobs[t].id * 64 + k) >= 0)
                    rel_fail("block handed by thread %u damaged", jobs[t].id);
                r_free(jobs[t].handed[k]);
            }
        }
        done += n;
        if (!a_warm && done >= total / 10) {
            a_warm = rel_os_bytes();
            rss_warm = rel_rss();
        }
    }
    for (unsigned s = 0; s < 64; s++)
        for (unsigned k = 0; k < LEFT; k++) r_free(atomic_load(&left_behind[s][k]));
    uint64_t a_end = rel_os_bytes(), rss_end = rel_rss();
    /* Slack for what a strategy keeps by design: `private` parks blocks freed by the main
     * thread in the main thread's heap (pure private heaps' producer-consumer blowup, about
     * the handed blocks' size per thread); a leaked heap per thread costs far more. */
    const uint64_t slack = (uint64_t)((64u << 20) * rel_scale());
    printf("churn under %s: %u threads; A %.1f MiB after %u, %.1f MiB at the end; "
           "RSS %.1f -> %.1f MiB\n", strategy, total, a_warm / 1048576.0, total / 10,
           a_end / 1048576.0, rss_warm / 1048576.0, rss_end / 1048576.0);
    if (a_end > 2 * a_warm + slack)
        rel_fail("memory from the OS grew with the number of threads: %.1f -> %.1f MiB",
                 a_warm / 1048576.0, a_end / 1048576.0);
    if (rss_end > 2 * rss_warm + slack)
        rel_fail("resident memory grew with the number of threads: %.1f -> %.1f MiB",
                 rss_warm / 1048576.0, rss_end / 1048576.0);
    printf("ok: churn under %s\n", strategy);
    return 0;
}
