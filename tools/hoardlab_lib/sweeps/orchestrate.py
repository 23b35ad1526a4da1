"""A sweep from its file to its report: check it against the build, run it in its shuffled
order, write runs.csv, rounds.csv, series.csv.xz and meta.json, count instructions (cost =
yes), and make the plots and report.md, one report per kind of node when the runs span
several. The command line (../cli.py) and the Slurm commands (slurm/) both drive it."""
import os
import random
import shutil
import time

from .. import allocators, common, cost as costmod, fmt, programs, report, runkit
from ..build import MEASURED_TARGETS, build_state, incremental_build
from ..common import REPO, ToolError, log, require
from . import calibrate, execute
from .sweepfile import read_sweep, shuffled
from .values import load_policy


def build_for(a, bdir, targets=MEASURED_TARGETS):
    return build_state(bdir, targets) if a.no_build else \
        incremental_build(bdir, targets, getattr(a, "jobs", None))


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
    """Fail before the first run on any mistake the build can see (runkit/check.py): a strategy,
    knob, value, a knob that acts nowhere under its strategy, a workload or parameter, or a
    missing production library; one line with the file, line and section."""
    if any(r["kind"] == "hoardlab" for r in runs):
        require(bdir, "lib")
    runkit.check_sweep(sw, runs, bdir, [n for n, _ in common.hlconfig_strategies(bdir)])


def run_sweep(path, bdir, out=None, root=None, seed=None, quiet=False, dry_run=False,
              build=None, load_options=None):
    """Run the sweep at `path`; returns (report path, runs not ok), or (None, 0) for a dry
    run. load_options: {LOAD_KEYS key: value or None} from the command line, over the
    file's."""
    sw = read_sweep(path, strategies=strategies_or_none(bdir))
    runs = sw.expand()
    if seed is None:
        seed = sw.seed if sw.seed is not None else random.SystemRandom().randrange(1 << 31)
    order = shuffled(runs, seed)
    validate_sweep(sw, runs, bdir)
    policy = load_policy(load_options or {}, lambda k: "--" + k.replace("_", "-"),
                                  sw.load)
    if dry_run:
        print("sweep %s: %d runs, shuffle seed %d" % (sw.name, len(runs), seed))
        for i, r in enumerate(order):
            print("%4d  %-28s %-20s t=%-3d rep %d  knobs %s" % (
                i + 1, r["variant"], r["workload_label"], r["threads"], r["repetition"],
                runkit.knobs_text(r["knobs"]) or "-"))
        if sw.cost:
            print("then cost (callgrind): every strategy and the sweep's production allocators")
        return None, 0
    hlbench = require(bdir, "hlbench")
    cost_names = cost_allocators(sw, bdir) if sw.cost else None
    cal = calibrate.calibrate(sw, runs, bdir, hlbench, log) if sw.calibrate else None
    progs = programs.prepare(runs, bdir, quiet)     # setup and glibc's outputs, untimed
    outdir = out or out_dir_for(sw.name, root or os.path.join(REPO, "results"))
    os.makedirs(outdir, exist_ok=True)
    meta = runkit.collect_meta(bdir, sw, {"shuffle_seed": seed, "runs_planned": len(runs),
                                      "build": build, "calibration": cal})
    if progs:
        meta["programs"] = progs.meta
    runkit.write_meta(os.path.join(outdir, "meta.json"), meta)
    with open(os.path.join(outdir, os.path.basename(path)), "w") as f:
        f.write(sw.text)
    log("sweep %s: %d runs, shuffle seed %d -> %s" % (sw.name, len(runs), seed, outdir))
    prog = execute.Progress(len(order), quiet=quiet)
    prog.plan(order)
    prog.after_s = costmod.estimate_s(cost_names) if cost_names else 0.0
    t0 = time.time()
    try:
        ex, interrupted = execute_runs(sw, runs, order, bdir, hlbench, policy, prog, outdir,
                                       seed)
    finally:
        if progs:
            progs.cleanup()
    prog.close()
    rows = sorted(ex.rows, key=lambda r: (r["index"], r["record"]))
    runkit.write_csv(os.path.join(outdir, "runs.csv"), rows, runkit.columns_for(rows, bdir))
    runkit.write_csv(os.path.join(outdir, "rounds.csv"), ex.rounds, runkit.ROUND_COLUMNS)
    runkit.write_series(outdir, ex.series)
    meta["machine"]["loadavg_end"] = runkit.loadavg()
    meta["load"] = ex.summary()
    if cost_names and not interrupted:      # after the timed runs: callgrind disturbs none
        meta["cost"] = run_cost(bdir, cost_names, outdir)
    meta.update(runs_done=len({r["index"] for r in rows if r["index"] < len(runs)}),
                runs_extra=len({r["index"] for r in rows if r["index"] >= len(runs)}),
                interrupted=interrupted,
                duration_s=round(time.time() - t0, 1),
                runs_not_ok=sum(1 for r in rows if r["status"] != "ok"))
    runkit.write_meta(os.path.join(outdir, "meta.json"), meta)
    rpath = make_report(outdir)
    bad = meta["runs_not_ok"]
    if bad:
        log("%d of %d runs did not succeed: listed under 'Failed runs' in the report" %
            (bad, len(rows)))
    return rpath, bad + (len(runs) - meta["runs_done"])


def execute_runs(sw, runs, order, bdir, hlbench, policy, prog, outdir, seed):
    """The planned runs, then more of the undecided groups (execute.py), records.jsonl
    written as they go; (the Execution, whether ^C stopped it)."""
    with open(os.path.join(outdir, "records.jsonl"), "w") as recf:
        ex = execute.Execution(sw.name, bdir, hlbench, policy, recf, prog, seed)
        try:
            ex.run_planned(order)
            ex.repeat_undecided(runs, sw.ncores)
        except KeyboardInterrupt:
            log("\ninterrupted: writing the %d runs done so far" % len(ex.rows))
            return ex, True
    return ex, False


def cost_allocators(sw, bdir):
    """`cost = yes`: every compiled-in strategy (the testbed's own overhead, defaults, no
    knobs) and the sweep's production allocators; checked before the first run."""
    costmod.check(bdir, "%s: cost = yes" % sw.path)
    prod = [b for _, b, _ in sw.allocators if allocators.allocator_kind(b) == "production"]
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
    rows = runkit.read_csv(os.path.join(outdir, "runs.csv"))
    rp = os.path.join(outdir, "rounds.csv")
    rounds = runkit.read_csv(rp) if runkit.table_file(rp) else []
    series = runkit.read_series(outdir)
    meta = runkit.read_meta(os.path.join(outdir, "meta.json"))
    if baseline:
        meta.setdefault("sweep", {})["baseline"] = baseline
    kinds = runkit.node_kinds(rows)       # allocators are compared only within one kind of node
    if len(kinds) > 1:
        return report_by_kind(outdir, rows, rounds, meta, kinds, baseline, series)
    ncores = fmt.cores_of(meta, rows)
    base = (meta.get("sweep") or {}).get("baseline")
    if base and not any(r["variant"] == base for r in rows):
        base = None
    for f in os.listdir(outdir):        # plots of an earlier report: drawn anew below
        if f.endswith(".png") and (f.startswith(("speedup-", "relative-throughput-", "rounds-",
                                                 "series-", "latency-"))
                                   or f == "memory.png"):
            os.remove(os.path.join(outdir, f))
    files, errors = report.all_plots(rows, rounds, outdir, base, ncores, series)
    for e in errors:
        log("plot: " + e)
    path, _ = report.write(outdir, rows, rounds, meta, files, errors)
    return path


def report_by_kind(outdir, rows, rounds, meta, kinds_, baseline, series=()):
    """A sweep that ran on several kinds of node: runs.csv, rounds.csv, meta.json and a whole
    report per kind in `kind-<n>/` (make_report on each), and report.md an index saying so.
    Returns report.md's path."""
    for f in os.listdir(outdir):        # the folders of an earlier report: written anew
        p = os.path.join(outdir, f)
        if runkit.KIND_DIR.match(f) and os.path.isfile(os.path.join(p, "runs.csv")):
            shutil.rmtree(p)
    table = []
    fields = runkit.read_fields(rows)     # runs.csv's own order: no build needed to split it
    for k in kinds_:
        sub = os.path.join(outdir, k["label"])
        os.makedirs(sub)
        idx = {r["index"] for r in k["rows"]}
        runkit.write_csv(os.path.join(sub, "runs.csv"), k["rows"],
                       runkit.columns_for(k["rows"], fields=fields))
        runkit.write_csv(os.path.join(sub, "rounds.csv"),
                       [r for r in rounds if r.get("index") in idx], runkit.ROUND_COLUMNS)
        runkit.write_series(sub, [r for r in series if r.get("index") in idx])
        runkit.write_meta(os.path.join(sub, "meta.json"), kind_meta(meta, k, len(kinds_)))
        make_report(sub, baseline)
        ok = sum(1 for r in k["rows"] if r.get("status") == "ok")
        table.append("| [%s](%s/report.md) | %s | %s | %s | %d | %d |" % (
            k["label"], k["label"], k["cpu_model"] or "?", k["topology"] or "?",
            ", ".join(k["nodes"]) or "?", len(idx), ok))
    sw = meta.get("sweep") or {}
    lines = ["# hoardlab sweep `%s`" % (sw.get("name") or os.path.basename(outdir)), ""]
    if sw.get("description"):
        lines += [sw["description"], ""]
    lines += ["This sweep ran on **%d kinds of node** (a kind: a CPU model with a topology, "
              "as hwloc counts it). A throughput measured on one kind is not comparable with "
              "one measured on another, so allocators are compared only within one kind: "
              "each has its own report, made from its runs alone. `runs.csv` here holds "
              "every run, with its `node`, `cpu_model` and `topology`." % len(kinds_), "",
              "| kind | CPU model | topology (hwloc) | nodes | runs | ok |",
              "|---|---|---|---|---|---|"] + table + [""]
    sl = meta.get("slurm") or {}
    if sl.get("incomplete"):
        lines += ["**Incomplete**: %s (`tools/hoardlab collect %s --resume` runs them)." % (
            "; ".join(sl["incomplete"]), outdir), ""]
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return path


def kind_meta(meta, kind, n):
    """meta.json of one kind's folder: `machine` is a node of that kind."""
    m = dict(meta)
    kept = {k: v for k, v in (meta.get("nodes") or {}).items() if k in kind["nodes"]}
    m["nodes"] = kept
    m["node_kind"] = {"label": kind["label"], "of": n, "cpu_model": kind["cpu_model"],
                      "topology": kind["topology"], "nodes": kind["nodes"]}
    if kept:
        m["machine"] = dict(next(iter(kept.values())).get("machine") or {})
    else:
        m["machine"] = dict(meta.get("machine") or {}, cpu_model=kind["cpu_model"])
    idx = {r["index"] for r in kind["rows"]}
    m["runs_planned"] = len(idx)
    m["runs_done"] = len(idx)
    m["runs_not_ok"] = sum(1 for r in kind["rows"] if r.get("status") != "ok")
    m.pop("interrupted", None)
    return m
