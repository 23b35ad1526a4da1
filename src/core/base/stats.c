/* stats.c — the statistics of include/hoardlab.h: sums of per-thread counters (live threads
 * through the registry, exited ones folded into `retired`), U and A, and the JSON object
 * HOARD_STATS writes at exit.
 *
 * U (bytes in use) changes on every call, so a shared counter would put one contended cache
 * line on every fast path. Each thread instead accumulates its change and publishes it when it
 * reaches stats_batch bytes; the peak is taken at publication, so it is exact to within
 * (threads x stats_batch) bytes, and exact with stats_batch = 0. Under a TLAB, what the bins
 * hold unseen too (tlab.h's Accounting: hl_stats_unseen_fn). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base.h"

int64_t (*hl_stats_unseen_fn)(bool mine);
long (*hl_stats_huge_fn)(void);
_Atomic size_t hl_stats_large_cached;
_Atomic size_t hl_stats_holes;
static struct hl_counters retired;                 /* under the registry lock */
static _Atomic int64_t in_use_published;
static _Atomic int64_t in_use_peak;

static void publish(int64_t delta)
{
    int64_t now = atomic_fetch_add(&in_use_published, delta) + delta;
    int64_t peak = atomic_load_explicit(&in_use_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&in_use_peak, &peak, now)) { }
}

#define LOAD(c) __atomic_load_n(&(c), __ATOMIC_RELAXED)

/* What a thread spent of a credit since it last renewed it (stats.h): stats_batch less what
 * is left, which is below zero when the last block overdrew it. */
static int64_t spent(int64_t credit) { return (int64_t)hl_cfg.stats_batch - credit; }

/* The unpublished change of t's in-use bytes. */
static int64_t unpublished(struct hl_thread *t)
{
    return spent(LOAD(t->ctr.malloc_credit)) - spent(LOAD(t->ctr.free_credit));
}

static void thread_start(struct hl_thread *t)
{
    __atomic_store_n(&t->ctr.malloc_credit, (int64_t)hl_cfg.stats_batch, __ATOMIC_RELAXED);
    __atomic_store_n(&t->ctr.free_credit, (int64_t)hl_cfg.stats_batch, __ATOMIC_RELAXED);
}

void *hl_stats_publish(void *p, bool freed)
{
    int64_t *credit = freed ? &hl_me.ctr.free_credit : &hl_me.ctr.malloc_credit;
    int64_t bytes = spent(*credit);
    __atomic_store_n(credit, (int64_t)hl_cfg.stats_batch, __ATOMIC_RELAXED);
    /* With it, what the thread's TLAB bins hold unseen (a bin the thread no longer uses would
     * otherwise keep its last moves out of the peak for good). */
    publish((freed ? -bytes : bytes) + (hl_stats_unseen_fn ? hl_stats_unseen_fn(true) : 0));
    return p;
}

void *hl_release_count_slow(hl_lock *l, void *p, bool publish_due, bool freed)
{
    hl_lock_release(l);
    return publish_due ? hl_stats_publish(p, freed) : p;
}


static void add_counters(struct hl_counters *to, const struct hl_counters *from)
{
#define HL_ADD(name, from_, across, help)                                                    \
    HL_IF_COUNTER(from_, __atomic_store_n(&to->name, LOAD(to->name) + LOAD(from->name),      \
                                          __ATOMIC_RELAXED);)
    HOARDLAB_STATS(HL_ADD)
#undef HL_ADD
}

static void fold(struct hl_thread *t)
{
    add_counters(&retired, &t->ctr);
    publish(unpublished(t));
    memset(&t->ctr, 0, sizeof t->ctr);
    thread_start(t);
}

/* HOARD_STATS=stderr writes to a copy of stderr taken at init: coreutils (sort, ls, ...) close
 * stderr at exit, before the library's destructor writes the report. Close-on-exec, and
 * numbered from 100 up, out of the way of the low descriptors programs count on. */
static int stats_fd = -1;

void hl_stats_init(void)
{
    hl_thread_start_hook = thread_start;
    hl_thread_fold_hook = fold;
    if (hl_cfg.stats && !strcmp(hl_cfg.stats, "stderr"))
        stats_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100);
}

struct sum { struct hl_counters c; int64_t unpublished; };

static void sum_thread(struct hl_thread *t, void *arg)
{
    struct sum *s = arg;
    add_counters(&s->c, &t->ctr);
    s->unpublished += unpublished(t);
}

void hl_stats_sum(struct hoardlab_stats *out)
{
    struct sum s = { 0 };
    memset(out, 0, sizeof *out);
    hl_thread_foreach(sum_thread, &s);          /* holds the registry lock: retired is stable */
    add_counters(&s.c, &retired);
#define HL_COPY(name, from, across, help) HL_IF_COUNTER(from, out->name = LOAD(s.c.name);)
    HOARDLAB_STATS(HL_COPY)
#undef HL_COPY
    if (hl_stats_unseen_fn) s.unpublished += hl_stats_unseen_fn(false);
    int64_t in_use = atomic_load(&in_use_published) + s.unpublished, peak = atomic_load(&in_use_peak);
    out->in_use = in_use > 0 ? (uint64_t)in_use : 0;
    out->in_use_peak = (uint64_t)(peak > in_use ? peak : in_use);
    out->os_bytes = hl_os_bytes();
    out->os_bytes_peak = hl_os_bytes_peak();
    out->held_bytes = hl_os_held();
    out->held_bytes_peak = hl_os_held_peak();
    out->meta_bytes = hl_os_meta();
    out->large_cached_bytes = atomic_load_explicit(&hl_stats_large_cached,
                                                   memory_order_relaxed);
    out->threads = hl_thread_count();
    out->huge_regions = hl_stats_huge_fn ? (uint64_t)hl_stats_huge_fn() : 0;
    if (hl_active->stats) hl_active->stats(out);
    out->hole_purged_bytes = atomic_load_explicit(&hl_stats_holes, memory_order_relaxed);
    out->purged_bytes += out->hole_purged_bytes;    /* purged: whole superblocks and holes */
    out->counting = (uint64_t)hl_cfg.counting;
    if (!hl_cfg.counting) {             /* the slow paths' part of a count would mislead */
#define HL_UNCOUNTED(name, from, across, help) HL_IF_COUNTER(from, out->name = 0;)
        HOARDLAB_STATS(HL_UNCOUNTED)
#undef HL_UNCOUNTED
        out->in_use = out->in_use_peak = 0;
    }
}

void hl_stats_reset_peaks(void)
{
    if (hl_stats_unseen_fn) publish(hl_stats_unseen_fn(true));
    atomic_store(&in_use_peak, atomic_load(&in_use_published));
    hl_os_reset_peak();
}

int64_t hl_stats_in_use_published(void)
{
    return atomic_load_explicit(&in_use_published, memory_order_relaxed);
}

/* HOARD_STATS=stderr|path: one JSON object per process on a line of its own, with its pid,
 * appended (JSON lines: a program that starts others leaves a line per process). */
void hl_stats_at_exit(void)
{
    if (!hl_cfg.stats || !*hl_cfg.stats || !strcmp(hl_cfg.stats, "off")) return;
    struct hoardlab_stats st;
    char buf[4096];
    size_t n = 0;
    hl_stats_sum(&st);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "{\"strategy\": \"%s\", \"pid\": %d",
                          hl_active->name, (int)getpid());
#define HL_JSON(name, from, across, help) \
    n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, ", \"%s\": %llu", \
                          #name, (unsigned long long)st.name);
    HOARDLAB_STATS(HL_JSON)
#undef HL_JSON
    n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "}\n");
    if (n >= sizeof buf) n = sizeof buf - 1;
    int fd = strcmp(hl_cfg.stats, "stderr")
                 ? open(hl_cfg.stats, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                 : stats_fd >= 0 ? stats_fd : STDERR_FILENO;
    if (fd < 0) { hl_say("HOARD_STATS: cannot open %s", hl_cfg.stats); return; }
    if (write(fd, buf, n) < 0) { /* nothing more to do at exit */ }
    if (fd != STDERR_FILENO && fd != stats_fd) close(fd);
}
