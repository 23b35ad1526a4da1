/* record.c — the one JSON record per run: its head (workload, label, strategy, threads, seed,
 * the parameters), the results, libhoardlab's statistics over the measured phase, the
 * workload's extra keys and the samplers' keys; and the per-round objects of the blowup
 * workloads. */
#include <stdio.h>
#include <string.h>
#include "record.h"

/* Levels are reported as they are, every other statistic as its change over the measured
 * phase. A level is one hoardlab_stats() sets whole and the tools do not sum across processes
 * (include/hoardlab.h's from = total, across not sum: a gauge, a peak, the most threads),
 * and remote_pending, which the threads count but which nets to bytes pending now. Reported
 * as a change, a gauge lower at the end than at the start wrapped below 0 (tlab_bytes after
 * xfree read 2^64 - 704). */
static bool is_level(const char *name, const char *from, const char *across)
{
    return (!strcmp(from, "total") && strcmp(across, "sum")) || !strcmp(name, "remote_pending");
}

static void hoardlab_record(struct hb_json *j, const struct hb_run *r)
{
    const struct hoardlab_stats *s = &r->end;
    if (!r->loaded) {
        hb_json_null(j, "hoardlab");
        return;
    }
    hb_json_obj(j, "hoardlab");
#define HB_STAT(name, from, across, help)                                                     \
    if (!s->counting && (!strcmp(#from, "thread") || !strncmp(#name, "in_use", 6)))           \
        hb_json_null(j, #name);                 /* counting = off: not counted */             \
    else                                                                                      \
        hb_json_uint(j, #name, is_level(#name, #from, #across) ? s->name                      \
                                                               : s->name - r->base.name);
    HOARDLAB_STATS(HB_STAT)
#undef HB_STAT
    /* A/U with the policy's A (memory held for blocks, as Hoard's Table 4 counts it), and with
     * all the memory hoardlab took, its own structures included. */
    if (s->in_use_peak) {
        hb_json_real(j, "fragmentation", (double)s->held_bytes_peak / (double)s->in_use_peak);
        hb_json_real(j, "fragmentation_os", (double)s->os_bytes_peak / (double)s->in_use_peak);
    } else {
        hb_json_null(j, "fragmentation");
        hb_json_null(j, "fragmentation_os");
    }
    hb_json_end(j, '}');
}

/* Huge-page coverage at the end of the measured phase (run.c's hb_end, huge.c), under every
 * allocator: AnonHugePages / Rss of the whole process. */
static void huge_record(struct hb_json *j, const struct hb_run *r)
{
    if (r->huge_coverage < 0) hb_json_null(j, "huge_coverage");
    else hb_json_real(j, "huge_coverage", r->huge_coverage);
    if (r->huge_kb < 0) hb_json_null(j, "anon_huge_kb");
    else hb_json_int(j, "anon_huge_kb", r->huge_kb);
}

void hb_record_head(struct hb_json *j, const struct hb_run *r)
{
    hb_json_obj(j, NULL);
    hb_json_int(j, "schema", 1);
    hb_json_str(j, "workload", r->w->name);
    hb_json_str(j, "label", r->label);
    hb_json_str(j, "strategy", hb_hoardlab_strategy());
    hb_json_int(j, "threads", r->threads);
    hb_json_uint(j, "seed", r->seed);
    hb_json_real(j, "scale", r->scale);
    hb_json_int(j, "repeat", r->repeat);
    hb_json_bool(j, "pinned", r->pin);
    hb_json_int(j, "spawn_first", r->spawn_first);
    hb_json_obj(j, "params");
    for (int i = 0; r->w->params[i].name; i++) {
        const struct hb_param *p = &r->w->params[i];
        if (p->kind == HB_INT) hb_json_int(j, p->name, r->val[i].i);
        else if (p->kind == HB_REAL) hb_json_real(j, p->name, r->val[i].d);
        else hb_json_str(j, p->name, r->val[i].s);
    }
    hb_json_end(j, '}');
}

void hb_record_write(const struct hb_run *r, const struct hb_json *extra, long rss)
{
    struct hb_json j;
    hb_json_init(&j);
    hb_record_head(&j, r);
    double wall = r->t1 - r->t0;
    unsigned long long ops = atomic_load(&r->ops);
    hb_json_real(&j, "wall_s", wall);
    hb_json_uint(&j, "ops", ops);
    hb_json_real(&j, "throughput", wall > 0 ? (double)ops / wall : 0.0);
    hb_json_int(&j, "peak_rss_kb", rss);
    hb_json_int(&j, "cache_line", r->cache_line);
    hb_json_int(&j, "cores", r->cores);
    huge_record(&j, r);
    hoardlab_record(&j, r);
    hb_json_raw(&j, "extra", extra->buf);
    hb_lat_record(&j);
    hb_series_record(&j);
    hb_json_end(&j, '}');
    puts(j.buf);
    fflush(stdout);
    hb_json_free(&j);
}

void hb_round_record(struct hb_json *j, int round, size_t live_bytes)
{
    struct hoardlab_stats s;
    hb_json_obj(j, NULL);
    hb_json_int(j, "round", round);
    hb_json_uint(j, "live_bytes", live_bytes);
    if (hb_hoardlab_stats(&s)) hb_json_uint(j, "os_bytes", s.os_bytes);
    else hb_json_null(j, "os_bytes");
    hb_json_int(j, "rss_kb", hb_rss_kb());
    struct hb_series_row row;               /* LazyFree: pages freed with MADV_FREE, in Rss */
    hb_series_read(&row);
    if (row.v[HB_SER_LAZYFREE] >= 0) hb_json_int(j, "lazyfree_kb", row.v[HB_SER_LAZYFREE]);
    else hb_json_null(j, "lazyfree_kb");
    hb_json_end(j, '}');
}

void hb_floor_record(struct hb_json *j)
{
    struct hb_series_row row;
    hb_series_read(&row);
    long long rss = row.v[HB_SER_RSS] >= 0 ? row.v[HB_SER_RSS] : hb_rss_kb();
    long long lazy = row.v[HB_SER_LAZYFREE] > 0 ? row.v[HB_SER_LAZYFREE] : 0;
    hb_json_int(j, "floor_kb", rss - lazy);
}
