/* checks_test.c — the `checks = on` mode (src/core/instruments/checks.c) on bad input.
 *
 * checks_test            run with HOARD_CHECKS=on: each case forks a child that makes one
 *                        mistake; the child must abort (SIGABRT) with the one-line message
 *                        naming the exact address and the strategy.
 * checks_test --off      run without it: the mode must be off by default.
 *
 * A valid, heavy workload with checks on (no false alarm) is the stress test, run by meson
 * with HOARD_CHECKS=on as well. */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "rel.h"

static const char *strategy;
static int msg_out = -1;

/* Each mistake first sends the message it must cause (with the exact address, known only in
 * the child) to the parent, then makes it. */
__attribute__((format(printf, 1, 2)))
static void expect(const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (write(msg_out, text, (size_t)n) != n) _exit(9);
    close(msg_out);
}

static void *freed_elsewhere;
static void *free_it(void *p) { r_free(p); return NULL; }

static void double_free_small(void)
{
    void *p = r_malloc(40);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    r_free(p);
}

/* realloc to a size that fits in place never frees: it must still see that p is dead. */
static void realloc_after_free(void)
{
    void *p = r_malloc(40);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    if (r_realloc(p, 30) == NULL) _exit(8);
}

static void double_free_large(void)
{
    void *p = r_malloc(5 << 20);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    r_free(p);
}

static void double_free_aligned(void)
{
    void *p = r_memalign(4096, 3000);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    r_free(p);
}

static void double_free_after_other_frees(void)
{
    void *p = r_malloc(100);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    void *keep[1000];
    for (int i = 0; i < 1000; i++) keep[i] = r_malloc(100 + (size_t)i * 4);
    for (int i = 0; i < 1000; i++) r_free(keep[i]);
    r_free(p);
}

static void double_free_across_threads(void)
{
    void *p = r_malloc(64);
    expect("double free of %p (strategy %s)", p, strategy);
    pthread_t t;
    freed_elsewhere = p;
    pthread_create(&t, NULL, free_it, p);
    pthread_join(t, NULL);
    r_free(freed_elsewhere);
}

static void realloc_of_freed_block(void)
{
    void *p = r_malloc(32);
    expect("double free of %p (strategy %s)", p, strategy);
    r_free(p);
    void *q = r_realloc(p, 100000);                  /* moves, so it frees p again */
    (void)q;
}

static void free_of_interior_pointer(void)
{
    char *p = r_malloc(200);
    expect("free of %p, which hoardlab never returned "
             "(strategy %s)", (void *)(p + 16), strategy);
    r_free(p + 16);
}

static void free_of_large_interior_pointer(void)
{
    char *p = r_malloc(1 << 20);
    expect("free of %p, which hoardlab never returned "
             "(strategy %s)", (void *)(p + 8192), strategy);
    r_free(p + 8192);
}

static void free_of_stack_address(void)
{
    char local[64];
    expect("free of %p, which hoardlab never returned "
             "(strategy %s)", (void *)local, strategy);
    r_free(local);
}

static void free_of_foreign_mapping(void)
{
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    expect("free of %p, which hoardlab never returned "
             "(strategy %s)", m, strategy);
    r_free(m);
}

static const struct { const char *name; void (*run)(void); } cases[] = {
    { "double free of a small block", double_free_small },
    { "double free of a large block", double_free_large },
    { "realloc in place of a freed block", realloc_after_free },
    { "double free of an aligned block", double_free_aligned },
    { "double free after 1000 other frees", double_free_after_other_frees },
    { "double free across threads", double_free_across_threads },
    { "realloc of a freed block", realloc_of_freed_block },
    { "free of an interior pointer", free_of_interior_pointer },
    { "free of an interior pointer of a large block", free_of_large_interior_pointer },
    { "free of a stack address", free_of_stack_address },
    { "free of a mapping hoardlab never made", free_of_foreign_mapping },
};

int main(int argc, char **argv)
{
    strategy = rel_require_hoardlab();
    const char *(*get)(const char *) =
#ifdef REL_DIRECT
        hoardlab_config_get;
#else
        (const char *(*)(const char *))dlsym(RTLD_DEFAULT, "hoardlab_config_get");
#endif
    REL_CHECK(get, "hoardlab_config_get not found");
    if (argc > 1 && !strcmp(argv[1], "--off")) {
        REL_CHECK(!strcmp(get("checks"), "off"), "checks is %s by default", get("checks"));
        void *p = r_malloc(10);                      /* and nothing is checked */
        r_free(p);
        printf("ok: checks are off by default under %s\n", strategy);
        return 0;
    }
    REL_CHECK(!strcmp(get("checks"), "on"), "run this with HOARD_CHECKS=on");
    int failed = 0, passed = 0;
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int pipefd[2];
        REL_CHECK(pipe(pipefd) == 0, "pipe");
        int msgfd[2];                                /* the expected message, from the child */
        REL_CHECK(pipe(msgfd) == 0, "pipe");
        fflush(stdout);
        pid_t pid = fork();
        REL_CHECK(pid >= 0, "fork");
        if (pid == 0) {
            dup2(pipefd[1], 2);
            close(pipefd[0]);
            close(msgfd[0]);
            msg_out = msgfd[1];
            cases[c].run();
            _exit(0);                                /* the mistake was not caught */
        }
        close(pipefd[1]);
        close(msgfd[1]);
        char err[4096] = "";
        size_t got = 0;
        ssize_t r;
        while (got < sizeof err - 1 && (r = read(pipefd[0], err + got, sizeof err - 1 - got)) > 0)
            got += (size_t)r;
        err[got] = 0;
        close(pipefd[0]);
        char want[256] = "";
        got = 0;
        while (got < sizeof want - 1 && (r = read(msgfd[0], want + got, sizeof want - 1 - got)) > 0)
            got += (size_t)r;
        want[got] = 0;
        close(msgfd[0]);
        int status;
        waitpid(pid, &status, 0);
        bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
        bool ok = aborted && *want && strstr(err, "hoardlab: ") && strstr(err, want);
        if (ok) {
            passed++;
            printf("ok: %s: %s", cases[c].name, err);
        } else {
            failed++;
            printf("FAIL: %s: %s; expected \"%s\"; stderr: %s\n", cases[c].name,
                   aborted ? "aborted" : WIFSIGNALED(status) ? "killed by another signal"
                                                              : "exited normally", want, err);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
