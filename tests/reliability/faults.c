/* faults.c — the failure of every OS call, one at a time (issue 29), as SQLite tests the
 * failure of every allocation it makes.
 *
 * Linked with a core built with fault injection and the invariant checks (-DHL_FAULTS
 * -DHL_CHECKS, tests/reliability/meson.build), calling hl_malloc & co. (rel.h, REL_DIRECT).
 *
 *   rel_faults --sweep STRATEGY [--max N] [--seeds R] [--rate P]
 *       for each variant of STRATEGY's knobs (remote_free, tlab, cache, global_shards, large_reuse,
 *       release_empty where they act): run the workload once to count its OS calls C, then once
 *       per call number 1..C with HOARD_FAULT_AT=N (a seeded sample of N numbers when C > N,
 *       the first and last included), then R runs with HOARD_FAULT_RATE=P (0.05) and seeds 1..R (4).
 *       Prints one line per variant with the calls it failed; exit 1 if any run failed.
 *   rel_faults --regress STRATEGY
 *       the failing inputs of the bugs the sweep found, each in a fresh process (below).
 *   rel_faults
 *       one run of the workload under the HOARD_* environment (what --sweep starts).
 *
 * The workload (one thread allocating, a second freeing what it is handed, in lockstep so the
 * order of OS calls repeats): malloc, calloc, realloc (growing, shrinking, small <-> large),
 * memalign, aligned_alloc, free, and large blocks, over a model of every live block's size,
 * usable size and stamp. After each operation it asserts:
 *   - a NULL result has errno ENOMEM and an injected failure happened during the call;
 *   - a failed realloc left the old block, its usable size and its contents as they were;
 *   - no live block's contents changed (all checked after every operation a fault hit, and
 *     every 64 operations);
 *   - U is exact: in_use equals the sum of the live blocks' usable sizes (stats_batch = 0);
 *   - the invariants the checks build verifies after every operation hold (they abort);
 * then turns faults off, allocates, verifies and frees again (recovery), frees everything and
 * asserts in_use is 0. */
#include <pthread.h>
#include <sched.h>
#include <sys/personality.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include "rel.h"

#define SLOTS 160
#define STEPS 1500
#define BATCH 24                        /* blocks handed to the freeing thread at a time */

/* counted: what the block added to in_use (stats), its usable size except for an aligned
 * block, which counts the whole block its alignment was cut from. */
struct block { char *p; size_t size, usable, counted; uint64_t seed; bool aligned; };
static struct block live[SLOTS];
static struct block burst[2000];        /* many small blocks at once, then freed: empty
                                         * superblocks go back (release_empty: madvise) */
static int nburst;
static int nulls;                       /* operations that returned NULL (ENOMEM) */

/* ---- the freeing thread -------------------------------------------------------------------- */

static struct block handed[BATCH];
static int nhanded;
static sem_t go, done;
static bool stopping;

static void check_block(const struct block *b, const char *when)
{
    long bad = rel_damaged(b->p, b->size, b->seed);
    REL_CHECK(bad < 0, "%s: block %p (%zu bytes) damaged at byte %ld", when, (void *)b->p,
              b->size, bad);
    REL_CHECK(r_usable(b->p) == b->usable, "%s: block %p usable size %zu, was %zu", when,
              (void *)b->p, r_usable(b->p), b->usable);
}

static void *freeing_thread(void *arg)
{
    (void)arg;
    for (;;) {
        sem_wait(&go);
        if (stopping) return NULL;
        for (int i = 0; i < nhanded; i++) {
            check_block(&handed[i], "handed over");
            r_free(handed[i].p);
        }
        nhanded = 0;
        sem_post(&done);
    }
}

static void hand_over(void)
{
    if (!nhanded) return;
    sem_post(&go);
    sem_wait(&done);
}

/* ---- checks -------------------------------------------------------------------------------- */

static uint64_t in_use_now(void)
{
    struct hoardlab_stats s;
    hoardlab_stats(&s);
    return s.in_use;
}

static void check_all(const char *when)
{
    size_t sum = 0;
    for (int i = 0; i < SLOTS; i++)
        if (live[i].p) {
            check_block(&live[i], when);
            sum += live[i].counted;
        }
    for (int i = 0; i < nhanded; i++) sum += handed[i].counted;
    for (int i = 0; i < nburst; i++) {
        check_block(&burst[i], when);
        sum += burst[i].counted;
    }
    uint64_t in_use = in_use_now();
    REL_CHECK(in_use == sum, "%s: in_use %llu, live blocks count %zu", when,
              (unsigned long long)in_use, sum);
}

/* A call that may fail: a NULL result must be ENOMEM from a fault injected during it. */
static bool failed_well(const void *p, uint64_t faults_before, const char *what, size_t size)
{
    if (p) return false;
    REL_CHECK(errno == ENOMEM, "%s(%zu) returned NULL with errno %d, not ENOMEM", what, size,
              errno);
    REL_CHECK(hl_fault_failed() > faults_before, "%s(%zu) returned NULL with no OS call failed",
              what, size);
    nulls++;
    return true;
}

static size_t pick_size(uint64_t *rng)
{
    uint64_t r = rel_rand(rng);
    switch (r % 16) {
    case 0: return 8192 + (r >> 8) % (400u << 10);    /* large: its own mapping */
    case 1: return 2048 + (r >> 8) % 8192;            /* around S/2 */
    default: return 1 + (r >> 8) % 600;
    }
}

/* Slot k holds p now; in_use rose by counted since before the call (the other thread is idle). */
static void place(int k, char *p, size_t size, uint64_t seed, bool zeroed, bool aligned,
                  size_t counted)
{
    if (zeroed)
        for (size_t i = 0; i < size; i++)
            REL_CHECK(!p[i], "calloc(%zu): byte %zu is %d, not 0", size, i, p[i]);
    rel_stamp(p, size, seed);
    live[k] = (struct block){ p, size, r_usable(p), counted, seed, aligned };
    REL_CHECK(live[k].usable >= size, "usable size %zu below the request %zu", live[k].usable,
              size);
    REL_CHECK(aligned ? counted >= live[k].usable : counted == live[k].usable,
              "a block of usable size %zu added %zu to in_use", live[k].usable, counted);
}

static void burst_of_blocks(uint64_t seed)
{
    for (nburst = 0; nburst < (int)(sizeof burst / sizeof burst[0]);) {
        uint64_t before = hl_fault_failed(), u = in_use_now();
        size_t size = 16 + (size_t)(nburst % 7) * 24;
        errno = 0;
        char *p = r_malloc(size);
        if (failed_well(p, before, "malloc", size)) {
            check_all("after a failed malloc in a burst");
            continue;                                /* the next call may succeed */
        }
        uint64_t stamp = seed + (uint64_t)nburst;
        rel_stamp(p, size, stamp);
        burst[nburst++] = (struct block){ p, size, r_usable(p), in_use_now() - u, stamp, false };
        if (hl_fault_failed() > before) check_all("after an operation a fault hit");
    }
    check_all("after a burst");
    while (nburst) {
        uint64_t before = hl_fault_failed();
        check_block(&burst[--nburst], "before free");
        r_free(burst[nburst].p);
        if (hl_fault_failed() > before) check_all("after a free a fault hit");
    }
}

static void step(int k, uint64_t *rng, uint64_t seed)
{
    uint64_t before = hl_fault_failed(), r = rel_rand(rng), u = in_use_now();
    struct block *b = &live[k];
    errno = 0;
    if (!b->p) {
        size_t size = pick_size(rng);
        char *p;
        switch (r % 5) {
        case 0: case 1:
            p = r_malloc(size);
            if (!failed_well(p, before, "malloc", size)) place(k, p, size, seed, false, false, in_use_now() - u);
            break;
        case 2:
            p = r_calloc(1, size);
            if (!failed_well(p, before, "calloc", size)) place(k, p, size, seed, true, false, in_use_now() - u);
            break;
        case 3: {
            size_t align = (size_t)32 << (r >> 8) % 8;       /* 32 .. 4096 */
            p = r_memalign(align, size);
            if (failed_well(p, before, "memalign", size)) break;
            REL_CHECK(((uintptr_t)p & (align - 1)) == 0, "memalign(%zu) gave %p", align, (void *)p);
            place(k, p, size, seed, false, true, in_use_now() - u);
            break;
        }
        default: {
            size_t align = (size_t)64 << (r >> 8) % 4;
            size = hl_align_up(size, align);
            p = r_aligned_alloc(align, size);
            if (failed_well(p, before, "aligned_alloc", size)) break;
            REL_CHECK(((uintptr_t)p & (align - 1)) == 0, "aligned_alloc(%zu) gave %p", align,
                      (void *)p);
            place(k, p, size, seed, false, true, in_use_now() - u);
        }
        }
    } else if (r % 4 == 0) {
        check_block(b, "before free");
        r_free(b->p);
        b->p = NULL;
    } else if (r % 4 == 1 && nhanded < BATCH) {
        handed[nhanded++] = *b;                 /* freed by the other thread */
        b->p = NULL;
    } else {
        size_t size = r % 8 == 2 ? b->size / 2 + 1 : pick_size(rng);
        struct block old = *b;
        char *p = r_realloc(b->p, size);
        if (failed_well(p, before, "realloc", size)) {
            check_block(&old, "after a failed realloc");   /* the old block, untouched */
            return;
        }
        long bad = rel_damaged(p, size < old.size ? size : old.size, old.seed);
        REL_CHECK(bad < 0, "realloc(%zu -> %zu) lost byte %ld", old.size, size, bad);
        place(k, p, size, seed, false, old.aligned && p == old.p,
              old.counted + (in_use_now() - u));
    }
    if (hl_fault_failed() > before) check_all("after an operation a fault hit");
}

static int run_workload(void)
{
    rel_require_hoardlab();
    printf("init=%llu\n", (unsigned long long)hl_fault_calls());   /* the calls start-up made */
    fflush(stdout);
    /* Both threads on the first CPU, after start-up has counted the processors: heap_select =
     * cpu (hoard2026) then picks the same heaps each run, and the calls come in the same order
     * (the sweep also turns address randomisation off: thread ids and mappings repeat). */
    cpu_set_t all, one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof all, &all) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &all)) { CPU_SET(c, &one); break; }
    sched_setaffinity(0, sizeof one, &one);
    alarm(60);                                  /* a hang fails instead of stalling the sweep */
    const char *b = getenv("HOARD_STATS_BATCH");
    REL_CHECK(b && !strcmp(b, "0"), "run with HOARD_STATS_BATCH=0 (U exact)");
    sem_init(&go, 0, 0);
    sem_init(&done, 0, 0);
    pthread_t t;
    REL_CHECK(pthread_create(&t, NULL, freeing_thread, NULL) == 0, "pthread_create");

    uint64_t rng = 0x5eed0f0a17ull;
    for (int i = 0; i < STEPS; i++) {
        step((int)(rel_rand(&rng) % SLOTS), &rng, (uint64_t)i + 1);
        if (nhanded == BATCH) hand_over();
        if (i % 64 == 63) check_all("periodic");
        if (i % 500 == 250) burst_of_blocks((uint64_t)i << 20);
    }
    hand_over();
    check_all("after the fault window");
    uint64_t calls = hl_fault_calls(), failed = hl_fault_failed(), kc[HL_CALL_KINDS], kf[HL_CALL_KINDS];
    hl_fault_counts(kc, kf);

    /* Recovery: with every call succeeding again, the allocator serves and keeps blocks. */
    hl_fault_set(0, 0.0, 0, false);
    for (int i = 0; i < SLOTS; i++) {
        uint64_t before = hl_fault_failed();
        if (!live[i].p) step(i, &rng, 100000u + (uint64_t)i);
        REL_CHECK(hl_fault_failed() == before, "a fault after faults were turned off");
    }
    for (int i = 0; i < SLOTS; i++)
        REL_CHECK(live[i].p, "slot %d: an allocation failed once calls succeed again", i);
    check_all("recovered");
    for (int i = 0; i < SLOTS; i++) {
        if (i % 2) { handed[nhanded++] = live[i]; if (nhanded == BATCH) hand_over(); }
        else { check_block(&live[i], "at the end"); r_free(live[i].p); }
        live[i].p = NULL;
    }
    hand_over();
    check_all("all freed");
    stopping = true;
    sem_post(&go);
    pthread_join(t, NULL);
    printf("calls=%llu failed=%llu nulls=%d kinds", (unsigned long long)calls,
           (unsigned long long)failed, nulls);
    for (int k = 0; k < HL_CALL_KINDS; k++)
        printf(" %llu/%llu", (unsigned long long)kc[k], (unsigned long long)kf[k]);
    printf("\n");
    return 0;
}

/* ---- the sweep ----------------------------------------------------------------------------- */

struct result {
    int status;
    unsigned long long init, calls, failed, kc[HL_CALL_KINDS], kf[HL_CALL_KINDS];
    int nulls;
    char out[4096];
};
static const char *const kind_names[HL_CALL_KINDS] = {
    "mmap", "munmap", "mremap", "madvise", "arena growth" };

/* Runs this program (one workload, or argv) with extra HOARD_* settings added to the
 * environment. */
static void run_child_argv(char *const extra[], char *argv[], struct result *res)
{
    extern char **environ;
    char *env[512];
    int n = 0;
    for (char **e = environ; *e && n < 480; e++)
        if (strncmp(*e, "HOARD_", 6)) env[n++] = *e;
    for (int i = 0; extra[i]; i++) env[n++] = extra[i];
    env[n] = NULL;
    int fd[2];
    REL_CHECK(pipe(fd) == 0, "pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    REL_CHECK(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env) == 0, "posix_spawn");
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd[0], res->out + len, sizeof res->out - 1 - len)) > 0) len += (size_t)got;
    res->out[len] = 0;
    close(fd[0]);
    REL_CHECK(waitpid(pid, &res->status, 0) == pid, "waitpid");
    res->init = res->calls = res->failed = 0;
    res->nulls = 0;
    const char *line = strstr(res->out, "init=");
    if (line) sscanf(line, "init=%llu", &res->init);
    line = strstr(res->out, "calls=");
    if (line) sscanf(line, "calls=%llu failed=%llu nulls=%d", &res->calls, &res->failed, &res->nulls);
    line = line ? strstr(line, "kinds") : NULL;
    for (int k = 0; k < HL_CALL_KINDS; k++) {
        res->kc[k] = res->kf[k] = 0;
        int used = 0;
        if (line && sscanf(line += strcspn(line, " "), " %llu/%llu%n", &res->kc[k], &res->kf[k], &used) == 2)
            line += used;
        else line = NULL;
    }
}

static void run_child(char *const extra[], struct result *res)
{
    char *argv[] = { "rel_faults", NULL };
    run_child_argv(extra, argv, res);
}

static bool passed(const struct result *r) { return WIFEXITED(r->status) && !WEXITSTATUS(r->status); }

/* A call start-up makes (hl_init: metadata, the arena's reservation) may stop the program
 * instead: exit status 2 and one line naming what ran out, as bad configuration does. */
static bool stopped_at_start(const struct result *r)
{
    return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 2 &&
           !strncmp(r->out, "hoardlab: ", 10) && !strchr(r->out, '\n')[1];
}

static void report_failure(char *const extra[], const struct result *r)
{
    fprintf(stderr, "FAILED:");
    for (int i = 0; extra[i]; i++) fprintf(stderr, " %s", extra[i]);
    fprintf(stderr, " build/tests/reliability/rel_faults\n  (%s %d)\n%s\n",
            WIFSIGNALED(r->status) ? "signal" : "exit status",
            WIFSIGNALED(r->status) ? WTERMSIG(r->status) : WEXITSTATUS(r->status), r->out);
}

/* The knob settings a strategy is swept under: each a NULL-terminated list of HOARD_ lines. */
struct variant { const char *strategies, *knobs[4]; };
static const struct variant variants[] = {
    { "*", { NULL } },                                      /* large_reuse = follow */
    { "*", { "HOARD_LARGE_REUSE=unmap" } },
    { "*", { "HOARD_LARGE_REUSE=fixed" } },
    { "ownership hoard hoard2026", { "HOARD_REMOTE_FREE=list" } },
    { "ownership hoard hoard2026", { "HOARD_REMOTE_FREE=queue" } },
    { "ownership hoard hoard2026", { "HOARD_REMOTE_FREE=batch" } },
    { "hoard", { "HOARD_TLAB=on" } },
    { "hoard", { "HOARD_GLOBAL_SHARDS=8" } },
    { "hoard", { "HOARD_TLAB=on", "HOARD_REMOTE_FREE=queue" } },
    { "ownership hoard hoard2026", { "HOARD_CACHE=cpu" } },
    { "ownership hoard hoard2026 lockfree", { "HOARD_RELEASE_EMPTY=on" } },
    /* issue 49: free pages inside used superblocks given back (a hole's blocks off the list,
     * taken back on slow paths); issue 50: the arena advised, filler's regions counted */
    { "hoard2026", { "HOARD_PURGE=dontneed", "HOARD_RETAIN=0", "HOARD_PURGE_HOLES=on" } },
    { "ownership", { "HOARD_PURGE_HOLES=on" } },
    { "hoard2026", { "HOARD_HUGEPAGES=madvise" } },
    { "hoard2026", { "HOARD_HUGEPAGES=filler" } },
};

static bool applies(const char *list, const char *strategy)
{
    if (!strcmp(list, "*")) return true;
    size_t n = strlen(strategy);
    for (const char *s = strstr(list, strategy); s; s = strstr(s + 1, strategy))
        if ((s == list || s[-1] == ' ') && (s[n] == ' ' || !s[n])) return true;
    return false;
}

static int sweep(const char *strategy, unsigned long long max, int seeds, const char *rate_p)
{
    personality(ADDR_NO_RANDOMIZE);             /* inherited: the children's runs repeat */
    static char strat[64], at[64], rate[64], seed[64];
    snprintf(strat, sizeof strat, "HOARD_STRATEGY=%s", strategy);
    int bad = 0;
    unsigned long long total = 0;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        if (!applies(variants[v].strategies, strategy)) continue;
        char *extra[8] = { strat, "HOARD_STATS_BATCH=0" };
        int n = 2;
        for (int i = 0; variants[v].knobs[i]; i++) extra[n++] = (char *)variants[v].knobs[i];
        char name[128] = "";
        for (int i = 2; i < n; i++) { strcat(name, " "); strcat(name, extra[i] + 6); }
        extra[n + 1] = NULL;

        struct result r;
        extra[n] = NULL;
        run_child(extra, &r);
        if (!passed(&r) || !r.calls) { report_failure(extra, &r); bad++; continue; }
        unsigned long long calls = r.calls, init = r.init, runs = calls < max ? calls : max;
        unsigned long long injected = 0, returned_null = 0, failures = 0, rate_failed = 0;
        unsigned long long at_start = 0, kc[HL_CALL_KINDS], kf[HL_CALL_KINDS] = { 0 };
        memcpy(kc, r.kc, sizeof kc);
        uint64_t pick = 0x9e3779b97f4a7c15ull ^ calls;
        extra[n] = at;
        for (unsigned long long i = 0; i < runs; i++) {
            /* All of them, or the first, the last and a seeded sample between. */
            unsigned long long at_n = runs == calls ? i + 1 : i == 0 ? 1 : i == 1 ? calls
                                    : 2 + rel_rand(&pick) % (calls - 2);
            snprintf(at, sizeof at, "HOARD_FAULT_AT=%llu", at_n);
            run_child(extra, &r);
            if (at_n <= init && stopped_at_start(&r)) { injected++; at_start++; continue; }
            if (!passed(&r)) { report_failure(extra, &r); failures++; continue; }
            injected += r.failed;
            for (int k = 0; k < HL_CALL_KINDS; k++) kf[k] += r.kf[k];
            returned_null += r.nulls > 0;
        }
        extra[n] = rate;
        extra[n + 1] = seed;
        extra[n + 2] = NULL;
        snprintf(rate, sizeof rate, "HOARD_FAULT_RATE=%s", rate_p);
        for (int s = 1; s <= seeds; s++) {
            snprintf(seed, sizeof seed, "HOARD_FAULT_SEED=%d", s);
            run_child(extra, &r);
            if (!r.init && stopped_at_start(&r)) { at_start++; continue; }
            if (!passed(&r)) { report_failure(extra, &r); failures++; continue; }
            rate_failed += r.failed;
        }
        printf("faults: %s%s: %llu OS calls (%llu at start-up); failed one at a time: %llu of "
               "%llu%s (%llu runs saw NULL/ENOMEM, %llu stopped at start-up, the rest completed "
               "on memory held); rate %s x %d seeds: %llu failed; %s\n", strategy,
               name[0] ? name : " (defaults)", calls, init, injected, runs,
               runs < calls ? " (sampled)" : "", returned_null, at_start, rate_p, seeds, rate_failed,
               failures ? "FAILED" : "ok");
        printf("        by kind, calls of the counting run / runs that failed one:");
        for (int k = 0; k < HL_CALL_KINDS; k++)
            printf("%s %s %llu/%llu", k ? "," : "", kind_names[k], kc[k], kf[k]);
        printf("\n");
        fflush(stdout);
        total += injected + rate_failed;
        bad += failures > 0;
    }
    printf("faults: %s: %llu OS calls failed in all; %s\n", strategy, total, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

/* ---- regressions: each bug the sweep found, as the smallest input that showed it ------------ */

/* The page map (pagemap.c) maps a leaf for each 1 GiB of address space a large object first
 * lands in; when that mmap failed, the process died ("out of memory for the page map")
 * instead of malloc returning NULL, and realloc could not fail cleanly after mremap had moved
 * the block. In a fresh process every leaf is new: fail call I of the first large malloc, or
 * of a realloc to 1.5 GiB (a range over two leaves, moved by mremap), then recover. */
static int regress_pagemap_child(const char *kind, int i)
{
    rel_require_hoardlab();
    const size_t small = 1 << 20, big = (size_t)3 << 29;   /* small: large in every strategy */
    char *p = NULL;
    if (!strcmp(kind, "realloc")) {
        p = r_malloc(small);
        REL_CHECK(p, "malloc(%zu) with no fault failed", small);
        rel_stamp(p, small, 7);
    }
    uint64_t before = hl_fault_failed();
    hl_fault_set((long)(hl_fault_calls() + (uint64_t)i), 0.0, 0, false);
    errno = 0;
    char *q = p ? r_realloc(p, big) : r_malloc(small);
    size_t size = p ? big : small;
    if (!failed_well(q, before, p ? "realloc" : "malloc", size)) {
        REL_CHECK(!p || rel_damaged(q, small, 7) < 0, "realloc to %zu lost the contents", big);
        q[size - 1] = 1;
        r_free(q);
    } else if (p) {
        REL_CHECK(rel_damaged(p, small, 7) < 0, "a failed realloc damaged the block");
        r_free(p);
    }
    hl_fault_set(0, 0.0, 0, false);
    q = r_malloc(big);
    REL_CHECK(q, "malloc(%zu) failed once calls succeed again", big);
    q[0] = q[big - 1] = 1;
    r_free(q);
    printf("calls=%llu failed=%llu nulls=%d\n", (unsigned long long)hl_fault_calls(),
           (unsigned long long)hl_fault_failed(), nulls);
    return 0;
}

static int regress(const char *strategy)
{
    personality(ADDR_NO_RANDOMIZE);
    static char strat[64];
    snprintf(strat, sizeof strat, "HOARD_STRATEGY=%s", strategy);
    char *extra[] = { strat, "HOARD_STATS_BATCH=0", NULL };
    int bad = 0, failed = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 1; i <= 8; i++) {
            char n[16];
            snprintf(n, sizeof n, "%d", i);
            char *argv[] = { "rel_faults", "--regress-pagemap", k ? "realloc" : "malloc", n, NULL };
            struct result r;
            run_child_argv(extra, argv, &r);
            if (!passed(&r)) {
                fprintf(stderr, "FAILED: %s rel_faults --regress-pagemap %s %d\n%s\n", strat,
                        argv[2], i, r.out);
                bad++;
            }
            failed += (int)r.failed;
        }
    printf("faults: regression pagemap-leaf: %s: %d runs failed an OS call; %s\n", strategy,
           failed, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--regress")) return regress(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "--regress-pagemap"))
        return regress_pagemap_child(argv[2], atoi(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "--sweep")) {
        unsigned long long max = 400;
        int seeds = 4;
        const char *rate = "0.05";
        for (int i = 3; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "--max")) max = strtoull(argv[i + 1], NULL, 10);
            else if (!strcmp(argv[i], "--seeds")) seeds = atoi(argv[i + 1]);
            else if (!strcmp(argv[i], "--rate")) rate = argv[i + 1];
        }
        REL_CHECK(max >= 2, "--max must be at least 2");
        return sweep(argv[2], max, seeds, rate);
    }
    return run_workload();
}
