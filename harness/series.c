/* series.c — memory over time: a sampler thread records, from hb_begin() to hb_end(), at
 * t = 0, i, 2i, ... (i = --sample-interval, default 10 ms) one row of
 *   t_s, held_bytes (A), in_use_bytes (U), self_bytes (libhoardlab's own structures,
 *   meta_bytes), rss_kb, private_dirty_kb, lazyfree_kb, anonymous_kb, anon_huge_kb
 * the first three from hoardlab_stats() (unknown without libhoardlab), the rest from
 * /proc/self/smaps_rollup (Rss, Private_Dirty, LazyFree, Anonymous, AnonHugePages). hb_begin() reads the
 * row of t = 0 itself, just before the phase starts (so every run has it, however late the
 * sampler is woken), and hb_end() adds a last row at the end of the phase, off the grid.
 *
 * A run's length is not known in advance, so the rows are kept in a fixed buffer of
 * SER_CAP: when it fills, every other row is dropped (those at odd multiples of the
 * interval) and the interval doubles. A run of any length longer than 128 intervals thus
 * keeps between 128 and 256 rows (plus the last) at a uniform spacing, the record's
 * `interval_s`; a shorter run keeps one row per interval.
 *
 * Not perturbing the run: the thread is created once, before the first run, and waits on a
 * condition variable between runs; the rows are a static array and smaps_rollup is read with
 * open/read into a stack buffer, so the sampler never calls the allocator under test.
 * Blocking every signal in it keeps the workloads' signals for their own threads. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sample.h"

enum { SER_CAP = 256 };

static double ser_first_interval, ser_interval, ser_t0;
static struct hb_series_row ser_rows[SER_CAP + 1];      /* + the last row */
static long long ser_grid[SER_CAP];                       /* row k at ser_grid[k] intervals */
static int ser_n;
static unsigned ser_gen;                                  /* advanced at begin and at end */
static bool ser_running, ser_busy;
static pthread_mutex_t ser_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ser_wake, ser_idle;

/* The smaps_rollup fields, by name, into v[HB_SER_RSS..]; -1 when the file or a field is
 * missing (LazyFree appeared in Linux 4.12). */
static void read_rollup(long long *v)
{
    static const char *const field[] = { "Rss:", "Private_Dirty:", "LazyFree:", "Anonymous:",
                                         "AnonHugePages:" };
    char buf[4096];
    for (int k = 0; k < 5; k++) v[HB_SER_RSS + k] = -1;
    int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : 0)
        for (int k = 0; k < 5; k++)
            if (!strncmp(line, field[k], strlen(field[k])))
                v[HB_SER_RSS + k] = strtoll(line + strlen(field[k]), NULL, 10);
}

void hb_series_read(struct hb_series_row *row)
{
    struct hoardlab_stats s;
    row->t_s = hb_now();
    if (hb_hoardlab_stats(&s)) {
        row->v[HB_SER_HELD] = (long long)s.held_bytes;
        row->v[HB_SER_IN_USE] = s.counting ? (long long)s.in_use : -1;   /* not counted */
        row->v[HB_SER_SELF] = (long long)s.meta_bytes;
    } else {
        row->v[HB_SER_HELD] = row->v[HB_SER_IN_USE] = row->v[HB_SER_SELF] = -1;
    }
    read_rollup(row->v);
}

static void take(struct hb_series_row *row)
{
    hb_series_read(row);
    row->t_s -= ser_t0;
}

/* Keep the rows on even grid points; the interval doubles. */
static void thin(void)
{
    int kept = 0;
    for (int k = 0; k < ser_n; k++)
        if (ser_grid[k] % 2 == 0) {
            ser_rows[kept] = ser_rows[k];
            ser_grid[kept++] = ser_grid[k] / 2;
        }
    ser_n = kept;
    ser_interval *= 2;
}

static void deadline(struct timespec *ts, double t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double d = t - hb_now();
    if (d < 0) d = 0;
    long long ns = now.tv_nsec + (long long)(d * 1e9);
    ts->tv_sec = now.tv_sec + ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

static void *sampler(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&ser_lock);
    for (;;) {
        while (!ser_running) pthread_cond_wait(&ser_wake, &ser_lock);
        unsigned gen = ser_gen;
        /* the next grid point after the last row; when that has passed (the sampler was
         * late), the latest grid point passed, taken at once */
        long long k = ser_n ? ser_grid[ser_n - 1] + 1 : 0, passed;
        passed = (long long)((hb_now() - ser_t0) / ser_interval);
        if (passed > k) k = passed;
        struct timespec ts;
        deadline(&ts, ser_t0 + (double)k * ser_interval);
        if (pthread_cond_timedwait(&ser_wake, &ser_lock, &ts) == 0 || gen != ser_gen) continue;
        ser_busy = true;
        pthread_mutex_unlock(&ser_lock);
        struct hb_series_row row;
        take(&row);
        pthread_mutex_lock(&ser_lock);
        ser_busy = false;
        pthread_cond_broadcast(&ser_idle);
        if (gen != ser_gen || !ser_running) continue;           /* the run ended meanwhile */
        ser_rows[ser_n] = row;
        ser_grid[ser_n++] = k;
        if (ser_n == SER_CAP) thin();
    }
    return NULL;
}

void hb_series_init(double interval_s)
{
    ser_first_interval = interval_s;
    if (interval_s <= 0) return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ser_wake, &ca);
    pthread_cond_init(&ser_idle, NULL);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int e = pthread_create(&t, NULL, sampler, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) hb_fail("pthread_create (the memory sampler): %s", strerror(e));
    pthread_detach(t);
}

/* Stop the sampler and wait until it is not taking a row. */
static void stop_sampler(void)
{
    pthread_mutex_lock(&ser_lock);
    ser_gen++;
    ser_running = false;
    pthread_cond_broadcast(&ser_wake);
    while (ser_busy) pthread_cond_wait(&ser_idle, &ser_lock);
    pthread_mutex_unlock(&ser_lock);
}

void hb_series_begin(void)
{
    if (ser_first_interval <= 0) return;
    stop_sampler();
    ser_t0 = hb_now();
    take(&ser_rows[0]);
    ser_rows[0].t_s = 0;
}

void hb_series_start(double t0)
{
    if (ser_first_interval <= 0) return;
    pthread_mutex_lock(&ser_lock);
    ser_gen++;
    ser_t0 = t0;
    ser_interval = ser_first_interval;
    ser_grid[0] = 0;
    ser_n = 1;
    ser_running = true;
    pthread_cond_broadcast(&ser_wake);
    pthread_mutex_unlock(&ser_lock);
}

void hb_series_end(double t1)
{
    if (ser_first_interval <= 0) return;
    stop_sampler();
    /* The caller read t1 before the sampler stopped, so a row it took in between lies past
     * the phase's end: drop it, and the last row stays the last in time. */
    while (ser_n > 1 && ser_rows[ser_n - 1].t_s > t1 - ser_t0) ser_n--;
    take(&ser_rows[ser_n]);
    ser_rows[ser_n].t_s = t1 - ser_t0;              /* read just after: the phase's end */
}

int hb_series_rows(const struct hb_series_row **rows)
{
    *rows = ser_rows;
    return ser_first_interval > 0 ? ser_n + 1 : 0;
}

void hb_series_record(struct hb_json *j)
{
    static const char *const column[] = { "t_s", "held_bytes", "in_use_bytes", "self_bytes",
                                          "rss_kb", "private_dirty_kb", "lazyfree_kb",
                                          "anonymous_kb", "anon_huge_kb" };
    if (ser_first_interval <= 0) return;
    hb_json_obj(j, "series");
    hb_json_real(j, "interval_s", ser_interval);
    hb_json_arr(j, "columns");
    for (size_t k = 0; k < sizeof column / sizeof column[0]; k++) hb_json_str(j, NULL, column[k]);
    hb_json_end(j, ']');
    hb_json_arr(j, "rows");
    for (int k = 0; k <= ser_n; k++) {
        hb_json_arr(j, NULL);
        hb_json_real(j, NULL, ser_rows[k].t_s);
        for (int c = 0; c < HB_SER_VALUES; c++) {
            if (ser_rows[k].v[c] < 0) hb_json_null(j, NULL);
            else hb_json_int(j, NULL, ser_rows[k].v[c]);
        }
        hb_json_end(j, ']');
    }
    hb_json_end(j, ']');
    hb_json_end(j, '}');
}
