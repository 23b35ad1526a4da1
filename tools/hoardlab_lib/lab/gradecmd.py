"""`hoardlab grade NAME | --all`: measure (grade.py), test (correct.py), count (cost.py), and
write the page (page.py) into results/<date>-grade-NAME/; `--from DIR` writes the pages again
from a grade's folder (its runs.csv and grade.json) without measuring."""
import json
import os

from .. import cost as costmod, fmt, heapmap, meta as metamod
from ..build import incremental_build
from ..common import ToolError, build_dir, hlconfig_strategies, log
from . import correct, grade as G, page


def costs(bdir, strategies):
    """{strategy: {case: instructions per pair}}, or {} without valgrind."""
    try:
        results = costmod.run(bdir, strategies, jobs=2)
    except ToolError as e:
        log("grade: no cost: %s" % e)
        return {}
    out = {}
    for r in results:
        out.setdefault(r["allocator"], {})[r["case"]] = r["pair"]
    return out


# The heap over time on the page: a drain (threadtest: Hoard's superblocks go to the global
# heap and come back) and a hand-off (blowup-prodcons: pure private heaps only grow), short.
MAPS = {"threadtest": {"blocks": 20000, "rounds": 5, "size": 64},
        "blowup-prodcons": {"rounds": 20, "blocks": 2000}}


def heap_maps(bdir, outdir, strategy):
    """[{workload, png, summary} or {workload, error}] of the heap log's maps of a strategy;
    a strategy that keeps no heap log (a single heap, a new one without the key) says why."""
    out = []
    for w, params in MAPS.items():
        try:
            paths, f = heapmap.run(bdir, strategy, w, outdir, threads=2, timeout=120,
                                   params=dict(params, sample_interval=0, latency_every=0))
            out.append({"workload": w, "png": os.path.basename(paths["png"]),
                        "trace": os.path.basename(paths["json"]), "summary": heapmap.summary(f)})
        except ToolError as e:
            out.append({"workload": w, "error": str(e)})
    return out


def pages(outdir, extra):
    rows, rounds = G.load(outdir)
    ncores = fmt.cores_of(metamod.read(os.path.join(outdir, "meta.json")), rows)
    entries, paths = [], []
    for s in extra["strategies"]:
        corr = extra["correctness"].get(s) or {}
        ts = G.trace_scores(rows, s)
        mt = G.mt_scores(rows, rounds, s, ncores)
        cost = extra["cost"].get(s)
        paths.append(page.write(outdir, s, corr, ts, mt, cost, ncores,
                                (extra.get("heapmaps") or {}).get(s)))
        entries.append((s, corr, ts, mt, cost))
    if len(entries) > 1:
        paths.append(page.leaderboard(outdir, entries))
    return paths


def cmd_grade(a):
    if a.from_dir:
        with open(os.path.join(a.from_dir, "grade.json")) as f:
            extra = json.load(f)
        print("\n".join(pages(a.from_dir, extra)))
        return 0
    bdir = build_dir(a.build_dir)
    if not a.no_build:
        incremental_build(bdir)
    known = [n for n, _ in hlconfig_strategies(bdir)]
    if a.all:
        strategies = known
    elif not a.name:
        raise ToolError("grade: name a strategy (%s) or --all" % ", ".join(known))
    elif a.name not in known:
        raise ToolError("grade: %s is not compiled in; valid: %s (a new one: hoardlab new, "
                        "then hoardlab build)" % (a.name, ", ".join(known)))
    else:
        strategies = [a.name]
    outdir = G.measure(bdir, strategies, root=a.results, quick=a.quick)
    extra = {"strategies": strategies, "correctness": {}, "cost": {}}
    if not a.no_tests:
        for s in strategies:
            log("grade: %s's tests (meson test)" % s)
            extra["correctness"][s] = correct.run(bdir, s, quick=a.quick)
    if not a.no_cost:
        extra["cost"] = costs(bdir, strategies)
    extra["heapmaps"] = {s: heap_maps(bdir, outdir, s) for s in strategies}
    with open(os.path.join(outdir, "grade.json"), "w") as f:
        json.dump(extra, f, indent=1)
    print("\n".join(pages(outdir, extra)))
    return 0


def add_parser(sub):
    s = sub.add_parser("grade", help="one page for a strategy: correctness (its tests), "
                       "single-threaded utilization and speed on the traces (P), its Table 7 "
                       "row measured against serial and hoard, instructions per pair "
                       "(docs/lab.md); --all: every strategy and a leaderboard")
    s.add_argument("name", nargs="?", help="a compiled-in strategy")
    s.add_argument("--all", action="store_true", help="every compiled-in strategy, one sweep, "
                   "and leaderboard.md")
    s.add_argument("--quick", action="store_true", help="2 repetitions, and no TSan or fuzzer "
                   "run")
    s.add_argument("--no-tests", action="store_true", help="skip the correctness part")
    s.add_argument("--no-cost", action="store_true", help="skip the instruction counts")
    s.add_argument("--no-build", action="store_true", help="measure the binaries as they are")
    s.add_argument("--results", help="parent of the output folder (default results/)")
    s.add_argument("--from", dest="from_dir", metavar="DIR", help="write the pages again from "
                   "a grade's folder; measure nothing")
    s.set_defaults(func=cmd_grade)
