/* signal.c — async-signal safety (Michael, PLDI 2004, §1): T threads replace blocks of a live
 * set while a sender thread signals each of them every `interval_us`; the handler itself
 * mallocs, stamps and frees a block of each of `handler_sizes`. An allocator that holds a lock
 * when the signal arrives and needs it again in the handler deadlocks; a lock-free one cannot.
 *
 * A deadlock is a result, not a failure: a watchdog thread sees a worker without progress
 * (steps or handled signals) for `watchdog_s` and writes the run's record itself, with
 * `deadlocked: true`, then ends the process with _exit(0). The allocator may then be stuck
 * with its lock held, so from the moment it fires the watchdog calls no allocator function,
 * no stdio and no snprintf: everything that does not change (the record up to `params`) is
 * formatted before the measured phase, the rest by hand into a buffer, and written with
 * write(2). libhoardlab's statistics cannot be read then (hoardlab_stats takes locks), so
 * that record's `hoardlab` is null; remaining --repeat runs do not happen.
 *
 * The default handler sizes lie above the threads' size range, so the handler and the code it
 * interrupts use different size classes: an allocator that is not async-signal-safe then
 * deadlocks (or not) rather than corrupting a free list. Overlapping sizes test the stronger
 * property, but an unsafe allocator may then corrupt memory: a lost stamp (exit status 1) or
 * a crash. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "../hlbench.h"

const struct hb_param hb_signal_malloc_params[] = {
    { "steps",         HB_INT,  "2000000",        true,  "slot replacements per thread (a free "
                                                         "and a malloc each)" },
    { "slots",         HB_INT,  "64",             false, "live blocks per thread" },
    { "min_size",      HB_INT,  "8",              false, "smallest block of the threads, bytes" },
    { "max_size",      HB_INT,  "1024",           false, "largest block of the threads, bytes" },
    { "handler_sizes", HB_STR,  "1536,2048,3072", false, "bytes the handler mallocs and frees, "
                                                         "comma-separated (at most 8)" },
    { "interval_us",   HB_INT,  "100",            false, "microseconds between rounds of "
                                                         "signals (one to each thread)" },
    { "watchdog_s",    HB_REAL, "5",              false, "a thread without progress this long: "
                                                         "reported as a deadlock" },
    { "simulate_deadlock", HB_INT, "0",           false, "1: thread 0's first handler blocks "
                                                         "forever (tests the watchdog)" },
    { NULL, 0, NULL, false, NULL },
};

#define SM_MAX_SIZES 8

struct sm_thread {
    _Atomic unsigned long long steps, handled;
    _Atomic int finished;
    pthread_t tid;
    char pad[64];
};

struct sm {
    struct hb_run *r;
    struct sm_thread *t;
    _Atomic int ready, go, finished, stop_sending, done;
    _Atomic unsigned long long sent;
    char *record;              /* the record up to "params" included, then room for the rest */
    size_t prefix_len, cap;
};

/* The handler's state: a signal carries no argument, so these are the workload's statics. */
static size_t sm_sizes[SM_MAX_SIZES];
static int sm_nsizes;
static uint64_t sm_salt;
static int sm_simulate;
static struct sm_thread *sm_threads;
static _Thread_local int sm_self = -1;

/* ---- async-signal-safe output ------------------------------------------------------------- */

static void put(struct sm *S, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (*n + k + 1 > S->cap) k = S->cap - *n - 1;
    memcpy(S->record + *n, s, k);
    *n += k;
    S->record[*n] = 0;
}

static void put_u64(struct sm *S, size_t *n, unsigned long long v)
{
    char b[24], *p = b + sizeof b - 1;
    *p = 0;
    do *--p = (char)('0' + v % 10); while ((v /= 10));
    put(S, n, p);
}

/* Fixed point with six decimals, always with a '.', so JSON readers see a float. */
static void put_real(struct sm *S, size_t *n, double v)
{
    if (!(v >= 0) || v > 1e18) v = 0;
    unsigned long long ip = (unsigned long long)v;
    unsigned long long frac = (unsigned long long)((v - (double)ip) * 1e6 + 0.5);
    if (frac >= 1000000) {
        ip++;
        frac -= 1000000;
    }
    put_u64(S, n, ip);
    char b[8] = ".000000";
    for (int k = 6; k >= 1; k--, frac /= 10) b[k] = (char)('0' + frac % 10);
    put(S, n, b);
}

static void say(const char *s)
{
    for (size_t n = strlen(s); n;) {
        ssize_t w = write(2, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* VmHWM from /proc/self/status with open/read (no stdio); getrusage as the fallback. */
static long peak_rss_kb(void)
{
    static char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n > 0) {
        buf[n] = 0;
        char *p = strstr(buf, "VmHWM:");
        if (p) {
            long kb = 0;
            for (p += 6; *p == ' ' || *p == '\t'; p++) {}
            for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (*p - '0');
            return kb;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- the handler ----------------------------------------------------------------------------- */

static _Noreturn void die(const char *msg)
{
    say("hlbench: signal-malloc: ");
    say(msg);
    say("\n");
    _exit(1);
}

static void sm_handler(int sig)
{
    (void)sig;
    int saved = errno, i = sm_self;
    if (i < 0) return;
    if (sm_simulate && i == 0)
        for (;;) pause();      /* SIGUSR1 is blocked in its own handler: blocks forever */
    for (int k = 0; k < sm_nsizes; k++) {
        size_t n = sm_sizes[k];
        void *p = malloc(n);
        if (!p) die("malloc returned NULL in the signal handler");
        hb_stamp(p, n, sm_salt);
        uint64_t w;            /* a stamp's first word is hb_mix(address ^ salt) */
        memcpy(&w, p, sizeof w);
        if (w != hb_mix((uint64_t)(uintptr_t)p ^ sm_salt))
            die("a block the handler allocated lost its stamp: the allocator handed out "
                "memory that another live block uses");
        free(p);
    }
    atomic_fetch_add_explicit(&sm_threads[i].handled, 1, memory_order_relaxed);
    errno = saved;
}

/* ---- threads -------------------------------------------------------------------------------- */

static void sleep_us(long long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

static void worker(struct hb_run *r, struct sm *S, int i)
{
    struct sm_thread *me = &S->t[i];
    long long n = hb_int(r, "slots"), steps = hb_int(r, "steps");
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    uint64_t salt = hb_mix(r->seed * 1000003u + (uint64_t)i);
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    struct hb_block *live = hb_live_set(&g, n, lo, hi, salt);
    me->tid = pthread_self();
    sm_self = i;
    atomic_fetch_add(&S->ready, 1);
    while (!atomic_load(&S->go)) sleep_us(50);     /* the first signals are on their way */
    for (long long s = 0; s < steps; s++) {
        long long k = (long long)(hb_rand(&g) % (uint64_t)n);
        hb_release(live[k].p, live[k].n, salt);
        live[k].n = (size_t)hb_range(&g, lo, hi);
        live[k].p = hb_alloc(live[k].n, salt);
        atomic_store_explicit(&me->steps, (unsigned long long)s + 1, memory_order_relaxed);
    }
    atomic_store(&me->finished, 1);
    atomic_fetch_add(&S->finished, 1);
    /* Stay alive (and signalled) until the sender has stopped: it must never signal a
     * thread that has exited. */
    while (!atomic_load(&S->stop_sending)) sleep_us(100);
    sm_self = -1;
    for (long long k = 0; k < n; k++) hb_release(live[k].p, live[k].n, salt);
    free(live);
    atomic_fetch_add(&r->ops, (unsigned long long)(2 * steps));
}

static void sender(struct hb_run *r, struct sm *S)
{
    long long interval = hb_int(r, "interval_us");
    while (atomic_load(&S->ready) < r->threads) sleep_us(100);
    while (atomic_load(&S->finished) < r->threads) {
        for (int i = 0; i < r->threads; i++) {
            pthread_kill(S->t[i].tid, SIGUSR1);
            atomic_fetch_add_explicit(&S->sent, 1, memory_order_relaxed);
        }
        atomic_store(&S->go, 1);
        if (interval) sleep_us(interval);
    }
    atomic_store(&S->stop_sending, 1);
}

static void sm_thread_main(struct hb_run *r, int i, void *arg)
{
    if (i < r->threads) worker(r, arg, i);
    else sender(r, arg);
}

/* ---- the watchdog --------------------------------------------------------------------------- */

struct counts { unsigned long long ops, handled; };

static struct counts count(const struct sm *S)
{
    struct counts c = { 0, 0 };
    for (int i = 0; i < S->r->threads; i++) {
        c.ops += 2 * atomic_load(&S->t[i].steps);
        c.handled += atomic_load(&S->t[i].handled);
    }
    return c;
}

/* The extra object of the watchdog's record; hb_signal_malloc() writes the same keys. */
static void extra_tail(struct sm *S, size_t *n, bool deadlocked, struct counts c, int stalled,
                       double stalled_after)
{
    put(S, n, "{\"deadlocked\": ");
    put(S, n, deadlocked ? "true" : "false");
    put(S, n, ", \"signals_sent\": ");
    put_u64(S, n, atomic_load(&S->sent));
    put(S, n, ", \"signals_handled\": ");
    put_u64(S, n, c.handled);
    put(S, n, ", \"handler_ops\": ");
    put_u64(S, n, c.handled * 2 * (unsigned long long)sm_nsizes);
    put(S, n, ", \"stalled_threads\": ");
    put_u64(S, n, (unsigned long long)stalled);
    put(S, n, ", \"stalled_after_s\": ");
    if (deadlocked) put_real(S, n, stalled_after);
    else put(S, n, "null");
    put(S, n, "}");
}

static _Noreturn void fire(struct sm *S, int stalled, double stalled_after)
{
    struct hb_run *r = S->r;
    struct counts c = count(S);
    double wall = hb_now() - r->t0;
    size_t n = S->prefix_len;
    put(S, &n, ", \"wall_s\": ");
    put_real(S, &n, wall);
    put(S, &n, ", \"ops\": ");
    put_u64(S, &n, c.ops);
    put(S, &n, ", \"throughput\": ");
    put_real(S, &n, wall > 0 ? (double)c.ops / wall : 0.0);
    put(S, &n, ", \"peak_rss_kb\": ");
    put_u64(S, &n, (unsigned long long)peak_rss_kb());
    put(S, &n, ", \"cache_line\": ");
    put_u64(S, &n, (unsigned long long)S->r->cache_line);
    put(S, &n, ", \"cores\": ");
    put_u64(S, &n, (unsigned long long)S->r->cores);
    /* no huge-page coverage: reading smaps (huge.c) may allocate, and a lock may be held */
    put(S, &n, ", \"huge_coverage\": null, \"anon_huge_kb\": null");
    put(S, &n, ", \"hoardlab\": null, \"extra\": ");
    extra_tail(S, &n, true, c, stalled, stalled_after);
    put(S, &n, "}\n");
    say("hlbench: signal-malloc: a thread made no progress for watchdog_s: reported as a "
        "deadlock\n");
    write_all(1, S->record, n);
    _exit(0);
}

static void *watchdog(void *arg)
{
    struct sm *S = arg;
    struct hb_run *r = S->r;
    int T = r->threads;
    double limit = hb_real(r, "watchdog_s"), t0 = hb_now();
    unsigned long long last[T], total_last = 0;
    double changed[T], total_changed = t0;
    for (int i = 0; i < T; i++) {
        last[i] = 0;
        changed[i] = t0;
    }
    while (!atomic_load(&S->done)) {
        sleep_us(10000);
        double now = hb_now(), oldest = now;
        unsigned long long total = 0;
        int stalled = 0;
        for (int i = 0; i < T; i++) {
            unsigned long long p = atomic_load(&S->t[i].steps) + atomic_load(&S->t[i].handled);
            total += p;
            if (p != last[i]) {
                last[i] = p;
                changed[i] = now;
            } else if (!atomic_load(&S->t[i].finished) && now - changed[i] > limit) {
                stalled++;
                if (changed[i] < oldest) oldest = changed[i];
            }
        }
        /* Also nothing at all moving (e.g. a finished thread stuck in its handler). */
        if (total != total_last) {
            total_last = total;
            total_changed = now;
        } else if (!stalled && now - total_changed > limit && !atomic_load(&S->done)) {
            oldest = total_changed;
            stalled = T;
        }
        if (stalled && !atomic_load(&S->done)) fire(S, stalled, oldest - r->t0);
    }
    return NULL;
}

/* ---- set-up: what the watchdog's record needs, formatted before the measured phase ---------- */

static void prepare_record(struct sm *S)
{
    struct hb_json j;
    hb_json_init(&j);
    hb_record_head(&j, S->r);
    S->prefix_len = j.len;
    S->cap = j.len + 1024;
    if (!(S->record = malloc(S->cap))) hb_fail("out of memory");
    memcpy(S->record, j.buf, j.len + 1);
    hb_json_free(&j);
}

static void parse_sizes(struct hb_run *r)
{
    const char *s = hb_str(r, "handler_sizes");
    sm_nsizes = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || v < 1 || v > (1 << 24) || sm_nsizes == SM_MAX_SIZES ||
            (*end && *end != ','))
            hb_usage("bad --handler_sizes '%s': up to %d sizes 1..16777216, comma-separated",
                     hb_str(r, "handler_sizes"), SM_MAX_SIZES);
        sm_sizes[sm_nsizes++] = (size_t)v;
        s = *end ? end + 1 : end;
    }
}

int hb_signal_malloc(struct hb_run *r)
{
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size") ||
        hb_int(r, "slots") < 1 || hb_real(r, "watchdog_s") <= 0 ||
        hb_int(r, "simulate_deadlock") > 1)
        hb_usage("signal-malloc needs 1 <= min_size <= max_size, slots >= 1, watchdog_s > 0, "
                 "simulate_deadlock 0 or 1");
    parse_sizes(r);
    struct sm S = { .r = r };
    if (!(S.t = calloc((size_t)r->threads, sizeof *S.t))) hb_fail("out of memory");
    sm_threads = S.t;
    sm_salt = hb_mix(r->seed ^ 0x5167);
    sm_simulate = (int)hb_int(r, "simulate_deadlock");
    prepare_record(&S);

    struct sigaction old;
    hb_on_sigusr1(sm_handler, &old);
    pthread_t wd;
    hb_begin(r);
    if (pthread_create(&wd, NULL, watchdog, &S)) hb_fail("pthread_create failed");
    hb_parallel(r, r->threads + 1, sm_thread_main, &S);
    hb_end(r);
    atomic_store(&S.done, 1);
    pthread_join(wd, NULL);
    sigaction(SIGUSR1, &old, NULL);

    /* The keys of extra_tail(), in its order. */
    struct counts c = count(&S);
    hb_json_bool(r->extra, "deadlocked", false);
    hb_json_uint(r->extra, "signals_sent", atomic_load(&S.sent));
    hb_json_uint(r->extra, "signals_handled", c.handled);
    hb_json_uint(r->extra, "handler_ops", c.handled * 2 * (unsigned long long)sm_nsizes);
    hb_json_int(r->extra, "stalled_threads", 0);
    hb_json_null(r->extra, "stalled_after_s");
    free(S.record);
    free(S.t);
    sm_threads = NULL;
    return 0;
}
