/* fork.c — fork while other threads allocate.
 *
 * fork [--forks N] [--threads T]
 *
 * T threads allocate, stamp, verify and free without pause (some blocks cross threads), while
 * the main thread forks N times. Each child frees a block its parent handed it across the
 * fork, allocates in every size regime, starts a thread that allocates and hands a block back,
 * and exits through exit() (atexit handlers, library destructors); every tenth child forks a
 * grandchild that does the same. A child that hangs (20 s), crashes or finds a damaged block
 * fails the test. RELIABILITY_SCALE multiplies N. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include "rel.h"

static atomic_bool stop;
static _Atomic(void *) exchange[64];   /* blocks passed between the background threads */

static void *background(void *arg)
{
    uint64_t rng = 99 + (uintptr_t)arg, seed = (uint64_t)(uintptr_t)arg << 40;
    enum { N = 128 };
    void *p[N] = { 0 };
    size_t len[N];
    uint64_t sd[N];
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        unsigned i = (unsigned)(rel_rand(&rng) % N);
        if (p[i]) {
            long bad = rel_damaged(p[i], len[i], sd[i]);
            if (bad >= 0) rel_fail("parent thread: block %p damaged at %ld", p[i], bad);
            if (i % 4 == 0) {
                /* hand it on: whoever picks it from the exchange frees it */
                void *old = atomic_exchange(&exchange[i % 64], p[i]);
                r_free(old);
            } else {
                r_free(p[i]);
            }
            p[i] = NULL;
        } else {
            uint64_t r = rel_rand(&rng);
            len[i] = r % 100 < 95 ? 1 + r % 2000 : 1 + r % 300000;
            p[i] = (r >> 32) % 5 == 0 ? r_memalign(64, len[i]) : r_malloc(len[i]);
            if (!p[i]) rel_fail("parent thread: allocation failed");
            sd[i] = ++seed;
            rel_stamp(p[i], len[i], sd[i]);
        }
    }
    for (unsigned i = 0; i < N; i++) r_free(p[i]);
    return NULL;
}

static void *child_thread(void *arg)
{
    void **out = arg;
    void *keep[100];
    for (unsigned i = 0; i < 100; i++) {
        keep[i] = r_malloc(16 + i * 40);
        if (!keep[i]) rel_fail("child thread: malloc failed");
        rel_stamp(keep[i], 16 + i * 40, i);
    }
    for (unsigned i = 0; i < 100; i++) {
        if (rel_damaged(keep[i], 16 + i * 40, i) >= 0) rel_fail("child thread: block damaged");
        if (i) r_free(keep[i]);
    }
    *out = keep[0];                                  /* handed to the child's main thread */
    return NULL;
}

static int exit_status;
static void child_atexit(void)
{
    void *p = r_malloc(333);                         /* the allocator still works at exit */
    if (!p) _exit(3);
    memset(p, 1, 333);
    r_free(p);
}

static void child_work(void *inherited, size_t n, uint64_t seed, int depth);

static void on_alarm(int sig) { (void)sig; }

/* Wait for a child; 20 s without it exiting is a hang: kill it and fail. */
static void wait_for(pid_t pid, const char *who)
{
    int status;
    struct sigaction sa = { .sa_handler = on_alarm };      /* no SA_RESTART: waitpid -> EINTR */
    sigaction(SIGALRM, &sa, NULL);
    alarm(20);
    pid_t r = waitpid(pid, &status, 0);
    alarm(0);
    if (r < 0 && errno == EINTR) {
        if (getenv("RELIABILITY_GDB")) {             /* show where it hangs, then kill it */
            char cmd[128];
            snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' >&2", (int)pid);
            if (system(cmd)) { }
        }
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        rel_fail("%s %d hung (killed after 20 s)", who, (int)pid);
    }
    if (r < 0) rel_fail("waitpid: %s", strerror(errno));
    if (WIFSIGNALED(status)) rel_fail("%s %d died of signal %d", who, (int)pid, WTERMSIG(status));
    if (WEXITSTATUS(status)) rel_fail("%s %d exited with %d", who, (int)pid, WEXITSTATUS(status));
}

static void child_work(void *inherited, size_t n, uint64_t seed, int depth)
{
    if (rel_damaged(inherited, n, seed) >= 0) rel_fail("child: inherited block damaged");
    r_free(inherited);
    static const size_t sizes[] = { 1, 24, 100, 1000, 5000, 40000, 300000, 3000000 };
    void *p[8];
    for (unsigned i = 0; i < 8; i++) {
        p[i] = i % 2 ? r_malloc(sizes[i]) : r_aligned_alloc(256, sizes[i]);
        if (!p[i]) rel_fail("child: allocation of %zu failed", sizes[i]);
        rel_stamp(p[i], sizes[i], i);
    }
    pthread_t t;
    void *from_thread = NULL;
    if (pthread_create(&t, NULL, child_thread, &from_thread)) rel_fail("child: pthread_create");
    pthread_join(t, NULL);
    if (!from_thread || rel_damaged(from_thread, 16, 0) >= 0) rel_fail("child: handed block");
    r_free(from_thread);
    if (depth == 0 && seed % 10 == 0) {              /* a grandchild, now that we have threads */
        void *q = r_malloc(777);
        rel_stamp(q, 777, 5);
        pid_t g = fork();
        if (g < 0) rel_fail("fork: %s", strerror(errno));
        if (g == 0) {
            child_work(q, 777, 5, 1);
            exit(0);
        }
        r_free(q);
        wait_for(g, "grandchild");
    }
    for (unsigned i = 0; i < 8; i++) {
        if (rel_damaged(p[i], sizes[i], i) >= 0) rel_fail("child: block damaged");
        r_free(p[i]);
    }
}

int main(int argc, char **argv)
{
    unsigned forks = 300, threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--forks")) forks = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = (unsigned)atoi(argv[i + 1]);
        else { fprintf(stderr, "usage: fork [--forks N] [--threads T]\n"); return 2; }
    }
    if (threads > 16) threads = 16;
    forks = (unsigned)(forks * rel_scale());
    const char *strategy = rel_require_hoardlab();
    pthread_t tid[16];
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, background, (void *)(uintptr_t)t)) rel_fail("pthread_create");
    for (unsigned f = 0; f < forks; f++) {
        size_t n = 1 + (f * 997) % 20000;
        void *inherited = r_malloc(n);
        if (!inherited) rel_fail("malloc failed");
        rel_stamp(inherited, n, f);
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) rel_fail("fork: %s", strerror(errno));
        if (pid == 0) {
            atexit(child_atexit);
            child_work(inherited, n, f, 0);
            exit(exit_status);
        }
        if (rel_damaged(inherited, n, f) >= 0) rel_fail("parent: block damaged across fork");
        r_free(inherited);
        wait_for(pid, "child");
    }
    atomic_store(&stop, true);
    for (unsigned t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    for (unsigned i = 0; i < 64; i++) r_free(atomic_load(&exchange[i]));
    printf("ok: fork under %s: %u forks while %u threads allocate\n", strategy, forks, threads);
    return 0;
}
