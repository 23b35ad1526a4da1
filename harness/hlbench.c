/* hlbench.c — the driver, at the top of the harness: the table of workloads, listing and
 * help, the command line, and the loop of --repeat runs (each one record, record.c).
 *
 * The harness only calls malloc/free & co., so one binary measures every hoardlab strategy
 * and any other allocator under LD_PRELOAD; libhoardlab's statistics are found with dlsym. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlbench.h"
#include "topology.h"

const struct hb_workload hb_workloads[] = {
#define HB_ROW(name, fn, min_threads, summary) { name, summary, fn##_params, min_threads, fn },
    HB_WORKLOADS(HB_ROW)
    { NULL, NULL, NULL, 0, NULL },
};

static _Noreturn void usage_error(const char *fmt, const char *a, const char *b)
{
    fputs("hlbench: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs(" (try --help)\n", stderr);
    exit(2);
}

static void set_param(struct hb_run *r, int i, const char *text)
{
    if (!hb_param_set(r, i, text))
        usage_error("bad value '%s' for --%s: expected a non-negative number", text,
                    r->w->params[i].name);
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

    hb_topology_init();
    int cores = hb_topology_cores();
    struct hb_run r = { .w = w, .threads = cores > w->min_threads ? cores : w->min_threads,
                       .seed = 42, .scale = 1.0, .label = "unnamed", .cores = cores,
                       .cache_line = hb_topology_cache_line() };
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
            if (!hb_parse_int(value, &v) || v < w->min_threads || v > 4096)
                usage_error("bad value '%s' for --threads (%s)", value,
                            w->min_threads > 1 ? "this workload needs at least 2" : "1..4096");
            r.threads = (int)v;
        } else if (!strcmp(name, "scale")) {
            if (!hb_parse_real(value, &r.scale) || r.scale <= 0)
                usage_error("bad value '%s' for --scale%s: expected a number > 0", value, "");
        } else if (!strcmp(name, "seed")) {
            if (!hb_parse_int(value, &v)) usage_error("bad value '%s' for --seed%s", value, "");
            r.seed = (uint64_t)v;
        } else if (!strcmp(name, "repeat")) {
            if (!hb_parse_int(value, &repeat) || repeat < 1)
                usage_error("bad value '%s' for --repeat%s: expected a count >= 1", value, "");
        } else if (!strcmp(name, "sample_interval")) {
            if (!hb_parse_real(value, &sample_interval))
                usage_error("bad value '%s' for --sample-interval%s: expected seconds >= 0",
                            value, "");
        } else if (!strcmp(name, "latency_every")) {
            if (!hb_parse_int(value, &latency_every) || latency_every > 1000000000)
                usage_error("bad value '%s' for --latency-every%s: expected 0..1e9", value, "");
        } else if (!strcmp(name, "label")) {
            r.label = value;
        } else if (!strcmp(name, "spawn_first")) {
            if (!hb_parse_int(value, &v) || v > 64)
                usage_error("bad value '%s' for --spawn-first%s: expected 0..64", value, "");
            r.spawn_first = (int)v;
        } else {
            int i = hb_param_index(w, name);
            if (i < 0) usage_error("unknown option --%s for %s", name, w->name);
            set_param(&r, i, value);
        }
    }
    if (r.threads < w->min_threads)
        usage_error("%s needs at least 2 threads (have %s)", w->name, "--threads");
    hb_params_scale(&r);
    hb_lat_init(latency_every);
    hb_series_init(sample_interval);
    hb_spawn_first(r.spawn_first);

    union hb_value given[HB_MAX_PARAMS];
    memcpy(given, r.val, sizeof given);
    for (r.repeat = 0; r.repeat < repeat; r.repeat++) {
        struct hb_json extra;
        memcpy(r.val, given, sizeof given);
        atomic_store(&r.ops, 0);
        hb_json_init(&extra);
        hb_json_obj(&extra, NULL);
        r.extra = &extra;
        hb_peak_rss_reset();
        hb_begin(&r);
        int rc = w->run(&r);
        hb_end(&r);
        hb_json_end(&extra, '}');
        if (rc) return 1;
        hb_record_write(&r, &extra, hb_peak_rss_kb());
        hb_json_free(&extra);
    }
    hb_topology_done();
    return 0;
}
