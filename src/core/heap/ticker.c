/* ticker.c — the background thread as a timer (ticker.h): registered watches and periodic
 * jobs, run when due, on one thread that sleeps in between.
 *
 * Invariants:
 *   - It never allocates: it has no thread id, heap or TLAB, its counters are never summed,
 *     and it is no thread of the program's for the statistics or heap selection. It blocks
 *     every signal (a program's handlers are for its own threads).
 *   - It sleeps (a condition variable with a deadline) on a mutex of its own, `rest`, never
 *     holding another lock, until the earliest due (plus the coarse clock's step, so the
 *     clock has reached it when it wakes: at most one wake per step, 1-4 ms), or for good
 *     while nothing is due. A watch's due that moves before that deadline wakes it
 *     (hl_ticker_wake); one that comes back to the deadline it keeps wakes nobody.
 *   - Watches run before periodic jobs, each kind in registration order.
 *   - fork: a thread being started is waited for until it runs its own code (`entered`);
 *     the child has no thread, and its next malloc slow path starts one.
 * docs/hoard2026.md ("Purging parked memory: how it was decided": the thread, set_due /
 * thread_wake) has the measurements behind the wake rules. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include "base.h"
#include "ticker.h"

enum { JOBS_MAX = 6 };                   /* 2 watches (heap/), 2 periodic (cache/), room */
static struct job {
    void (*run)(void);
    _Atomic uint64_t *due;               /* a watch's; NULL: periodic */
    uint64_t period;                     /* periodic: ns */
    _Atomic uint64_t at;                 /* periodic: next due */
} jobs[JOBS_MAX];
static unsigned njobs;

static uint64_t ms_ns(long ms) { return (uint64_t)ms * 1000000u; }

static struct job *job_of(void (*run)(void))
{
    unsigned i = 0;
    while (i < njobs && jobs[i].run != run) i++;          /* (an init again: the same one) */
    if (i == JOBS_MAX) hl_die("internal: more than %d ticker jobs", JOBS_MAX);
    if (i == njobs) njobs++;
    jobs[i].run = run;
    return &jobs[i];
}

void hl_ticker_watch(_Atomic uint64_t *due, void (*run)(void)) { job_of(run)->due = due; }

void hl_ticker_every(void (*fn)(void), long ms)
{
    struct job *j = job_of(fn);
    j->due = NULL;
    j->period = ms_ns(ms);
    atomic_store_explicit(&j->at, hl_coarse_ns() + j->period, memory_order_relaxed);
}

/* The thread's next deadline: the earliest of them all. */
static uint64_t next_due(void)
{
    uint64_t d = UINT64_MAX;
    for (unsigned i = 0; i < njobs; i++) {
        uint64_t e = jobs[i].due ? atomic_load_explicit(jobs[i].due, memory_order_seq_cst)
                                 : atomic_load_explicit(&jobs[i].at, memory_order_relaxed);
        if (e < d) d = e;
    }
    return d;
}

/* The watches (each checks its own due), then each periodic job when due, and its next a
 * period later. */
static void run_due(void)
{
    for (unsigned i = 0; i < njobs; i++)
        if (jobs[i].due) jobs[i].run();
    uint64_t now = hl_coarse_ns();
    for (unsigned i = 0; i < njobs; i++) {
        struct job *j = &jobs[i];
        if (j->due || now < atomic_load_explicit(&j->at, memory_order_relaxed)) continue;
        j->run();
        atomic_store_explicit(&j->at, hl_coarse_ns() + j->period, memory_order_relaxed);
    }
}

/* ---- the thread ------------------------------------------------------------------------ */

_Atomic int hl_ticker_state;
static pthread_mutex_t rest = PTHREAD_MUTEX_INITIALIZER;   /* the thread's, and its wakers' */
static pthread_cond_t wake;              /* on CLOCK_MONOTONIC (thread_init) */
/* The thread's deadline while it waits (UINT64_MAX: none), 0 while it is awake or woken. */
static _Atomic uint64_t resting_until;
static uint64_t step;                    /* the coarse clock's resolution, ns */
static _Atomic size_t wakes;             /* hl_ticker_wakes */

/* A due (stored before) is now `at`. A wait that ends later than at's own deadline (at plus
 * the step, as the thread sets it) is woken; under `rest`, so the signal cannot fall between
 * the thread's test of the dues and its wait. A due that comes back to the deadline the
 * thread already keeps wakes nobody, nor one while the thread's own wait ends within two
 * steps: each such wake was a futex call and a context switch. */
void hl_ticker_wake(uint64_t at)
{
    uint64_t until = atomic_load_explicit(&resting_until, memory_order_seq_cst);
    if (at >= until || until - at <= step) return;
    if (until <= hl_coarse_ns() + 2 * step) return;        /* it wakes within two steps anyway */
    pthread_mutex_lock(&rest);
    atomic_store_explicit(&resting_until, 0, memory_order_relaxed);   /* one signal is enough */
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&rest);
}

/* Set when the thread reaches its own code: before that, the C library and a sanitizer's
 * runtime start it, and may hold their own allocators' locks (ASan's thread start calls
 * pthread_getattr_np, which callocs); a fork then would leave them held in the child, which
 * hangs at its next malloc of theirs (rel-asan-fork-hoard202607 hung in 3 runs of 12). So
 * fork waits for it (hl_ticker_fork). */
static _Atomic bool entered;

static void *thread_main(void *arg)
{
    (void)arg;
    atomic_store_explicit(&entered, true, memory_order_release);
    prctl(PR_SET_NAME, "hoardlab-purge");        /* (the name of its key, purge_thread) */
    pthread_mutex_lock(&rest);
    for (;;) {
        uint64_t d = next_due(), now = hl_coarse_ns();
        if (d <= now) {
            atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
            pthread_mutex_unlock(&rest);
            run_due();                   /* no lock across the sleep */
            pthread_mutex_lock(&rest);
            d = next_due();              /* (still due: a lock was busy; retry a step later) */
        }
        /* At least a step from now by the precise clock, which the coarse one trails (by a
         * step or more): a deadline from the coarse one could have passed already, the wait
         * ended at once, and the thread spun while a due stayed due (a lock busy). */
        uint64_t p = hl_now_ns();
        uint64_t until = d == UINT64_MAX ? UINT64_MAX : (d > p ? d : p) + step;
        atomic_store_explicit(&resting_until, until, memory_order_seq_cst);
        if (next_due() != d) continue;                                   /* moved: again */
        if (until == UINT64_MAX) {
            pthread_cond_wait(&wake, &rest);
        } else {
            struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
            pthread_cond_timedwait(&wake, &rest, &ts);
        }
        atomic_fetch_add_explicit(&wakes, 1, memory_order_relaxed);
    }
    return NULL;
}

size_t hl_ticker_wakes(void) { return atomic_load_explicit(&wakes, memory_order_relaxed); }

/* The condition variable waits on the clock the dues are read from (the coarse one is the
 * same clock, read at a lower resolution). */
static void thread_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&rest, NULL);
    atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
    struct timespec res;
    step = clock_getres(CLOCK_MONOTONIC_COARSE, &res) ? 4000000u
         : (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
}

/* hl_ticker_poll, on a malloc slow path holding no lock of the library: once. pthread_create's
 * own allocations come back here and find the state STARTING. */
void hl_ticker_start(void)
{
    int none = HL_TICKER_NONE;
    if (!atomic_compare_exchange_strong(&hl_ticker_state, &none, HL_TICKER_STARTING))
        return;
    if (!hl_cfg.purge_thread || !njobs) {
        atomic_store(&hl_ticker_state, HL_TICKER_UNUSED);
        return;
    }
    thread_init();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread starts with every signal blocked */
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&t, &a, thread_main, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* Refused (EAGAIN: a thread limit): the slow paths' ticks go on alone. */
    atomic_store(&hl_ticker_state, err ? HL_TICKER_FAILED : HL_TICKER_RUNNING);
    if (err && hl_cfg.verbose)
        hl_say("purge_thread: no thread (error %d): purges on slow paths", err);
}

void hl_ticker_fork(int phase)
{
    if (phase == HL_FORK_PREPARE) {
        /* a thread being started: until it runs its own code (`entered`) */
        for (int st; ((st = atomic_load(&hl_ticker_state)) == HL_TICKER_STARTING ||
                      st == HL_TICKER_RUNNING) && !atomic_load(&entered); )
            sched_yield();
    } else if (phase == HL_FORK_CHILD) {
        atomic_store_explicit(&entered, false, memory_order_relaxed);
        /* The thread did not come along: the child's first malloc slow path starts its own. */
        if (atomic_load_explicit(&hl_ticker_state, memory_order_relaxed) == HL_TICKER_RUNNING)
            atomic_store_explicit(&hl_ticker_state, HL_TICKER_NONE, memory_order_relaxed);
        atomic_store_explicit(&resting_until, 0, memory_order_relaxed);
    }
}
