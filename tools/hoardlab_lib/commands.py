"""What each `hoardlab` subcommand does (cmd_NAME(args) -> exit status); cli.py parses the
command line and calls one."""
import json
import os
import re
import subprocess
import sys

from . import allocators, attribute, common, compare as comparemod, cost as costmod, cost_golden
from . import fmt
from . import layers as layersmod, residual as residualmod, runkit, selftest, slurm
from . import soak as soakmod
from . import sweeps
from . import heapmap as heapmapmod
from .build import MEASURED_TARGETS, do_build, incremental_build, install_deps
from .common import REPO, ToolError, build_dir, require, log


# --- build ---------------------------------------------------------------------------------

def cmd_build(a):
    do_build(build_dir(a.build_dir), a.jobs)
    return 0


# --- run -------------------------------------------------------------------------------------

def cmd_run(a):
    bdir = build_dir(a.build_dir)
    sweeps.build_for(a, bdir, MEASURED_TARGETS[:3])
    base, knobs = allocators.parse_allocator_spec(a.allocator)
    knobs.update(common.parse_key_values(a.knob or [], "--knob"))
    runkit.check_allocator(bdir, base, knobs, [n for n, _ in common.hlconfig_strategies(bdir)]
                    if allocators.allocator_kind(base) == "hoardlab" else [],
                    "-a %s" % a.allocator)
    params = common.parse_key_values(a.param or [], "--param", knobs=False, form="name=value")
    run = {"index": 0, "allocator": base, "variant": a.allocator, "base": base,
           "kind": allocators.allocator_kind(base), "knobs": knobs, "swept": {},
           "workload_label": a.workload, "workload": a.workload, "params": params,
           "threads": a.threads, "scale": a.scale, "seed": a.seed, "repetition": 0,
           "pin": a.pin, "timeout": a.timeout, "extra_args": a.extra}
    res = runkit.run_one(run, bdir)
    if res["status"] != "ok":
        sys.stderr.write(res["error"].rstrip() + "\n")
        log("run %s: %s (exit %s)" % (res["status"], " ".join(res["argv"]), res["exit_code"]))
        return res["exit_code"] or 1
    rows, _ = runkit.rows_for(run, res, "run", 0, bdir)
    if rows[0]["status"] != "ok":
        log("warning: " + rows[0]["error"])
    if a.json:
        for rec in res["records"]:
            print(json.dumps(rec))
        return 0
    for rec in res["records"]:
        hl = rec.get("hoardlab") or {}
        print("%s under %s%s: %d threads, %.3f s, %s ops/s, peak RSS %s KiB" % (
            rec.get("workload"), base, (" " + runkit.knobs_text(knobs)) if knobs else "",
            rec.get("threads", 0), rec.get("wall_s") or 0, fmt.si(rec.get("throughput")),
            rec.get("peak_rss_kb")))
        if hl:
            print("  A %s MiB, U %s MiB, A/U %s, locks %s (contended %s), remote frees %s, "
                  "census blocks %s" % (fmt.mib(hl.get("held_bytes_peak")),
                                        fmt.mib(hl.get("in_use_peak")),
                                        "%.2f" % hl["fragmentation"] if hl.get("fragmentation")
                                        else "–", hl.get("lock_acquisitions"),
                                        hl.get("lock_contended"), hl.get("remote_frees"),
                                        hl.get("census_false_blocks")))
    return 0


# --- sweep -------------------------------------------------------------------------------------

def cmd_sweep(a):
    bdir = build_dir(a.build_dir)
    build = sweeps.build_for(a, bdir)
    if slurm.options_used(a):
        return slurm.cmd_sweep(a, bdir, build)
    path, bad = sweeps.run_sweep(a.file, bdir, out=a.out, root=a.results, seed=a.seed,
                          quiet=a.quiet, dry_run=a.dry_run, build=build,
                          load_options=load_options(a))
    if path:
        print(path)
    return 1 if bad else 0


def load_options(a):
    """The load options given on the command line (cli.add_load_options), by [sweep] key."""
    return {k: getattr(a, k) for k in sweeps.LOAD_KEYS}


def cmd_report(a):
    if not runkit.table_file(os.path.join(a.dir, "runs.csv")):
        raise ToolError("%s: no runs.csv" % a.dir)
    print(sweeps.make_report(a.dir, a.baseline))
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
    path, bad = sweeps.run_sweep(os.path.join(REPO, "configs", "sweeps", "taxonomy.ini"), bdir,
                          root=a.results, quiet=a.quiet, build=build,
                          load_options=load_options(a))
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
    build = sweeps.build_for(a, bdir)
    strategies = [n for n, _ in common.hlconfig_strategies(bdir)]
    p = attribute.plan(bdir, a.base, a.target, common.split_commas(a.order) if a.order
                       else None, strategies)
    wls = []
    for spec in sum((common.split_commas(w) for w in a.workload or []), []):
        name, settings = allocators.parse_allocator_spec(spec)
        wls.append((name, name, settings))
    name = "attribute-%s-%s" % tuple(re.sub(r"[^A-Za-z0-9.+-]+", "_", s)
                                     for s in (a.base, a.target))
    text = attribute.sweep_text(p, wls, a.threads, a.repetitions, a.timeout, name)
    if a.dry_run:
        print(attribute.dry_run_text(p))
        if wls:         # the workloads and their parameters, checked as a sweep's are
            sw = sweeps.Sweep(text, "<attribute>", strategies=strategies)
            sweeps.validate_sweep(sw, sw.expand(), bdir)
            print("%d runs: %d configurations x %s" % (len(sw.expand()), len(p.configs),
                                                       ", ".join(w[0] for w in wls)))
        return 0
    if not wls:
        raise ToolError("attribute: name the workloads to run with -w (e.g. -w larson:scale="
                        "0.03), or read a finished run with --from DIR")
    outdir = a.out or sweeps.out_dir_for(name, a.results or os.path.join(REPO, "results"))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "attribute.ini")
    with open(path, "w") as f:
        f.write(text)
    attribute.write_plan(p, outdir)
    _, bad = sweeps.run_sweep(path, bdir, out=outdir, seed=a.seed, quiet=a.quiet, build=build)
    print(attribute.report(outdir, a.metric), end="")
    print(os.path.join(outdir, "attribution.md"))
    return 1 if bad else 0


# --- residual --------------------------------------------------------------------------------

def cmd_residual(a):
    """Every row's attribution plan and its real allocator in one generated sweep
    (residual.py); the report's Residual section reads residual.json."""
    rows = residualmod.choose(a.rows, list(residualmod.ROWS), "--rows")
    wls = residualmod.choose(a.workloads, list(residualmod.WORKLOADS), "--workloads")
    residualmod.check_numbers(a.scale, a.repetitions)
    bdir = build_dir(a.build_dir)
    build = sweeps.build_for(a, bdir)
    strategies = [n for n, _ in common.hlconfig_strategies(bdir)]
    plans = {r: residualmod.plan_row(bdir, r, strategies) for r in rows}
    text = residualmod.sweep_text(plans, wls, a.scale, a.threads, a.repetitions, a.timeout,
                                  "residual")
    sw = sweeps.Sweep(text, "<residual>", strategies=strategies)
    if a.dry_run:
        for p in plans.values():
            print(attribute.dry_run_text(p))
        sweeps.validate_sweep(sw, sw.expand(), bdir)
        print("%d runs: %d allocators x %s" % (len(sw.expand()), len(sw.labels),
                                               ", ".join(wls)))
        return 0
    outdir = a.out or sweeps.out_dir_for("residual", a.results or
                                              os.path.join(REPO, "results"))
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "residual.ini")
    with open(path, "w") as f:
        f.write(text)
    residualmod.write_plan(outdir, plans, wls, a.scale)
    rpath, bad = sweeps.run_sweep(path, bdir, out=outdir, seed=a.seed, quiet=a.quiet,
                                       build=build, load_options=load_options(a))
    print(residualmod.summary(residualmod.read_plan(outdir),
                              runkit.read_csv(os.path.join(outdir, "runs.csv"))))
    print(rpath)
    return 1 if bad else 0


# --- cost -----------------------------------------------------------------------------------

def cmd_cost(a):
    bdir = build_dir(a.build_dir)
    sweeps.build_for(a, bdir)
    if a.golden_update:
        rows = cost_golden.update(bdir, jobs=a.jobs or 2)
        log("wrote %s: %s" % (cost_golden.PATH, ", ".join(rows)))
        return 0
    names = [n.strip() for n in a.allocators.split(",")] if a.allocators else None
    strategies = [n for n, _ in common.hlconfig_strategies(bdir)]
    for n in names or []:               # a strategy's knobs: checked as `run -a` checks them
        base, knobs = allocators.parse_allocator_spec(n)
        if knobs and base in strategies:
            runkit.check_allocator(bdir, base, knobs, strategies, "-a %s" % n)
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

def cmd_heapmap(a):
    bdir = build_dir(a.build_dir)
    sweeps.build_for(a, bdir, MEASURED_TARGETS[:3])
    params = common.parse_key_values(a.param or [], "--param", knobs=False, form="name=value")
    paths, facts = heapmapmod.run(bdir, a.allocator, a.workload, a.out, a.threads, params,
                                  a.interval, a.scale, a.seed, extra=a.extra)
    print(heapmapmod.summary(facts))
    for k in ("png", "json", "log"):
        print("%s: %s" % (k, paths[k]))
    return 0


def cmd_strategies(a):
    bdir = build_dir(a.build_dir)
    strategies, rows = common.hlconfig_strategies(bdir), allocators.composed_rows()
    width = max(len(n) for n in [s for s, _ in strategies] + list(rows) +
                list(allocators.PRODUCTION))
    print("hoardlab strategies (LD_PRELOAD=%s, HOARD_STRATEGY=name):"
          % common.artifact(bdir, "lib"))
    for name, summary in strategies:
        print("  %-*s %s" % (width, name, summary))
    print("composed rows (the same library, HOARD_CONFIG=%s/NAME.ini; docs/rows.md):"
          % os.path.relpath(allocators.ROWS_DIR, REPO))
    for name, (_, account) in rows.items():
        print("  %-*s %s" % (width, name, account))
    print("production allocators (LD_PRELOAD of the library shown):")
    for name in allocators.PRODUCTION:
        try:
            lib = allocators.production_library(name)
            print("  %-*s %s" % (width, name, lib or "no preload (the C library's malloc)"))
        except ToolError as e:
            print("  %-*s MISSING: %s" % (width, name, e))
    return 0


def cmd_config(a):
    bdir = build_dir(a.build_dir)
    hlconfig = require(bdir, "hlconfig")
    flag = "--json" if a.json else "--effective" if a.effective else \
        "--classes" if a.classes else "--stats" if a.stats else "--list"
    env = None
    if a.allocator:
        base, knobs = allocators.parse_allocator_spec(a.allocator)
        bad = allocators.name_problem(base, [n for n, _ in common.hlconfig_strategies(bdir)])
        if bad:
            raise ToolError("-a %s: %s" % (a.allocator, bad))
        env = allocators.allocator_env(base, knobs, bdir)
        env.pop("LD_PRELOAD", None)
    return subprocess.run([hlconfig, flag], env=env).returncode


def cmd_layers(a):
    if a.faces:                                  # the faces alone: read from the text
        bad, text = layersmod.faces_report(os.path.join(REPO, "src"))
        print(text)
        return 1 if bad else 0
    bdir = build_dir(a.build_dir)
    sweeps.build_for(a, bdir, layersmod.TARGETS)
    bad, text = layersmod.report(bdir, known=layersmod.NOTHING_KNOWN if a.strict
                                 else layersmod.KNOWN, faces=True)
    print(text)
    return 1 if bad else 0


def cmd_soak(a):
    bdir = build_dir(a.build_dir)
    sweeps.build_for(a, bdir, soakmod.TARGETS)
    return soakmod.main(a, bdir)


def cmd_test(a):
    if a.strategy:
        return selftest.strategy_tests(build_dir(a.build_dir), a.strategy, a.jobs, a.list)
    return selftest.main(build_dir(a.build_dir), a.jobs, skip_deps=a.no_deps, full=a.full)


# --- parser --------------------------------------------------------------------------------
