/* corners.c — the odd corners a real program reaches: malloc in TLS destructors (pthread keys
 * created before and after the allocator's own, and C++-style thread_local destructors), in
 * atexit handlers and library destructors, blocks freed after the thread that allocated them
 * exited, and libc functions that allocate internally (strdup, asprintf, getline, qsort,
 * stdio, open_memstream, scandir, regcomp, glob, iconv, getpwuid, realpath, ...).
 *
 * Blocks libc allocated are given back with plain free(): hoardlab's under LD_PRELOAD, the
 * sanitizer's in the direct (sanitizer) build. */
#include <dirent.h>
#include <glob.h>
#include <iconv.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <regex.h>
#include <search.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rel.h"

static int steps;
#define STEP(name) do { name(); printf("ok: %s\n", #name); steps++; } while (0)

/* ---- TLS destructors ------------------------------------------------------------------------ */

static pthread_key_t key_early, key_late;
static atomic_int dtor_runs, tls_dtor_runs;

/* Runs up to PTHREAD_DESTRUCTOR_ITERATIONS times: verifies and frees the value, and sets a
 * fresh block twice, so allocation happens in later destructor rounds too. */
static void key_dtor(void *v)
{
    struct { uint64_t seed; unsigned round; } *h = v;
    if (rel_damaged((char *)v + 16, 1000, h->seed) >= 0) rel_fail("key value damaged");
    unsigned round = h->round;
    pthread_key_t k = h->seed & 1 ? key_late : key_early;
    uint64_t seed = h->seed;
    r_free(v);
    void *tmp = r_malloc(50000);                      /* a large-ish one, too */
    if (!tmp) rel_fail("malloc in a TLS destructor failed");
    memset(tmp, 3, 50000);
    r_free(tmp);
    if (round < 2) {
        void *n = r_malloc(1016);
        if (!n) rel_fail("malloc in a TLS destructor failed");
        rel_stamp((char *)n + 16, 1000, seed);
        ((uint64_t *)n)[0] = seed;
        ((unsigned *)n)[2] = round + 1;
        pthread_setspecific(k, n);
    }
    atomic_fetch_add(&dtor_runs, 1);
}

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

static void thread_local_dtor(void *arg)
{
    void **slot = arg;
    if (rel_damaged(*slot, 300, 11) >= 0) rel_fail("thread_local's block damaged");
    r_free(*slot);
    char *s = r_malloc(64);
    if (!s) rel_fail("malloc in a thread_local destructor failed");
    snprintf(s, 64, "bye");
    r_free(s);
    r_free(slot);
    atomic_fetch_add(&tls_dtor_runs, 1);
}

static void *with_destructors(void *arg)
{
    uint64_t id = (uintptr_t)arg;
    for (int which = 0; which < (id ? 2 : 1); which++) {   /* thread 0: before key_late */
        void *v = r_malloc(1016);
        if (!v) rel_fail("malloc failed");
        uint64_t seed = id * 2 + (uint64_t)which;
        ((uint64_t *)v)[0] = seed;
        ((unsigned *)v)[2] = 0;
        rel_stamp((char *)v + 16, 1000, seed);
        pthread_setspecific(which ? key_late : key_early, v);
    }
    void **slot = r_malloc(sizeof *slot);
    *slot = r_malloc(300);
    rel_stamp(*slot, 300, 11);
    __cxa_thread_atexit_impl(thread_local_dtor, slot, &__dso_handle);
    for (int i = 0; i < 100; i++) r_free(r_malloc((size_t)i * 10 + 1));
    return NULL;
}

static void malloc_in_tls_destructors(void)
{
    /* The allocator's own thread-exit hook is a pthread key made at the first allocation, so
     * these keys' destructors run after it: the thread is already torn down in the
     * allocator when they allocate (thread.c: state 2). key_late appears while threads run. */
    pthread_key_create(&key_early, key_dtor);
    pthread_t t[64];
    for (unsigned i = 0; i < 64; i++) {
        if (i == 1) pthread_key_create(&key_late, key_dtor);
        if (pthread_create(&t[i], NULL, with_destructors, (void *)(uintptr_t)i))
            rel_fail("pthread_create");
        if (i == 0) pthread_join(t[0], NULL);
    }
    for (unsigned i = 1; i < 64; i++) pthread_join(t[i], NULL);
    /* thread 0 ran before key_late existed: it set key_early only, 3 rounds; others 6. */
    if (atomic_load(&dtor_runs) != 3 + 63 * 6)
        rel_fail("TLS destructors ran %d times", atomic_load(&dtor_runs));
    if (atomic_load(&tls_dtor_runs) != 64)
        rel_fail("thread_local destructors ran %d times", atomic_load(&tls_dtor_runs));
}

/* ---- blocks outliving their thread ---------------------------------------------------------- */

struct bag { void *p[2000]; size_t n[2000]; };

static void *fill_bag(void *arg)
{
    struct bag *b = arg;
    for (unsigned i = 0; i < 2000; i++) {
        b->n[i] = 1 + (i * 37) % (i % 50 ? 700 : 90000);
        b->p[i] = r_malloc(b->n[i]);
        if (!b->p[i]) rel_fail("malloc failed");
        rel_stamp(b->p[i], b->n[i], i);
    }
    return NULL;
}

static void *empty_bag(void *arg)
{
    struct bag *b = arg;
    for (unsigned i = 0; i < 2000; i += 2) {
        if (rel_damaged(b->p[i], b->n[i], i) >= 0) rel_fail("orphan block %u damaged", i);
        r_free(b->p[i]);
    }
    return NULL;
}

static void blocks_freed_after_their_thread_exited(void)
{
    static struct bag bags[4];
    pthread_t t[4];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, fill_bag, &bags[i]);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        /* half freed by a new thread, half by main; and new threads reuse the dead heaps */
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, empty_bag, &bags[i]);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        for (int i = 0; i < 4; i++)
            for (unsigned k = 1; k < 2000; k += 2) {
                if (rel_damaged(bags[i].p[k], bags[i].n[k], k) >= 0) rel_fail("orphan damaged");
                r_free(bags[i].p[k]);
            }
    }
}

/* ---- libc functions that allocate inside ---------------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

struct rec { long key; char pad[120]; };
static int cmp_rec(const void *a, const void *b)
{
    return cmp_long(&((const struct rec *)a)->key, &((const struct rec *)b)->key);
}

static void libc_functions_that_allocate(void)
{
    char *s = strdup("hello, allocator");
    char *n = strndup("abcdefghijklmnopqrstuvwxyz", 10);
    REL_CHECK(s && n && !strcmp(s, "hello, allocator") && !strcmp(n, "abcdefghij"), "strdup");
    free(s);
    free(n);

    char *a = NULL;
    REL_CHECK(asprintf(&a, "%d-%s-%0500d", 42, "x", 7) == 505 && a[504] == '7', "asprintf");
    free(a);

    /* getline / getdelim: a line that grows the buffer many times */
    char path[] = "/tmp/hoardlab-corners-XXXXXX";
    int fd = mkstemp(path);
    REL_CHECK(fd >= 0, "mkstemp");
    FILE *f = fdopen(fd, "w+");
    setvbuf(f, NULL, _IOFBF, 1 << 16);               /* stdio allocates its buffer */
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 100000; k++) fputc('a' + (k + i) % 26, f);
        fputc('\n', f);
    }
    fprintf(f, "x;y;z");
    rewind(f);
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i < 3; i++) {
        ssize_t got = getline(&line, &cap, f);
        REL_CHECK(got == 100001 && line[99999] == 'a' + (99999 + i) % 26, "getline %d", i);
    }
    REL_CHECK(getdelim(&line, &cap, ';', f) == 2 && line[0] == 'x', "getdelim");
    free(line);
    fclose(f);
    unlink(path);

    /* qsort: glibc's merge sort takes a malloc'd buffer for large arrays */
    enum { Q = 200000 };
    long *v = malloc(Q * sizeof *v);
    struct rec *r = malloc(20000 * sizeof *r);
    REL_CHECK(v && r, "malloc");
    for (long i = 0; i < Q; i++) v[i] = (i * 7919) % Q;
    qsort(v, Q, sizeof *v, cmp_long);
    for (long i = 0; i < Q; i++) REL_CHECK(v[i] == i, "qsort");
    for (long i = 0; i < 20000; i++) r[i].key = (i * 104729) % 20000;
    qsort(r, 20000, sizeof *r, cmp_rec);
    for (long i = 0; i < 20000; i++) REL_CHECK(r[i].key == i, "qsort of records");
    free(v);
    free(r);

    /* open_memstream: realloc as it grows */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (int i = 0; i < 50000; i++) fprintf(m, "%d,", i);
    fclose(m);
    REL_CHECK(len > 200000 && !strncmp(buf, "0,1,2,", 6), "open_memstream");
    free(buf);

    /* tmpfile, fmemopen, stdio buffers */
    FILE *t = tmpfile();
    REL_CHECK(t, "tmpfile");
    for (int i = 0; i < 10000; i++) fprintf(t, "line %d\n", i);
    rewind(t);
    char got[64];
    int count = 0;
    while (fgets(got, sizeof got, t)) count++;
    REL_CHECK(count == 10000, "tmpfile lines");
    fclose(t);
    char mem[] = "one two three";
    FILE *fm = fmemopen(mem, sizeof mem, "r");
    char w1[8], w2[8];
    REL_CHECK(fscanf(fm, "%7s %7s", w1, w2) == 2 && !strcmp(w2, "two"), "fmemopen");
    fclose(fm);

    /* directories, paths, patterns */
    struct dirent **list;
    int nd = scandir("/usr/lib", &list, NULL, alphasort);
    REL_CHECK(nd > 2, "scandir");
    for (int i = 0; i < nd; i++) free(list[i]);
    free(list);
    char *rp = realpath("/usr/lib/../bin", NULL);
    REL_CHECK(rp && !strcmp(rp, "/usr/bin"), "realpath");
    free(rp);
    char *cwd = getcwd(NULL, 0);
    REL_CHECK(cwd, "getcwd");
    free(cwd);
    glob_t g;
    REL_CHECK(glob("/usr/lib/*", 0, NULL, &g) == 0 && g.gl_pathc > 2, "glob");
    globfree(&g);
    regex_t re;
    regmatch_t mt[3];
    REL_CHECK(regcomp(&re, "([a-z]+)@([a-z]+)\\.org", REG_EXTENDED) == 0, "regcomp");
    REL_CHECK(regexec(&re, "mail alice@example.org now", 3, mt, 0) == 0 && mt[1].rm_so == 5,
              "regexec");
    regfree(&re);

    /* locale, iconv (loads a gconv module with dlopen), NSS, hash tables */
    setlocale(LC_ALL, "C.UTF-8");
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    REL_CHECK(loc, "newlocale");
    freelocale(loc);
    setlocale(LC_ALL, "C");
    iconv_t cd = iconv_open("ISO-8859-15", "UTF-8");
    if (cd != (iconv_t)-1) {
        char in[] = "caf\xc3\xa9 \xe2\x82\xac", out[32], *ip = in, *op = out;
        size_t il = strlen(in), ol = sizeof out;
        REL_CHECK(iconv(cd, &ip, &il, &op, &ol) != (size_t)-1 && (unsigned char)out[3] == 0xE9
                  && (unsigned char)out[5] == 0xA4, "iconv");
        iconv_close(cd);
    }
    struct passwd *pw = getpwuid(0);
    REL_CHECK(pw && !strcmp(pw->pw_name, "root"), "getpwuid");
    REL_CHECK(hcreate(1000), "hcreate");
    for (int i = 0; i < 500; i++) {
        char *k;
        REL_CHECK(asprintf(&k, "key%d", i) > 0, "asprintf");
        ENTRY e = { k, (void *)(intptr_t)i };
        REL_CHECK(hsearch(e, ENTER), "hsearch");
    }
    ENTRY q = { "key321", NULL }, *hit = hsearch(q, FIND);
    REL_CHECK(hit && (intptr_t)hit->data == 321, "hsearch find");
    hdestroy();                                      /* keys leak, as hdestroy documents */
}

/* ---- at exit -------------------------------------------------------------------------------- */

static void *kept_for_exit[100];

static void at_exit_handler(void)
{
    for (unsigned i = 0; i < 100; i++) {            /* blocks from main, freed at exit */
        if (rel_damaged(kept_for_exit[i], 100 + i, i) >= 0) rel_fail("block damaged at exit");
        void *q = r_realloc(kept_for_exit[i], 5000 + i);
        if (!q) rel_fail("realloc at exit failed");
        r_free(q);
    }
    char *s = strdup("exiting");                      /* and libc allocating at exit */
    void *big = r_malloc(3 << 20);
    if (!s || !big) rel_fail("allocation in an atexit handler failed");
    memset(big, 1, 3 << 20);
    r_free(big);
    free(s);
    static const char msg[] = "ok: malloc in atexit handlers\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(1);
}

__attribute__((destructor)) static void program_destructor(void)
{
    void *p = r_malloc(1234);
    if (!p) _exit(1);
    memset(p, 7, 1234);
    r_free(p);
}

static void *from_constructor;
__attribute__((constructor)) static void program_constructor(void)
{
    from_constructor = malloc(4321);                 /* before main: libc's malloc name */
    if (from_constructor) memset(from_constructor, 9, 4321);
}

static void malloc_before_main(void)
{
    REL_CHECK(from_constructor && ((unsigned char *)from_constructor)[4320] == 9, "constructor");
    free(from_constructor);
}

int main(void)
{
    const char *strategy = rel_require_hoardlab();
    setvbuf(stdout, NULL, _IOLBF, 0);
    STEP(malloc_before_main);
    STEP(malloc_in_tls_destructors);
    STEP(blocks_freed_after_their_thread_exited);
    STEP(libc_functions_that_allocate);
    for (unsigned i = 0; i < 100; i++) {
        kept_for_exit[i] = r_malloc(100 + i);
        rel_stamp(kept_for_exit[i], 100 + i, i);
    }
    atexit(at_exit_handler);
    printf("corners under %s: %d steps passed; exiting\n", strategy, steps);
    return 0;
}
