/* stall.c — preemption tolerance (issue 11): T threads replace blocks of a small live set
 * (one free and one malloc a step) while thread 0, the victim, is stopped again and again for
 * `delay_us` inside malloc or free, possibly holding a lock; the measure is what that costs
 * the OTHER threads.
 *
 * The measured phase cycles through three modes in slices (`slices` of each, U O D U O D ...,
 * `seconds` in each mode in all) in one process, so machine noise hits every mode alike:
 *   undelayed  the victim runs like the others;
 *   outside    the victim pauses for `delay_us` as often as in `delayed`, but at the top of
 *              its loop, outside malloc/free: the control, since a paused victim also stops
 *              competing for cores, caches and locks, which speeds the others up;
 *   delayed    a signal handler sleeps `delay_us` when the signal found the victim inside
 *              malloc or free (`where` = inside; a signal that lands elsewhere returns at once
 *              and the next comes 0..20 us later), or wherever it landed (`anywhere`).
 * The signals come from a timer of the victim's own (timer_create, SIGEV_THREAD_ID, SIGUSR1),
 * re-armed after each pause for a random gap (uniform in 0..2 x `interval_us`, seeded), so no
 * other thread polls or competes for a core. A controller thread (beside the T workers) only
 * switches the mode. Every worker counts its operations under the mode in force.
 *
 * `ratio` = the other threads' throughput delayed / undelayed; `ratio_outside` = delayed /
 * outside isolates where the pause lands: about 1 for an allocator whose threads never wait
 * for each other, below 1 when they wait for a lock the sleeping victim holds. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../hlbench.h"

const struct hb_param hb_stall_params[] = {
    { "seconds",     HB_REAL, "4",      true,  "seconds in each of the three modes, in all" },
    { "slices",      HB_INT,  "4",      false, "slices of each mode (undelayed, outside, "
                                               "delayed, in turn)" },
    { "delay_us",    HB_INT,  "1000",   false, "microseconds a pause of the victim lasts" },
    { "interval_us", HB_INT,  "1000",   false, "mean microseconds between pauses (uniform "
                                               "0..2x)" },
    { "where",       HB_STR,  "inside", false, "inside: only a signal that finds the victim "
                                               "in malloc/free delays it (others are "
                                               "repeated); anywhere: every signal does" },
    { "slots",       HB_INT,  "16",     false, "live blocks per thread" },
    { "min_size",    HB_INT,  "8",      false, "smallest block, bytes" },
    { "max_size",    HB_INT,  "256",    false, "largest block, bytes" },
    { NULL, 0, NULL, false, NULL },
};

enum { UNDELAYED, OUTSIDE, DELAYED, MODES };

struct stall {
    _Atomic int mode, stop, ready;
    unsigned long long (*ops)[MODES];   /* per thread, per mode: mallocs + frees */
    struct hb_hist (*lat)[MODES][2];    /* per thread, per mode: timed mallocs, frees */
    double seconds[MODES];              /* time spent in each mode, by the controller */
};

/* The victim's handler state: a signal carries no argument, so these are the workload's
 * statics; only the victim thread touches the non-atomic ones. */
static _Atomic int *stall_mode;
static long long stall_delay_ns, stall_interval_us;
static bool stall_inside_only;
static timer_t stall_timer;
static struct hb_rng stall_gaps;
static volatile sig_atomic_t in_allocator, pause_due;
static _Atomic unsigned long long stall_signals, stall_delays, stall_inside, stall_outside,
                                  stall_pauses;

static void sleep_ns(long long ns)
{
    struct timespec ts = { ns / 1000000000, ns % 1000000000 };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

/* The next signal in `us` microseconds (0: none). timer_settime is async-signal-safe. */
static void arm(long long us)
{
    struct itimerspec it = { { 0, 0 }, { us / 1000000, (us % 1000000) * 1000 } };
    timer_settime(stall_timer, 0, &it, NULL);
}

static void arm_gap(void)
{
    arm(1 + (long long)hb_range(&stall_gaps, 0, 2 * (uint64_t)stall_interval_us));
}

static void stall_handler(int sig)
{
    (void)sig;
    int saved = errno, mode = atomic_load(stall_mode);
    bool inside = in_allocator;
    if (mode == UNDELAYED) {            /* a signal left over from the previous slice */
        errno = saved;
        return;
    }
    atomic_fetch_add_explicit(&stall_signals, 1, memory_order_relaxed);
    if (mode == OUTSIDE) {
        pause_due = 1;                  /* the victim pauses at the top of its loop */
    } else {
        atomic_fetch_add_explicit(inside ? &stall_inside : &stall_outside, 1,
                                  memory_order_relaxed);
        if (inside || !stall_inside_only) {
            atomic_fetch_add_explicit(&stall_delays, 1, memory_order_relaxed);
            sleep_ns(stall_delay_ns);
            arm_gap();
        } else {
            arm(1 + (long long)hb_range(&stall_gaps, 0, 20));   /* try again soon */
        }
    }
    errno = saved;
}

static void *tracked_malloc(size_t n)
{
    in_allocator = 1;
    atomic_signal_fence(memory_order_seq_cst);
    void *p = hb_malloc(n);
    atomic_signal_fence(memory_order_seq_cst);
    in_allocator = 0;
    if (!p) hb_fail("malloc(%zu) returned NULL", n);
    return p;
}

static void tracked_free(void *p)
{
    in_allocator = 1;
    atomic_signal_fence(memory_order_seq_cst);
    hb_free(p);
    atomic_signal_fence(memory_order_seq_cst);
    in_allocator = 0;
}

static void worker(struct hb_run *r, struct stall *S, int i)
{
    long long n = hb_int(r, "slots");
    uint64_t lo = (uint64_t)hb_int(r, "min_size"), hi = (uint64_t)hb_int(r, "max_size");
    uint64_t salt = hb_mix(r->seed * 1000003u + (uint64_t)i);
    unsigned long long ops[MODES] = { 0 };
    struct hb_rng g;
    hb_rng_seed(&g, r->seed, (uint64_t)i);
    struct hb_block *live = hb_live_set(&g, n, lo, hi, salt);
    if (i == 0) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGUSR1;
        ev._sigev_un._tid = gettid();
        if (timer_create(CLOCK_MONOTONIC, &ev, &stall_timer))
            hb_fail("timer_create: %s", strerror(errno));
    }
    atomic_fetch_add(&S->ready, 1);
    int last = -1;
    while (!atomic_load_explicit(&S->stop, memory_order_relaxed)) {
        int mode = atomic_load_explicit(&S->mode, memory_order_relaxed);
        if (i == 0 && mode != last) {   /* the victim starts or stops its timer */
            last = mode;
            pause_due = 0;
            if (mode == UNDELAYED) arm(0);
            else arm_gap();
        }
        if (i > 0 && mode != last) {    /* the others' timed calls go to the mode's histograms */
            last = mode;
            hb_lat_divert(S->lat[i][mode]);
        }
        if (i == 0 && pause_due) {      /* the control: a pause out here */
            pause_due = 0;
            atomic_fetch_add_explicit(&stall_pauses, 1, memory_order_relaxed);
            sleep_ns(stall_delay_ns);
            arm_gap();
        }
        long long k = (long long)(hb_rand(&g) % (uint64_t)n);
        hb_check(live[k].p, live[k].n, salt);
        tracked_free(live[k].p);
        live[k].n = (size_t)hb_range(&g, lo, hi);
        live[k].p = tracked_malloc(live[k].n);
        hb_stamp(live[k].p, live[k].n, salt);
        ops[mode] += 2;
    }
    if (i == 0) timer_delete(stall_timer);
    hb_lat_divert(NULL);
    for (long long k = 0; k < n; k++) hb_release(live[k].p, live[k].n, salt);
    free(live);
    memcpy(S->ops[i], ops, sizeof ops);
}

static void controller(struct hb_run *r, struct stall *S)
{
    long long slices = hb_int(r, "slices");
    double slice = hb_real(r, "seconds") / (double)slices;
    while (atomic_load(&S->ready) < r->threads) sleep_ns(100000);
    for (long long s = 0; s < MODES * slices; s++) {
        int mode = (int)(s % MODES);
        double t0 = hb_now();
        atomic_store(&S->mode, mode);
        sleep_ns((long long)(slice * 1e9));
        S->seconds[mode] += hb_now() - t0;
    }
    atomic_store(&S->stop, 1);
}

static void stall_thread(struct hb_run *r, int i, void *arg)
{
    if (i < r->threads) worker(r, arg, i);
    else controller(r, arg);
}

int hb_stall(struct hb_run *r)
{
    if (hb_int(r, "min_size") < 1 || hb_int(r, "max_size") < hb_int(r, "min_size") ||
        hb_int(r, "slots") < 1 || hb_int(r, "slices") < 1 || hb_real(r, "seconds") <= 0 ||
        hb_int(r, "interval_us") < 1)
        hb_usage("stall needs 1 <= min_size <= max_size, slots >= 1, slices >= 1, seconds > 0, "
                 "interval_us >= 1");
    const char *where = hb_str(r, "where");
    if (strcmp(where, "inside") && strcmp(where, "anywhere"))
        hb_usage("bad --where '%s': inside or anywhere", where);
    struct stall S = { .ops = calloc((size_t)r->threads, sizeof *S.ops),
                       .lat = calloc((size_t)r->threads, sizeof *S.lat) };
    if (!S.ops || !S.lat) hb_fail("out of memory");
    stall_mode = &S.mode;
    stall_inside_only = !strcmp(where, "inside");
    stall_delay_ns = hb_int(r, "delay_us") * 1000;
    stall_interval_us = hb_int(r, "interval_us");
    hb_rng_seed(&stall_gaps, r->seed, 0x57a11);
    atomic_store(&stall_signals, 0);
    atomic_store(&stall_delays, 0);
    atomic_store(&stall_inside, 0);
    atomic_store(&stall_outside, 0);
    atomic_store(&stall_pauses, 0);
    struct sigaction old;
    hb_on_sigusr1(stall_handler, &old);
    hb_begin(r);
    hb_parallel(r, r->threads + 1, stall_thread, &S);
    hb_end(r);
    sigaction(SIGUSR1, &old, NULL);

    static const char *const name[MODES] = { "undelayed", "outside", "delayed" };
    unsigned long long others[MODES] = { 0 }, all = 0;
    double tp[MODES], victim[MODES];
    char key[64];
    for (int m = 0; m < MODES; m++) {
        for (int i = 1; i < r->threads; i++) others[m] += S.ops[i][m];
        all += others[m];
        tp[m] = S.seconds[m] > 0 ? (double)others[m] / S.seconds[m] : 0;
        victim[m] = S.seconds[m] > 0 ? (double)S.ops[0][m] / S.seconds[m] : 0;
    }
    atomic_store(&r->ops, all);
    for (int m = 0; m < MODES; m++) {
        snprintf(key, sizeof key, "throughput_%s", name[m]);
        hb_json_real(r->extra, key, tp[m]);
    }
    if (tp[UNDELAYED] > 0) hb_json_real(r->extra, "ratio", tp[DELAYED] / tp[UNDELAYED]);
    else hb_json_null(r->extra, "ratio");
    if (tp[OUTSIDE] > 0) hb_json_real(r->extra, "ratio_outside", tp[DELAYED] / tp[OUTSIDE]);
    else hb_json_null(r->extra, "ratio_outside");
    for (int m = 0; m < MODES; m++) {
        snprintf(key, sizeof key, "%s_s", name[m]);
        hb_json_real(r->extra, key, S.seconds[m]);
    }
    for (int m = 0; m < MODES; m++) {
        snprintf(key, sizeof key, "victim_throughput_%s", name[m]);
        hb_json_real(r->extra, key, victim[m]);
    }
    hb_json_uint(r->extra, "signals", atomic_load(&stall_signals));
    hb_json_uint(r->extra, "pauses_outside", atomic_load(&stall_pauses));
    hb_json_uint(r->extra, "delays", atomic_load(&stall_delays));
    hb_json_uint(r->extra, "signals_inside", atomic_load(&stall_inside));
    hb_json_uint(r->extra, "signals_outside", atomic_load(&stall_outside));
    /* The other threads' latency in each mode, from the calls hb_malloc/hb_free timed. */
    for (int m = 0; m < MODES; m++) {
        struct hb_hist all[2];
        hb_hist_clear(&all[0]);
        hb_hist_clear(&all[1]);
        for (int i = 1; i < r->threads; i++)
            for (int k = 0; k < 2; k++) hb_hist_merge(&all[k], &S.lat[i][m][k]);
        snprintf(key, sizeof key, "latency_%s", name[m]);
        hb_json_obj(r->extra, key);
        hb_lat_summary(r->extra, "malloc", &all[HB_LAT_MALLOC]);
        hb_lat_summary(r->extra, "free", &all[HB_LAT_FREE]);
        hb_json_end(r->extra, '}');
    }
    free(S.lat);
    free(S.ops);
    return 0;
}
