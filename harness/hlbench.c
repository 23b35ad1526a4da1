/* hlbench.c — the driver: the workload table, option parsing, hwloc topology and pinning,
 * and the one JSON record per run (the schema is documented in README.md).
 *
 * The harness only calls malloc/free & co., so one binary measures every hoardlab strategy
 * and any other allocator under LD_PRELOAD; libhoardlab's statistics are found with dlsym. */
#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "hlbench.h"

const struct hb_workload hb_workloads[] = {
#define HB_ROW(name, fn, min_threads, summary) { name, summary, fn##_params, min_threads, fn },
    HB_WORKLOADS(HB_ROW)
    { NULL, NULL, NULL, 0, NULL },
};

/* ---- topology and pinning ------------------------------------------------------------------ */

static hwloc_topology_t topo;
static int n_cores = 1, cache_line = 64;

static void topology_init(void)
{
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        fprintf(stderr, "hlbench: hwloc could not load the topology; assuming 1 core\n");
        topo = NULL;
        return;
    }
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n <= 0) n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    n_cores = n > 0 ? n : 1;
    hwloc_obj_t l1 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L1CACHE, 0);
    if (l1 && l1->attr && l1->attr->cache.linesize) cache_line = (int)l1->attr->cache.linesize;
}

void hb_pin_self(const struct hb_run *r, int i)
{
    if (!r->pin || !topo) return;
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(i % n_cores));
    if (!core) core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)(i % n_cores));
    if (!core) return;
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    hwloc_bitmap_singlify(set);
    if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD))
        fprintf(stderr, "hlbench: could not pin thread %d: %s\n", i, strerror(errno));
    hwloc_bitmap_free(set);
}

/* ---- parameters -------------------------------------------------------------------------- */

static int param_index(const struct hb_workload *w, const char *name)
{
    for (int i = 0; w->params[i].name; i++)
        if (!strcmp(w->params[i].name, name)) return i;
    return -1;
}

static const union hb_value *param(const struct hb_run *r, const char *name, enum hb_kind k)
{
    int i = param_index(r->w, name);
    if (i < 0 || r->w->params[i].kind != k) {
        fprintf(stderr, "hlbench: internal error: %s has no parameter %s of that kind\n",
                r->w->name, name);
        abort();
    }
    return &r->val[i];
}

long long hb_int(const struct hb_run *r, const char *name) { return param(r, name, HB_INT)->i; }
double hb_real(const struct hb_run *r, const char *name) { return param(r, name, HB_REAL)->d; }
const char *hb_str(const struct hb_run *r, const char *name) { return param(r, name, HB_STR)->s; }

static _Noreturn void usage_error(const char *fmt, const char *a, const char *b)
{
    fputs("hlbench: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs(" (try --help)\n", stderr);
    exit(2);
}

static bool parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end || v < 0) return false;
    *out = v;
    return true;
}

static bool parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) return false;
    *out = v;
    return true;
}

static void set_param(struct hb_run *r, int i, const char *text)
{
    const struct hb_param *p = &r->w->params[i];
    bool ok = true;
    switch (p->kind) {
    case HB_INT:  ok = parse_int(text, &r->val[i].i); break;
    case HB_REAL: ok = parse_real(text, &r->val[i].d); break;
    case HB_STR:  r->val[i].s = text; break;
    }
    if (!ok) usage_error("bad value '%s' for --%s: expected a non-negative number", text, p->name);
}

/* --scale multiplies the amount of work: scaled parameters, at least 1 (or > 0 for reals). */
static void apply_scale(struct hb_run *r)
{
    for (int i = 0; r->w->params[i].name; i++) {
        if (!r->w->params[i].scaled) continue;
        if (r->w->params[i].kind == HB_INT) {
            long long v = llround((double)r->val[i].i * r->scale);
            r->val[i].i = v < 1 ? 1 : v;
        } else if (r->w->params[i].kind == HB_REAL) {
            r->val[i].d *= r->scale;
        }
    }
}

/* ---- listing and help --------------------------------------------------------------------- */

static const struct hb_workload *find_workload(const char *name)
{
    for (const struct hb_workload *w = hb_workloads; w->name; w++)
        if (!strcmp(w->name, name)) return w;
    return NULL;
}

static void print_defaults(FILE *f, const struct hb_workload *w)
{
    fputs("    defaults:", f);
    for (const struct hb_param *p = w->params; p->name; p++)
        fprintf(f, " --%s %s", p->name, *p->def ? p->def : "''");
    fputc('\n', f);
}

static void list_workloads(void)
{
    for (const struct hb_workload *w = hb_workloads; w->name; w++) {
        printf("%-18s %s\n", w->name, w->summary);
        print_defaults(stdout, w);
    }
}

static const char common_help[] =
    "\ncommon options (in option names '-' and '_' are the same; --name=VALUE works too):\n"
    "  --threads N   threads (default: the cores hwloc finds)\n"
    "  --scale X     multiply the amount of work (parameters marked *); 0.01 = smoke test\n"
    "  --seed S      random seed (default 42), recorded\n"
    "  --pin         pin thread i to core i mod cores (hwloc)\n"
    "  --spawn-first N  before the runs, create and join N threads, one after another, each\n"
    "                doing one malloc/free (default 0; Michael 2004: 1), recorded\n"
    "  --repeat N    run N times, one record each (default 1)\n"
    "  --label TEXT  copied into the record (default \"unnamed\")\n"
    "  --sample-interval S  memory sampling interval in seconds, doubled whenever 256 rows\n"
    "                are kept (default 0.01; 0: no \"series\" in the record)\n"
    "  --latency-every N  time one malloc and one free in N on average (default 64; 0: no\n"
    "                \"latency\" in the record)\n";

static void workload_help(const struct hb_workload *w)
{
    printf("usage: hlbench %s [options]\n%s\n\nworkload options (* = scaled by --scale):\n",
           w->name, w->summary);
    for (const struct hb_param *p = w->params; p->name; p++)
        printf("  --%-16s %s%s (default %s)\n", p->name, p->scaled ? "* " : "", p->help,
               *p->def ? p->def : "''");
    fputs(common_help, stdout);
}

static void main_help(FILE *f)
{
    fputs("usage: hlbench WORKLOAD [options]   one JSON record per run on stdout\n"
          "       hlbench --list               workloads, descriptions and defaults\n"
          "       hlbench WORKLOAD --help      a workload's options\n", f);
    fputs(common_help, f);
}

/* ---- the record ---------------------------------------------------------------------------- */

static long peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");     /* "5" resets VmHWM (Linux >= 4.0) */
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static long peak_rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
        fclose(f);
    }
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = ru.ru_maxrss;
    }
    return kb;
}

/* Levels are reported as they are; every other statistic is a counter, reported as its
 * change over the measured phase. */
static bool is_level(const char *name)
{
    return !strcmp(name, "in_use") || !strcmp(name, "in_use_peak") ||
           !strcmp(name, "os_bytes") || !strcmp(name, "os_bytes_peak") ||
           !strcmp(name, "held_bytes") || !strcmp(name, "held_bytes_peak") ||
           !strcmp(name, "meta_bytes");
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
        hb_json_uint(j, #name, is_level(#name) ? s->name : s->name - r->base.name);
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

static const char *strategy_name(void)
{
    const char *(*fn)(void);
    *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_strategy");
    return fn ? fn() : NULL;
}

void hb_record_head(struct hb_json *j, const struct hb_run *r)
{
    hb_json_obj(j, NULL);
    hb_json_int(j, "schema", 1);
    hb_json_str(j, "workload", r->w->name);
    hb_json_str(j, "label", r->label);
    hb_json_str(j, "strategy", strategy_name());
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

static void write_record(struct hb_run *r, const struct hb_json *extra, long rss)
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
    hoardlab_record(&j, r);
    hb_json_raw(&j, "extra", extra->buf);
    hb_lat_record(&j);
    hb_series_record(&j);
    hb_json_end(&j, '}');
    puts(j.buf);
    fflush(stdout);
    hb_json_free(&j);
}

/* ---- --spawn-first ------------------------------------------------------------------------ */

/* Michael 2004 §4.2.1: allocators that skip synchronisation until the process has created a
 * thread would otherwise time their single-threaded shortcut; one thread created and exited
 * before timing makes a 1-thread run measure contention-free latency under multithreading. */
static void *spawn_first_main(void *arg)
{
    (void)arg;
    void *p = malloc(64);
    if (!p) hb_fail("malloc(64) returned NULL in --spawn-first's thread");
    memset(p, 0, 64);
    free(p);
    return NULL;
}

static void spawn_first(long long n)
{
    for (long long i = 0; i < n; i++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, spawn_first_main, NULL);
        if (e) hb_fail("pthread_create (--spawn-first): %s", strerror(e));
        pthread_join(t, NULL);
    }
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--list")) {
        list_workloads();
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        main_help(stdout);
        return 0;
    }
    const struct hb_workload *w = find_workload(argv[1]);
    if (!w) usage_error("unknown workload '%s'%s; see hlbench --list", argv[1], "");

    topology_init();
    struct hb_run r = { .w = w, .threads = n_cores > w->min_threads ? n_cores : w->min_threads,
                       .seed = 42, .scale = 1.0, .label = "unnamed", .cores = n_cores,
                       .cache_line = cache_line };
    long long repeat = 1, latency_every = 64;
    double sample_interval = 0.01;
    for (int i = 0; w->params[i].name; i++) {
        if (i >= HB_MAX_PARAMS) abort();
        set_param(&r, i, w->params[i].def);
    }
    for (int a = 2; a < argc; a++) {
        char name[64];
        const char *arg = argv[a], *value = NULL, *eq;
        if (strncmp(arg, "--", 2) != 0) usage_error("unexpected argument '%s'%s", arg, "");
        arg += 2;
        size_t n = (eq = strchr(arg, '=')) ? (size_t)(eq - arg) : strlen(arg);
        if (n >= sizeof name) usage_error("unknown option --%s%s", arg, "");
        for (size_t k = 0; k < n; k++) name[k] = arg[k] == '-' ? '_' : arg[k];
        name[n] = 0;
        if (!strcmp(name, "help")) {
            workload_help(w);
            return 0;
        }
        if (!strcmp(name, "pin")) {
            r.pin = true;
            continue;
        }
        if (eq) value = eq + 1;
        else if (a + 1 < argc) value = argv[++a];
        else usage_error("option --%s needs a value%s", name, "");
        long long v;
        if (!strcmp(name, "threads")) {
            if (!parse_int(value, &v) || v < w->min_threads || v > 4096)
                usage_error("bad value '%s' for --threads (%s)", value,
                            w->min_threads > 1 ? "this workload needs at least 2" : "1..4096");
            r.threads = (int)v;
        } else if (!strcmp(name, "scale")) {
            if (!parse_real(value, &r.scale) || r.scale <= 0)
                usage_error("bad value '%s' for --scale%s: expected a number > 0", value, "");
        } else if (!strcmp(name, "seed")) {
            if (!parse_int(value, &v)) usage_error("bad value '%s' for --seed%s", value, "");
            r.seed = (uint64_t)v;
        } else if (!strcmp(name, "repeat")) {
            if (!parse_int(value, &repeat) || repeat < 1)
                usage_error("bad value '%s' for --repeat%s: expected a count >= 1", value, "");
        } else if (!strcmp(name, "sample_interval")) {
            if (!parse_real(value, &sample_interval))
                usage_error("bad value '%s' for --sample-interval%s: expected seconds >= 0",
                            value, "");
        } else if (!strcmp(name, "latency_every")) {
            if (!parse_int(value, &latency_every) || latency_every > 1000000000)
                usage_error("bad value '%s' for --latency-every%s: expected 0..1e9", value, "");
        } else if (!strcmp(name, "label")) {
            r.label = value;
        } else if (!strcmp(name, "spawn_first")) {
            if (!parse_int(value, &v) || v > 64)
                usage_error("bad value '%s' for --spawn-first%s: expected 0..64", value, "");
            r.spawn_first = (int)v;
        } else {
            int i = param_index(w, name);
            if (i < 0) usage_error("unknown option --%s for %s", name, w->name);
            set_param(&r, i, value);
        }
    }
    if (r.threads < w->min_threads)
        usage_error("%s needs at least 2 threads (have %s)", w->name, "--threads");
    apply_scale(&r);
    hb_lat_init(latency_every);
    hb_series_init(sample_interval);
    spawn_first(r.spawn_first);

    union hb_value given[HB_MAX_PARAMS];
    memcpy(given, r.val, sizeof given);
    for (r.repeat = 0; r.repeat < repeat; r.repeat++) {
        struct hb_json extra;
        memcpy(r.val, given, sizeof given);
        atomic_store(&r.ops, 0);
        hb_json_init(&extra);
        hb_json_obj(&extra, NULL);
        r.extra = &extra;
        peak_rss_reset();
        hb_begin(&r);
        int rc = w->run(&r);
        hb_end(&r);
        hb_json_end(&extra, '}');
        if (rc) return 1;
        write_record(&r, &extra, peak_rss_kb());
        hb_json_free(&extra);
    }
    if (topo) hwloc_topology_destroy(topo);
    return 0;
}
