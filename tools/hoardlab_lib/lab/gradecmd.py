"""`hoardlab grade NAME | --all`: a smoke run first (smoke.py: a strategy that hangs stops the
grade at once, named), then test (correct.py), measure (grade.py), count (cost.py), and write
the page (page.py) into results/<date>-grade-NAME/; `--from DIR` writes the pages again from
a grade's folder (its runs.csv and grade.json) without measuring.

A strategy whose tests fail is not measured: its page says so at the top, gives no P, Q or
M, and names the command that finds the fault; the command exits 1."""
import json
import os
import re

from .. import cost as costmod, fmt, heapmap, runkit, smoke
from ..build import incremental_build
from ..common import ToolError, build_dir, cores, hlconfig_strategies, log
from ..selftest import cause_commands, introspect_tests, tests_of
from . import correct, grade as G, page


def cost_reason(message):
    """One line on why callgrind gave no count: the signal its run died of (a crash of the
    strategy under callgrind), else the error's first line (valgrind missing, ...)."""
    first = message.strip().splitlines()[0] if message.strip() else "no message"
    m = re.match(r"callgrind failed \(exit (-?\d+)\): (.*)", first)
    if m:
        sig = runkit.signal_name(int(m.group(1)))
        return "callgrind's run of hlcost %s (%s)" % (
            "crashed: " + sig if sig else "failed with exit %s" % m.group(1),
            os.path.basename(m.group(2).split()[0]) if m.group(2) else "hlcost")
    return first


def costs(bdir, strategies):
    """({strategy: {case: instructions per pair}}, {strategy: why there is none})."""
    out, why = {}, {}
    for s in strategies:
        try:
            results = costmod.run(bdir, [s], jobs=2)
        except ToolError as e:
            why[s] = cost_reason(str(e))
            log("grade: no cost for %s: %s" % (s, why[s]))
            continue
        for r in results:
            out.setdefault(r["allocator"], {})[r["case"]] = r["pair"]
    return out, why


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
                                   scale=1.0, quiet=True,
                                   params=dict(params, sample_interval=0, latency_every=0))
            out.append({"workload": w, "png": os.path.basename(paths["png"]),
                        "trace": os.path.basename(paths["json"]), "summary": heapmap.summary(f),
                        "roles": heapmap.roles(f)})
        except ToolError as e:
            out.append({"workload": w, "error": str(e)})
    return out


def pages(outdir, extra):
    if os.path.exists(os.path.join(outdir, "runs.csv")):
        rows, rounds = G.load(outdir)
        ncores = fmt.cores_of(runkit.read_meta(os.path.join(outdir, "meta.json")), rows)
    else:                               # not measured: correctness failed
        rows, rounds, ncores = [], [], cores()
    entries, paths = [], []
    for s in extra["strategies"]:
        corr = extra["correctness"].get(s) or {}
        ts = G.trace_scores(rows, s)
        mt = G.mt_scores(rows, rounds, s, ncores)
        cost = extra["cost"].get(s)
        paths.append(page.write(outdir, s, corr, ts, mt, cost, ncores,
                                (extra.get("heapmaps") or {}).get(s),
                                (extra.get("cost_why") or {}).get(s),
                                (extra.get("diagnose") or {}).get(s)))
        entries.append((s, corr, ts, mt, cost))
    if len(entries) > 1:
        paths.append(page.leaderboard(outdir, entries))
    return paths


def cmd_grade(a):
    if a.from_dir:
        with open(os.path.join(a.from_dir, "grade.json")) as f:
            extra = json.load(f)
        print("\n".join(pages(a.from_dir, extra)))
        return 1 if any(page.failed(c) for c in extra["correctness"].values()) else 0
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
    with runkit.interruptible():
        return grade(a, bdir, strategies)


def smoke_all(bdir, strategies):
    """{strategy: what its smoke run saw}, for those whose run did not finish well; a
    strategy that hangs stops the grade (its tests would each wait for their timeout)."""
    seen = {}
    for s in strategies:
        log("grade: smoke run of %s (a few seconds, checks = on)" % s)
        r = smoke.run(bdir, s)
        if r:
            log("grade: %s%s\n  to see it again: %s" % (
                "stopped: " if r["kind"] == "hang" else "", r["line"], r["command"]))
            registered = tests_of(introspect_tests(bdir), s) if r["kind"] in ("crash", "failed") \
                else []
            for c in cause_commands(r, s, registered, bdir):
                log("  to see the cause: %s" % c)
            seen[s] = r
            if r["kind"] == "hang":
                break
    return seen


def grade(a, bdir, strategies):
    """The grade proper, after the checks of its arguments; returns the exit status: 1 when
    a strategy is incorrect (a hang in its smoke run stops the grade there: its page, and
    nothing else), 2 is the CLI's for a wrong argument (ToolError)."""
    seen = smoke_all(bdir, strategies)
    hung = [s for s, r in seen.items() if r["kind"] == "hang"]
    if hung:                # the grade stops: only the hung strategy's page, no test waited for
        strategies = hung
    extra = {"strategies": strategies, "correctness": {}, "cost": {}, "cost_why": {},
             "diagnose": {s: r["command"] for s, r in seen.items()}}
    for s, r in seen.items():        # the smoke run's finding, the first correctness row
        extra["correctness"][s] = {"smoke": {"status": "fail", "tests": 1, "message": r["line"],
                                             "names": ["smoke run"]}}
    for s in hung:
        extra["correctness"][s].update({k: {"status": "not run", "tests": 0, "message":
                                            "the smoke run hung: not waited for"}
                                        for k, _ in correct.KINDS})
    if not a.no_tests and not hung:
        for s in strategies:
            log("grade: %s's tests (meson test%s)" % (
                s, ", timeouts cut to %g of theirs: the smoke run failed" % correct.SHORT_TIMEOUTS
                if s in seen else ""))
            extra["correctness"].setdefault(s, {}).update(
                correct.run(bdir, s, quick=a.quick, short=s in seen))
    void = [s for s in strategies if page.failed(extra["correctness"].get(s))]
    for s in strategies:
        if not a.no_tests and s not in void:
            log("grade: %s: correctness %s" % (s, page.overall(extra["correctness"].get(s))))
    for s in void:
        log("grade: %s: correctness failed (%s); not measured (its page says what failed)"
            % (s, page.failure_kinds(extra["correctness"][s])))
        for k, r in extra["correctness"][s].items():
            if r["status"] == "fail" and k != "smoke":     # the smoke run's line: said above
                for line in r.get("failed") or [r["message"] or "failed"]:
                    log("  failed: %s: %s" % (k, line))
        extra["cost_why"][s] = "correctness failed"
    measured = [s for s in strategies if s not in void]
    if measured:
        outdir = G.measure(bdir, measured, root=a.results, quick=a.quick)
    else:
        outdir = G.out_dir(strategies, a.results)
    if measured and not a.no_cost:
        got, why = costs(bdir, measured)
        extra["cost"].update(got)
        extra["cost_why"].update(why)
    elif a.no_cost:
        extra["cost_why"].update({s: "--no-cost" for s in measured})
    extra["heapmaps"] = {s: heap_maps(bdir, outdir, s) for s in measured}
    with open(os.path.join(outdir, "grade.json"), "w") as f:
        json.dump(extra, f, indent=1)
    print("\n".join(pages(outdir, extra)))
    if void:
        log("grade: correctness failed for %s — measurements void; the page says what failed "
            "and how to see it" % ", ".join(void))
        return 1
    return 0


def add_parser(sub):
    s = sub.add_parser("grade", help="one page for a strategy: correctness (its tests), "
                       "single-threaded utilization and speed on the traces (P), its Table 7 "
                       "row measured against serial and hoard, instructions per pair "
                       "(docs/lab.md); --all: every strategy and a leaderboard",
                       description="A smoke run of a few seconds comes first: a strategy that "
                       "hangs stops the grade with one line. A strategy whose tests fail is not "
                       "measured; its page says so at the top and the command exits 1.")
    s.add_argument("name", nargs="?", help="a compiled-in strategy")
    s.add_argument("--all", action="store_true", help="every compiled-in strategy, one sweep, "
                   "and leaderboard.md")
    s.add_argument("--quick", action="store_true", help="2 repetitions, and no ASan, "
                   "real-program or long fuzzing tests (named as not run: the grade reads "
                   "'incomplete', never 'pass'); the fuzzer's corpus is replayed")
    s.add_argument("--no-tests", action="store_true", help="skip the correctness part")
    s.add_argument("--no-cost", action="store_true", help="skip the instruction counts")
    s.add_argument("--no-build", action="store_true", help="measure the binaries as they are")
    s.add_argument("--results", help="parent of the output folder (default results/)")
    s.add_argument("--from", dest="from_dir", metavar="DIR", help="write the pages again from "
                   "a grade's folder; measure nothing")
    s.set_defaults(func=cmd_grade)
