"""The `hoardlab` command line."""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time

from . import check, common, sweep as sweepmod, runner, tidy, meta as metamod, plots, report
from . import compare as comparemod, cost as costmod, layers as layersmod, nodes, programs
from . import cost_golden
from . import attribute, selftest, slurm, soak as soakmod
from .build import MEASURED_TARGETS, do_build, incremental_build, build_state, install_deps
from .common import REPO, ToolError, build_dir, require, log


# --- build ---------------------------------------------------------------------------------

def build_for(a, bdir, targets=MEASURED_TARGETS):
    return build_state(bdir, targets) if a.no_build else \
        incremental_build(bdir, targets, getattr(a, "jobs", None))


def cmd_build(a):
    do_build(build_dir(a.build_dir), a.jobs)
    return 0


# --- run -------------------------------------------------------------------------------------

def cmd_run(a):
    bdir = build_dir(a.build_dir)
    build_for(a, bdir, MEASURED_TARGETS[:3])
    base, knobs = common.parse_allocator_spec(a.allocator)
    knobs.update(common.parse_key_values(a.knob or [], "--knob"))
    check.allocator(bdir, base, knobs, [n for n, _ in common.hlconfig_strategies(bdir)]
                    if common.allocator_kind(base) == "hoardlab" else [],
                    "-a %s" % a.allocator)
    params = common.parse_key_values(a.param or [], "--param", knobs=False, form="name=value")
    run = {"index": 0, "allocator": base, "variant": a.allocator, "base": base,
           "kind": common.allocator_kind(base), "knobs": knobs, "swept": {},
           "workload_label": a.workload, "workload": a.workload, "params": params,
           "threads": a.threads, "scale": a.scale, "seed": a.seed, "repetition": 0,
           "pin": a.pin, "timeout": a.timeout, "extra_args": a.extra}
    res = runner.run_one(run, bdir)
    if res["status"] != "ok":
        sys.stderr.write(res["error"].rstrip() + "\n")
        log("run %s: %s (exit %s)" % (res["status"], " ".join(res["argv"]), res["exit_code"]))
        return res["exit_code"] or 1
    rows, _ = tidy.rows_for(run, res, "run", 0, bdir)
    if rows[0]["status"] != "ok":
        log("warning: " + rows[0]["error"])
    if a.json:
        for rec in res["records"]:
            print(json.dumps(rec))
        return 0
    for rec in res["records"]:
        hl = rec.get("hoardlab") or {}
        print("%s under %s%s: %d threads, %.3f s, %s ops/s, peak RSS %s KiB" % (
            rec.get("workload"), base, (" " + tidy.knobs_text(knobs)) if knobs else "",
            rec.get("threads", 0), rec.get("wall_s") or 0, report.si(rec.get("throughput")),
            rec.get("peak_rss_kb")))
        if hl:
            print("  A %s MiB, U %s MiB, A/U %s, locks %s (contended %s), remote frees %s, "
                  "census blocks %s" % (report.mib(hl.get("held_bytes_peak")),
                                        report.mib(hl.get("in_use_peak")),
                                        "%.2f" % hl["fragmentation"] if hl.get("fragmentation")
                                        else "–", hl.get("lock_acquisitions"),
                                        hl.get("lock_contended"), hl.get("remote_frees"),
                                        hl.get("census_false_blocks")))
    return 0


# --- sweep -------------------------------------------------------------------------------------

def strategies_or_none(bdir):
    if os.path.exists(common.artifact(bdir, "hlconfig")):
        return [n for n, _ in common.hlconfig_strategies(bdir)]
    return None


def out_dir_for(name, root):
    day = time.strftime("%Y-%m-%d", time.gmtime())
    d = os.path.join(root, "%s-%s" % (day, name))
    if os.path.exists(d):
        d = os.path.join(root, "%s-%s-%s" % (day, time.strftime("%H%M%S", time.gmtime()), name))
    n = 2
    base = d
    while os.path.exists(d):
        d = "%s-%d" % (base, n)
        n += 1
    return d


def validate_sweep(sw, runs, bdir):
    """Fail before the first run on any mistake the build can see (check.py): a strategy,
    knob, value, a knob that acts nowhere under its strategy, a workload or parameter, or a
    missing production library; one line with the file, line and section."""
    if any(r["kind"] == "hoardlab" for r in runs):
        require(bdir, "lib")
    check.sweep(sw, runs, bdir, [n for n, _ in common.hlconfig_strategies(bdir)])


def run_sweep(path, bdir, out=None, root=None, seed=None, quiet=False, dry_run=False,
              build=None):
    """Run the sweep at `path`; returns (report path, runs not ok), or (None, 0) for a dry
    run."""
    sw = sweepmod.load(path, strategies=strategies_or_none(bdir))
    runs = sw.expand()
    if seed is None:
        seed = sw.seed if sw.seed is not None else random.SystemRandom().randrange(1 << 31)
    order = sweepmod.shuffled(runs, seed)
    validate_sweep(sw, runs, bdir)
    if dry_run:
        print("sweep %s: %d runs, shuffle seed %d" % (sw.name, len(runs), seed))
        for i, r in enumerate(order):
            print("%4d  %-28s %-20s t=%-3d rep %d  knobs %s" % (
                i + 1, r["variant"], r["workload_label"], r["threads"], r["repetition"],
                tidy.knobs_text(r["knobs"]) or "-"))
        if sw.cost:
            print("then cost (callgrind): every strategy and the sweep's production allocators")
        return None, 0
    hlbench = require(bdir, "hlbench")
    cost_names = cost_allocators(sw, bdir) if sw.cost else None
    progs = programs.prepare(runs, bdir, quiet)     # setup and glibc's outputs, untimed
    outdir = out or out_dir_for(sw.name, root or os.path.join(REPO, "results"))
    os.makedirs(outdir, exist_ok=True)
    meta = metamod.collect(bdir, sw, {"shuffle_seed": seed, "runs_planned": len(runs),
                                      "build": build})
    if progs:
        meta["programs"] = progs.meta
    metamod.write(os.path.join(outdir, "meta.json"), meta)
    with open(os.path.join(outdir, os.path.basename(path)), "w") as f:
        f.write(sw.text)
    log("sweep %s: %d runs, shuffle seed %d -> %s" % (sw.name, len(runs), seed, outdir))
    prog = runner.Progress(len(order), quiet=quiet)
    prog.plan(order)
    rows, rounds, series = [], [], []
    rec_path = os.path.join(outdir, "records.jsonl")
    t0 = time.time()
    interrupted = False
    try:
        with open(rec_path, "w") as recf:
            for i, run in enumerate(order):
                prog.start(i, run)
                res = runner.run_one(run, bdir, hlbench)
                rr, rd = tidy.rows_for(run, res, sw.name, i, bdir, series)
                rows += rr
                rounds += rd
                prog.finish(run, res["elapsed_s"], rr[0]["status"], rr[0]["error"])
                for rec in res["records"]:
                    recf.write(json.dumps({"index": run["index"], "order": i,
                                           "variant": run["variant"], "record": rec}) + "\n")
                recf.flush()
    except KeyboardInterrupt:
        interrupted = True
        log("\ninterrupted: writing the %d runs done so far" % len(rows))
    finally:
        if progs:
            progs.cleanup()
    prog.close()
    rows.sort(key=lambda r: (r["index"], r["record"]))
    tidy.write_csv(os.path.join(outdir, "runs.csv"), rows, tidy.columns_for(rows, bdir))
    tidy.write_csv(os.path.join(outdir, "rounds.csv"), rounds, tidy.ROUND_COLUMNS)
    tidy.write_series(outdir, series)
    meta["machine"]["loadavg_end"] = metamod.loadavg()
    if cost_names and not interrupted:      # after the timed runs: callgrind disturbs none
        meta["cost"] = run_cost(bdir, cost_names, outdir)
    meta.update(runs_done=len({r["index"] for r in rows}), interrupted=interrupted,
                duration_s=round(time.time() - t0, 1),
                runs_not_ok=sum(1 for r in rows if r["status"] != "ok"))
    metamod.write(os.path.join(outdir, "meta.json"), meta)
    rpath = make_report(outdir)
    bad = meta["runs_not_ok"]
    if bad:
        log("%d of %d runs did not succeed: listed under 'Failed runs' in the report" %
            (bad, len(rows)))
    return rpath, bad + (len(runs) - meta["runs_done"])


def cost_allocators(sw, bdir):
    """`cost = yes`: every compiled-in strategy (the testbed's own overhead, defaults, no
    knobs) and the sweep's production allocators; checked before the first run."""
    costmod.check(bdir, "%s: cost = yes" % sw.path)
    prod = [b for _, b, _ in sw.allocators if common.allocator_kind(b) == "production"]
    return costmod.allocators(bdir, [s for s, _ in common.hlconfig_strategies(bdir)] + prod)[0]


def run_cost(bdir, names, outdir):
    """cost.json beside runs.csv; what meta.json records of it (or why it is missing)."""
    log("cost: callgrind, instructions per malloc+free pair: %s" % ", ".join(names))
    t0 = time.time()
    try:
        results = costmod.run(bdir, names)
    except (ToolError, KeyboardInterrupt) as e:     # the timed runs stand; the report says so
        err = str(e) or "interrupted"
        log("cost: %s" % err)
        return {"error": err}
    costmod.write(results, os.path.join(outdir, "cost.json"))
    return {"file": "cost.json", "allocators": names, "pairs": costmod.PAIRS,
            "cases": [costmod.case_name(*c) for c in costmod.CASES],
            "valgrind": costmod.valgrind_version(), "duration_s": round(time.time() - t0, 1)}


def make_report(outdir, baseline=None):
    rows = tidy.read_csv(os.path.join(outdir, "runs.csv"))
    rp = os.path.join(outdir, "rounds.csv")
    rounds = tidy.read_csv(rp) if os.path.exists(rp) else []
    series = tidy.read_series(outdir)
    meta = metamod.read(os.path.join(outdir, "meta.json"))
    if baseline:
        meta.setdefault("sweep", {})["baseline"] = baseline
    kinds = nodes.kinds(rows)       # allocators are compared only within one kind of node
    if len(kinds) > 1:
        return nodes.report_by_kind(outdir, rows, rounds, meta, kinds, baseline, make_report,
                                    series)
    ncores = report._cores(meta, rows)
    base = (meta.get("sweep") or {}).get("baseline")
    if base and not any(r["variant"] == base for r in rows):
        base = None
    for f in os.listdir(outdir):        # plots of an earlier report: drawn anew below
        if f.endswith(".png") and (f.startswith(("speedup-", "relative-throughput-", "rounds-",
                                                 "series-", "latency-"))
                                   or f == "memory.png"):
            os.remove(os.path.join(outdir, f))
    files, errors = plots.all_plots(rows, rounds, outdir, base, ncores, series)
    for e in errors:
        log("plot: " + e)
    path, _ = report.write(outdir, rows, rounds, meta, files, errors)
    return path


def cmd_sweep(a):
    bdir = build_dir(a.build_dir)
    build = build_for(a, bdir)
    if slurm.options_used(a):
        return slurm.cmd_sweep(a, bdir, build)
    path, bad = run_sweep(a.file, bdir, out=a.out, root=a.results, seed=a.seed,
                          quiet=a.quiet, dry_run=a.dry_run, build=build)
    if path:
        print(path)
    return 1 if bad else 0


def cmd_report(a):
    if not os.path.exists(os.path.join(a.dir, "runs.csv")):
        raise ToolError("%s: no runs.csv" % a.dir)
    print(make_report(a.dir, a.baseline))
    return 0


def cmd_compare(a):
    text, _ = comparemod.run(a.a, a.b, a.allocators, a.metric)
    print(text)
    return 0


def cmd_main(a):
    rc = install_deps()
    if rc != 0:
        raise ToolError("tools/install-deps failed (exit %d); see its messages above" % rc)
    bdir = build_dir(a.build_dir)
    # Only what a sweep runs; `hoardlab build` and `hoardlab test` build everything.
    build = incremental_build(bdir, MEASURED_TARGETS, a.jobs)
    path, bad = run_sweep(os.path.join(REPO, "configs", "sweeps", "taxonomy.ini"), bdir,
                          root=a.results, quiet=a.quiet, build=build)
    print("report: %s" % path)
    return 1 if bad else 0


# --- attribute ------------------------------------------------------------------------------

def cmd_attribute(a):
    """Plan the two paths (attribute.py), run them as a generated sweep, print the tables."""
    bdir = build_dir(a.build_dir)
    if a.from_dir:
        print(attribute.report(a.from_dir, a.metric), end="")
        return 0
    if not a.target:
        raise ToolError("attribute: name a base and a target (or --from DIR)")
    build = build_for(a, bdir)
    strategies = [n for n, _ in common.hlconfig_strategies(bdir)]
    p = attribute.plan(bdir, a.base, a.target, common.split_commas(a.order) if a.order
                       else None, strategies)
    wls = []
    for spec in sum((common.split_commas(w) for w in a.workload or []), []):
        name, settings = common.parse_allocator_spec(spec)
        wls.append((name, name, settings))
    name = "attribute-%s-%s" % tuple(re.sub(r"[^A-Za-z0-9.+-]+", "_", s)
                                     for s in (a.base, a.target))
    text = attribute.sweep_text(p, wls, a.threads, a.repetitions, a.timeout, name)
    if a.dry_run:
        print(attribute.dry_run_text(p))
        if wls:         # the workloads and their parameters, checked as a sweep's are
            sw = sweepmod.Sweep(text, "<attribute>", strategies=strategies)
            validate_sweep(sw, sw.expand(), bdir)
            print("%d runs: %d configurations x %s" % (len(sw.expand()), len(p.configs),
                                                       ", ".join(w[0] for w in wls)))
        return 0
    if not wls:
        raise ToolError("attribute: name the workloads to run with -w (e.g. -w larson:scale="
                        "0.03), or read a finished run with --from DIR")
    outdir = a.out or out_dir_for(name, a.results or os.path.join(REPO, "results"))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "attribute.ini")
    with open(path, "w") as f:
        f.write(text)
    attribute.write_plan(p, outdir)
    _, bad = run_sweep(path, bdir, out=outdir, seed=a.seed, quiet=a.quiet, build=build)
    print(attribute.report(outdir, a.metric), end="")
    print(os.path.join(outdir, "attribution.md"))
    return 1 if bad else 0


# --- cost -----------------------------------------------------------------------------------

def cmd_cost(a):
    bdir = build_dir(a.build_dir)
    build_for(a, bdir)
    if a.golden_update:
        rows = cost_golden.update(bdir, jobs=a.jobs or 2)
        log("wrote %s: %s" % (cost_golden.PATH, ", ".join(rows)))
        return 0
    names = [n.strip() for n in a.allocators.split(",")] if a.allocators else None
    strategies = [n for n, _ in common.hlconfig_strategies(bdir)]
    for n in names or []:               # a strategy's knobs: checked as `run -a` checks them
        base, knobs = common.parse_allocator_spec(n)
        if knobs and base in strategies:
            check.allocator(bdir, base, knobs, strategies, "-a %s" % n)
    results = costmod.run(bdir, names, a.pairs, a.jobs or 2)
    print(costmod.table(results))
    if a.functions:
        print()
        print(costmod.functions_table(results))
    if a.json:
        costmod.write(results, a.json)
        log("wrote %s" % a.json)
    return 0


# --- strategies, config, layers, test ------------------------------------------------------

def cmd_strategies(a):
    bdir = build_dir(a.build_dir)
    print("hoardlab strategies (LD_PRELOAD=%s, HOARD_STRATEGY=name):"
          % common.artifact(bdir, "lib"))
    for name, summary in common.hlconfig_strategies(bdir):
        print("  %-12s %s" % (name, summary))
    print("production allocators (LD_PRELOAD of the library shown):")
    for name in common.PRODUCTION:
        try:
            lib = common.production_library(name)
            print("  %-12s %s" % (name, lib or "no preload (the C library's malloc)"))
        except ToolError as e:
            print("  %-12s MISSING: %s" % (name, e))
    return 0


def cmd_config(a):
    bdir = build_dir(a.build_dir)
    hlconfig = require(bdir, "hlconfig")
    flag = "--json" if a.json else "--effective" if a.effective else \
        "--classes" if a.classes else "--stats" if a.stats else "--list"
    env = None
    if a.allocator:
        base, knobs = common.parse_allocator_spec(a.allocator)
        env = common.allocator_env(base, knobs, bdir)
        env.pop("LD_PRELOAD", None)
    return subprocess.run([hlconfig, flag], env=env).returncode


def cmd_layers(a):
    bdir = build_dir(a.build_dir)
    build_for(a, bdir, layersmod.TARGETS)
    bad, text = layersmod.report(bdir, known=layersmod.NOTHING_KNOWN if a.strict
                                 else layersmod.KNOWN)
    print(text)
    return 1 if bad else 0


def cmd_soak(a):
    bdir = build_dir(a.build_dir)
    build_for(a, bdir, soakmod.TARGETS)
    return soakmod.main(a, bdir)


def cmd_test(a):
    return selftest.main(build_dir(a.build_dir), a.jobs, skip_deps=a.no_deps)


# --- parser --------------------------------------------------------------------------------

def parser():
    p = argparse.ArgumentParser(
        prog="hoardlab", description="hoardlab: build, run, sweep and report on allocator "
        "strategies (see docs/tool.md)")
    p.add_argument("--build-dir", help="build directory (default: $HOARDLAB_BUILD_DIR or "
                   "build/)")
    common_opts = argparse.ArgumentParser(add_help=False)
    common_opts.add_argument("--build-dir", default=argparse.SUPPRESS,
                             help="build directory (default: $HOARDLAB_BUILD_DIR or build/)")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    _add = sub.add_parser

    def add_parser(*args, **kw):
        return _add(*args, parents=[common_opts], **kw)
    sub.add_parser = add_parser

    def add_no_build(s):
        s.add_argument("--no-build", action="store_true",
                       help="do not run the incremental build first: measure the binaries "
                       "as they are (meta.json records whether they were out of date)")
        s.add_argument("--build", action="store_true", help=argparse.SUPPRESS)  # the default

    s = sub.add_parser("build", help="meson setup (if needed) and ninja")
    s.add_argument("-j", "--jobs", type=int)
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("run", help="run one workload under one allocator",
                       description="Run hlbench WORKLOAD once. Extra hlbench options go "
                       "after `--`.")
    s.add_argument("workload")
    s.add_argument("-a", "--allocator", default="hoard",
                   help="strategy or production allocator, with knobs: "
                   "'hoard:heap_select=cpu:tlab=on' (as cost -a), or 'concurrent, padding=on' "
                   "(default hoard)")
    s.add_argument("-k", "--knob", action="append", help="knob override key=value (repeatable)")
    s.add_argument("-p", "--param", action="append",
                   help="workload parameter name=value, passed as --name value")
    s.add_argument("-t", "--threads", type=int, default=1)
    s.add_argument("--scale", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--pin", action="store_true")
    s.add_argument("--timeout", type=float, default=None)
    s.add_argument("--json", action="store_true", help="print hlbench's JSON records")
    add_no_build(s)
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("sweep", help="run a sweep file, write results/<date>-<name>/")
    s.add_argument("file")
    s.add_argument("--out", help="output directory (default results/<date>-<name>)")
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("--seed", type=int, help="shuffle seed (default: the file's, else random)")
    s.add_argument("--dry-run", action="store_true", help="print the runs in order; run nothing")
    add_no_build(s)
    s.add_argument("-j", "--jobs", type=int, help="ninja jobs for the build")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    slurm.add_sweep_options(s)
    s.set_defaults(func=cmd_sweep)
    slurm.add_commands(sub)             # collect, slurm-task

    s = sub.add_parser("report", help="redo plots and report.md of a results directory")
    s.add_argument("dir")
    s.add_argument("--baseline", help="allocator for relative throughput")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("compare", help="B against A per workload and thread count: faster, "
                       "slower or no significant difference (ratio of medians, bootstrap "
                       "interval)")
    s.add_argument("a", metavar="A", help="results folder (runs.csv)")
    s.add_argument("b", metavar="B", nargs="?", help="results folder; omit with --allocators")
    s.add_argument("--allocators", nargs=2, metavar=("X", "Y"),
                   help="compare allocator (variant) Y against X within folder A")
    s.add_argument("--metric", default="throughput",
                   help="a numeric runs.csv column (default throughput; wall_s: lower is "
                   "better)")
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("attribute", help="from a base configuration to a target, one "
                       "element at a time in forward and reverse order: each element's "
                       "contribution per workload, and where the orders disagree "
                       "(interaction)", description="Elements are the keys whose effective "
                       "values differ (hlconfig --effective). See docs/tool.md.")
    s.add_argument("base", nargs="?", help="allocator with knobs, as run -a: hoard, "
                   "hoard:heap_select=cpu")
    s.add_argument("target", nargs="?", help="allocator with knobs: hoard202607, "
                   "hoard:heap_select=home")
    s.add_argument("-w", "--workload", action="append", help="workload[:scale=X][:param="
                   "value...] (repeatable, or comma-separated)")
    s.add_argument("-t", "--threads", default="P", help="thread counts, as a sweep's "
                   "(default P)")
    s.add_argument("-r", "--repetitions", type=int, default=3, help="default 3")
    s.add_argument("--order", help="the forward order: every differing key once, "
                   "comma-separated; key+key makes one element of several keys")
    s.add_argument("--metric", default="throughput", help="a numeric runs.csv column "
                   "(default throughput; e.g. peak_rss_kb, hoardlab.held_bytes_peak)")
    s.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    s.add_argument("--seed", type=int, help="shuffle seed (default random, recorded)")
    s.add_argument("--out", help="output directory (default results/<date>-attribute-...)")
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("--from", dest="from_dir", metavar="DIR", help="print the tables of a "
                   "folder an earlier attribute wrote (e.g. with another --metric); run nothing")
    s.add_argument("--dry-run", action="store_true", help="list the elements and both paths "
                   "(and check the workloads); run nothing")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    add_no_build(s)
    s.set_defaults(func=cmd_attribute)

    s = sub.add_parser("cost", help="instructions per malloc+free pair (callgrind), per "
                       "allocator and case, with the core's share")
    s.add_argument("-a", "--allocators", help="comma-separated (default: every strategy and "
                   "every production allocator present); a strategy may carry knobs: "
                   "hoard:remote_free=list")
    s.add_argument("--pairs", type=int, default=costmod.PAIRS,
                   help="pairs of the shorter run; the longer runs 3x (default %d)"
                   % costmod.PAIRS)
    s.add_argument("--functions", action="store_true",
                   help="also print the per-pair cost of every function and source file")
    s.add_argument("--json", help="write every measurement, per function, to this file")
    add_no_build(s)
    s.add_argument("-j", "--jobs", type=int, help="callgrind runs at once (default 2)")
    s.add_argument("--golden-update", action="store_true", help="measure the rows of "
                   "tests/golden/cost.txt (libhoardlab's reviewed fast-path costs) and rewrite it")
    s.set_defaults(func=cmd_cost)

    s = sub.add_parser("strategies", help="list strategies and production allocators")
    s.set_defaults(func=cmd_strategies)

    s = sub.add_parser("config", help="configuration keys (hlconfig)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--list", action="store_true", help="text table of every key (default)")
    g.add_argument("--json", action="store_true", help="the table as JSON")
    g.add_argument("--effective", action="store_true",
                   help="effective values and their source (with -a)")
    g.add_argument("--classes", action="store_true", help="size classes (with -a)")
    g.add_argument("--stats", action="store_true", help="the statistics: name, from (thread or "
                   "total), across (how processes combine: sum, largest, max), help")
    s.add_argument("-a", "--allocator", help="strategy with knobs: 'hoard, empty_fraction=1/8'")
    s.set_defaults(func=cmd_config)

    s = sub.add_parser("layers", help="check that every file of libhoardlab uses only files "
                       "of its own layer or below and that no files use each other in a loop "
                       "(objects and headers); exit 1 on an upward edge or a loop not known")
    s.add_argument("--strict", action="store_true",
                   help="allow nothing: also fail on the known loops (issue 26's target)")
    add_no_build(s)
    s.set_defaults(func=cmd_layers)

    s = sub.add_parser("test", help="install deps, build, C tests and tool tests; one "
                       "summary line")
    s.add_argument("-j", "--jobs", type=int)
    s.add_argument("--no-deps", action="store_true", help="skip tools/install-deps")
    s.set_defaults(func=cmd_test)

    s = sub.add_parser("soak", help="the integrity stress under every strategy, knob values "
                       "rotated, until the time is up; operations, bytes verified and failures "
                       "per strategy; exit 1 on a failure")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--minutes", type=float, help="how long to soak")
    g.add_argument("--seconds", type=float, help="the same in seconds (short tests)")
    s.add_argument("--threads", type=int, default=4, help="stress threads per run (default 4)")
    s.add_argument("--run-seconds", type=float, default=10.0,
                   help="longest single run (default 10)")
    s.add_argument("--seed", type=int, help="knob rotation and stress seeds (default random, "
                   "printed)")
    s.add_argument("--stress", help="the stress program (default <build>/tests/reliability/"
                   "rel_stress)")
    add_no_build(s)
    s.set_defaults(func=cmd_soak)

    s = sub.add_parser("main", help="install deps, build, run the taxonomy sweep, print the "
                       "report's path")
    s.add_argument("-j", "--jobs", type=int)
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("-q", "--quiet", action="store_true")
    s.set_defaults(func=cmd_main)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:                      # `hoardlab run WORKLOAD ... -- hlbench options`
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    a = parser().parse_args(argv)
    a.extra = extra
    try:
        return a.func(a)
    except ToolError as e:
        log("hoardlab: %s" % e)
        return 2
    except KeyboardInterrupt:
        log("hoardlab: interrupted")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
