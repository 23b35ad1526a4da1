"""The grade page (grade-NAME.md and grade-NAME.png in the grade's results folder) and the
leaderboard of `grade --all` (leaderboard.md), from grade.py's scores, correct.py's results
and cost.py's instructions per pair."""
import os

from .. import fmt as F, paper, plotkit, verdicts as V
from . import grade as G

KEYS = ("fast", "scalable", "false_sharing", "blowup")
TITLES = {"fast": "fast?", "scalable": "scalable?", "false_sharing": "avoids false sharing?",
          "blowup": "blowup"}


def num(x, form="%.2f"):
    return form % x if x is not None else "–"


def heap_map_section(maps):
    """The heap over time (heapmap/): per map its PNG, Chrome trace file and the facts the
    log shows (moves to and from the global heap, a heap that only grows)."""
    out = ["## Heap map", ""]
    if not maps:
        return out + ["Not drawn in this grade (graded before the heap log existed).", ""]
    out += [MAP_CAPTION, ""]
    for m in maps:
        if "error" in m:
            out.append("- %s: not drawn: %s" % (m["workload"], m["error"]))
        else:
            out += ["- %s: %s (trace: `%s`, opens in ui.perfetto.dev)" % (
                m["workload"], m["summary"], m["trace"])]
            out += ["  - %s" % r for r in m.get("roles") or []]
            out += ["", "  ![](%s)" % m["png"]]
    return out + [""]


MAP_CAPTION = ("Each row is a heap, named with the thread that uses it (the global heap on "
               "top); its colour is its fullness, the bytes *it counts* in use over the bytes "
               "it holds (grey: holds nothing). Full does not always mean used: under "
               "`private` a block freed by another thread goes to that thread's heap, so the "
               "heap it came from still counts it in use — free, but unusable to it. A heap "
               "marked * (and named below) counts more in use than the whole process has "
               "live: that is its case. Marks: v into the global heap, ^ out of it, o between "
               "other heaps, x back to the OS.")


def failed(corr):
    """The kinds of tests that failed: a grade with any is void."""
    return [k for k, r in (corr or {}).items() if r["status"] == "fail"]


def not_run(corr):
    """{kind: [its tests not run]} of the kinds a grade left out (--quick, meson's SKIP, a
    hang in the smoke run)."""
    return {k: r.get("not_run", r.get("names")) or [] for k, r in (corr or {}).items()
            if r["status"] == "not run"}


def overall(corr, names=True):
    """The correctness verdict: "fail", "incomplete: not run: KIND (TESTS); ..." when a kind
    of `test --strategy`'s tests did not run (never "pass" then), else "pass"."""
    if failed(corr):
        return "fail"
    if not corr:
        return "incomplete: not run: every test (--no-tests)"
    left = not_run(corr)
    if left:
        return "incomplete: not run: " + "; ".join(
            "%s (%s)" % (k, ", ".join(ns)) if names and ns else k for k, ns in left.items())
    return "pass"


# The kinds of failure, each by words of its first line, and what the page's banner says of it;
# the first that matches names a failure (a crash the checker explained is an overlap).
FAILURES = [
    ("hang", ("timed out", "deadlock", "hung"),
     "it hangs: a test made no progress (a lock not released? a loop in a damaged list?)"),
    ("race", ("ThreadSanitizer", "data race"),
     "a data race: two threads touch the same memory, one writing, without a lock between"),
    ("overlap", ("handed out", "twice", "overlaps", "damaged", "stamp", "double free",
                 "never returned", "misaligned", "not 16-aligned", "has usable size", "not 0"),
     "it hands out wrong memory (a block handed out twice, damaged, too short or misaligned)"),
    ("leak", ("grew", "in_use", "leak", "never reused", "give back", "gave back"),
     "a leak: memory freed is not given back, or not counted as freed, so U (the bytes in "
     "use) and the memory held are wrong"),
    ("crash", ("killed by SIG", "crashed"), "it crashes"),
]


def failure_kind(message):
    """hang, race, overlap, leak, crash or other: what a failed test's line says it is."""
    for kind, words, _ in FAILURES:
        if any(w in (message or "") for w in words):
            return kind
    return "other"


def failure_kinds(corr):
    """The kinds of the failures of a grade, in the order of its rows: "leak, crash"."""
    kinds = []
    for k in failed(corr):
        for line in corr[k].get("failed") or [corr[k]["message"]]:
            f = failure_kind(line)
            if f not in kinds:
                kinds.append(f)
    return ", ".join(kinds)


def see_it(kind, test, strategy, diagnose=None):
    """The command that shows the cause of a failure of this kind: the checker's run for wrong
    memory or a hang (the smoke run's, stopping at the first bad block), the ASan build for a
    crash (it names the file and line) and TSan beside it (a crash with threads may be a
    race), the failing test alone for a leak or a race (it prints what it measured, or the
    race's two lines)."""
    alone = "meson test -C build --print-errorlogs %s" % test
    if kind in ("overlap", "hang") and diagnose:
        return "run it with the checker on (it stops at the first block handed out twice, " \
               "double free or foreign free, with one line): `%s`" % diagnose
    if kind == "crash":
        return ("run it again with the checker on: `%s`; " % diagnose if diagnose else "") + (
                "AddressSanitizer names the file and line of a bad access: `meson test -C "
                "build --print-errorlogs rel-asan-stress-%s`; with two or more threads the "
                "cause may be a race, which ThreadSanitizer names: `meson test -C build "
                "--print-errorlogs rel-tsan-stress-%s`" % (strategy, strategy))
    if kind == "overlap":
        return "run it with the checker on: `HOARD_CHECKS=on %s`" % alone
    return "run the failing test alone (it prints what it measured against what): `%s`" % alone


def headline(corr, diagnose=None, strategy="NAME"):
    """The page's first lines when correctness failed: the measurements are void, what kind
    of failure (the banner), what failed, and the command that shows its cause."""
    bad = failed(corr)
    if not bad:
        return []
    kinds = failure_kinds(corr).split(", ")
    what = "; ".join(next((t for k, _, t in FAILURES if k == f), "it fails its tests")
                     for f in kinds)
    out = ["**Correctness failed — measurements below are void.** The failure: %s. No P, Q "
           "or M is given: the numbers of an allocator that fails its tests measure nothing."
           % what, ""]
    out += ["- %s: %s" % (k, corr[k]["message"] or "failed") for k in bad]
    first = corr[bad[0]]
    test = (first.get("message") or "TEST").split()[0]
    out += ["", "To see the cause, %s" % see_it(failure_kind(first.get("message")), test,
                                                 strategy, diagnose), ""]
    return out


def correctness_lines(corr):
    out = ["## 1. Correctness", "", "| kind | tests | result | first failure |",
           "|---|---|---|---|"]
    for kind, r in corr.items():
        status = {"fail": "**FAIL**", "skipped": "not run"}.get(r["status"], r["status"])
        out.append("| %s | %s | %s | %s |" % (kind, ", ".join(r.get("names") or []) or "–",
                                              status, r["message"] or ""))
    verdict = overall(corr)
    if verdict.startswith("incomplete"):
        out += ["", "**Correctness %s** — not every test of `hoardlab test --strategy` ran, so "
                "this grade does not say pass." % verdict]
    elif verdict == "pass":
        out += ["", "**Correctness: pass** — every test of `hoardlab test --strategy` ran."]
    return out + [""]


NOT_MEASURED = "Not measured: correctness failed, and a grade measures only a strategy that " \
    "passes its tests."


def trace_lines(ts, void=False):
    out = ["## 2. Single-threaded, on the traces", ""]
    if void and not any(p["t"] or p["held"] for p in ts["traces"]):
        return out + [NOT_MEASURED, ""]
    out += [
           "U = peak live requested bytes / peak bytes held (A, with the allocator's metadata); "
           "T = trace events per second (the best of the repetitions: a replay lasts milliseconds, "
           "and the best run is the one no other process interrupted); P = %.1f U + %.1f "
           "min(1, T/T_glibc), U the mean over the traces and T/T_glibc the geometric mean."
           % (G.U_WEIGHT, G.T_WEIGHT), "",
           "| trace | events | live peak | held peak | U | T (events/s) | T glibc | T/T_glibc |",
           "|---|---|---|---|---|---|---|---|"]
    for p in ts["traces"]:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p["trace"], num(p["events"], "%d"), F.mib(p["live"]) + " MiB" if p["live"] else "–",
            F.mib(p["held"]) + " MiB" if p["held"] else "–", num(p["u"]), F.si(p["t"]),
            F.si(p["t_glibc"]), num(p["ratio"])))
    if void:
        return out + ["", "U = %s, T/T_glibc = %s; P not given: correctness failed." % (
            num(ts["u"]), num(ts["ratio"])), ""]
    out += ["", "**U = %s, T/T_glibc = %s, P = %.1f x %s + %.1f x min(1, %s) = %s**" % (
        num(ts["u"]), num(ts["ratio"]), G.U_WEIGHT, num(ts["u"]), G.T_WEIGHT,
        num(ts["ratio"]), num(ts["p"])), ""]
    return out


def m_line(mt):
    """M with its interval (verdicts' rank-sum intervals, as the taxonomy's), bold only when
    it has one and no other process disturbed its runs; on a busy machine, the caveat."""
    sp = mt.get("m_spread")
    per = ", ".join("%s %s" % (w, num(x)) for w, x in mt["vs_serial"].items())
    busy = mt.get("busy") or 0
    has_interval = sp is not None and sp.n > 1 and sp.lo < sp.hi
    text = V.interval_text(sp) if sp is not None else num(mt["m"])
    firm = has_interval and not busy
    line = "M = throughput / serial's at %d threads, geometric mean: %s (%s)" % (
        mt["threads"], "**%s**" % text if firm else text, per)
    notes = []
    if not has_interval:
        notes.append("no interval: too few repetitions, so M is a single reading")
    if busy:
        notes.append("**the machine was busy**: other processes used the CPUs during %d of "
                     "the %d runs M is made of, so M is weak evidence; grade again on a "
                     "quiet machine" % (busy, mt.get("runs") or busy))
    return [line + (". " + "; ".join(notes) + "." if notes else "")]


def mt_lines(mt, ncores, void=False):
    e = mt["taxonomy"]
    out = ["## 3. Multi-threaded: the Table 7 row, measured against serial and hoard", ""]
    if void and not e:
        return out + [NOT_MEASURED, ""]
    if ncores < V.FEW_CORES:
        out += ["This machine has %d cores: scalable? and false sharing from timing are weak "
                "evidence here (the taxonomy report's rule)." % ncores, ""]
    if not e:
        return out + ["No taxonomy entry: the multi-threaded runs failed (runs.csv).", ""]
    c = e["claim"]
    out += ["| | " + " | ".join(TITLES[k] for k in KEYS) + " |", "|---|---|---|---|---|",
            "| measured | " + " | ".join(e[k]["value"] for k in KEYS) + " |",
            "| paper (%s) | " % (c["category"] if c else "no claim") +
            " | ".join(paper.claim_text(c[k]) if c else "–" for k in KEYS) + " |", ""]
    for k in KEYS:
        v = e[k]
        out.append("- %s **%s** — %s%s" % (TITLES[k], v["value"], v["evidence"],
                                           " (%s)" % v["note"] if v["note"] else ""))
    if void:
        out += ["", "Q and M not given: correctness failed."]
    else:
        out += ["", "Q = the mean of a point per verdict (%s; within noise or undecided %.1f): "
                "**%s**" % ("; ".join("%s: %s" % (TITLES[k], ", ".join(
                    "%s %g" % kv for kv in G.POINTS[k].items())) for k in KEYS), G.OPEN,
                    num(mt.get("q")))]
        out += [""] + m_line(mt)
    out += ["", "Rules: " + " ".join(V.RULES[k] for k in KEYS), ""]
    return out


def cost_lines(cost, why=None):
    out = ["## 4. Instructions per malloc+free pair (callgrind, `hoardlab cost`)", ""]
    if not cost:
        return out + ["Not measured: %s." % (why or "--no-cost, or graded before the reason "
                                             "was kept"), ""]
    cases = list(cost)
    return out + ["| " + " | ".join(cases) + " |", "|" + "---|" * len(cases),
                  "| " + " | ".join("%.0f" % cost[c] for c in cases) + " |", ""]


def write(outdir, strategy, corr, ts, mt, cost, ncores, maps=None, cost_why=None,
          diagnose=None):
    """grade-NAME.md and grade-NAME.png; returns the markdown's path. cost_why: why there
    are no instruction counts; diagnose: the command that names a correctness fault."""
    png = "grade-%s.png" % strategy
    void = bool(failed(corr))
    err = plot(os.path.join(outdir, png), strategy, corr, ts, mt, cost, void)
    measured = any(p["t"] or p["held"] for p in ts["traces"]) or bool(mt["taxonomy"])
    verdict = overall(corr)
    lines = ["# Grade of `%s`" % strategy, ""] + headline(corr, diagnose, strategy) + (
        ["**Correctness %s.**" % verdict, ""] if verdict.startswith("incomplete") else []) + [
             "Made by `tools/hoardlab grade %s` (docs/lab.md) on %d cores; %s." % (
                 strategy, ncores, "the runs are in runs.csv beside this page" if measured
                 else "nothing was measured"), "",
             "![the grade](%s)" % png if not err else "(no figure: %s)" % err, ""]
    lines += correctness_lines(corr) + trace_lines(ts, void) + mt_lines(mt, ncores, void)
    lines += cost_lines(cost, cost_why) + heap_map_section(maps)
    path = os.path.join(outdir, "grade-%s.md" % strategy)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def plot(path, strategy, corr, ts, mt, cost, void=False):
    """Four panels: correctness, U and T/T_glibc per trace, M per workload, the cost."""
    try:
        plt = plotkit.plt()
    except ImportError:
        return "matplotlib missing"
    fig, ax = plt.subplots(2, 2, figsize=(11, 7))
    kinds = list(corr)
    ax[0][0].barh(kinds, [1] * len(kinds), color=[
        {"pass": "tab:green", "fail": "tab:red"}.get(corr[k]["status"], "lightgrey")
        for k in kinds])
    ax[0][0].set_title("correctness (green pass, red fail, grey not run)")
    ax[0][0].set_xticks([])
    names = [p["trace"] for p in ts["traces"]]
    xs = range(len(names))
    ax[0][1].bar([x - 0.2 for x in xs], [p["u"] or 0 for p in ts["traces"]], 0.4, label="U")
    ax[0][1].bar([x + 0.2 for x in xs], [min(p["ratio"] or 0, 2) for p in ts["traces"]], 0.4,
                 label="T/T_glibc (cut at 2)")
    ax[0][1].set_xticks(list(xs))
    ax[0][1].set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax[0][1].set_title("traces: P = %s" % ("void" if void else num(ts["p"])))
    ax[0][1].legend(fontsize=8)
    wl = list(mt["vs_serial"])
    ax[1][0].bar(wl, [mt["vs_serial"][w] or 0 for w in wl])
    ax[1][0].axhline(1, color="grey", lw=0.8)
    e = mt["taxonomy"]
    ax[1][0].set_title("throughput / serial at %d threads; Table 7: %s" % (
        mt["threads"], ", ".join(e[k]["value"] for k in KEYS) if e else "–"), fontsize=9)
    if cost:
        ax[1][1].bar(list(cost), list(cost.values()))
    ax[1][1].set_title("instructions per malloc+free pair")
    fig.suptitle("grade of %s" % strategy + (": correctness failed, measurements void"
                                             if void else ""), color="tab:red" if void else None)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return None


def leaderboard(outdir, entries):
    """leaderboard.md: one row per strategy, best P + Q first."""
    hdr = ["strategy", "correctness", "U", "T/T_glibc", "P", "Q", "M (vs serial)", "fast?",
           "scalable?", "false sharing?", "blowup", "instr/pair 64 B"]
    rows = []
    def score(e):
        return -1 if failed(e[1]) else (e[2]["p"] or 0) + (e[3].get("q") or 0)
    for s, corr, ts, mt, cost in sorted(entries, key=lambda e: -score(e)):
        e = mt["taxonomy"]
        bad = failed(corr)
        void = bool(bad)
        rows.append([s, "fail: " + ", ".join(bad) if bad else overall(corr, names=False),
                     num(ts["u"]),
                     num(ts["ratio"]), "void" if void else num(ts["p"]),
                     "void" if void else num(mt.get("q")), "void" if void else num(mt["m"])] +
                    [e[k]["value"] if e else "–" for k in KEYS] +
                    [num((cost or {}).get("64 B"), "%.0f")])
    path = os.path.join(outdir, "leaderboard.md")
    with open(path, "w") as f:
        f.write("# Leaderboard\n\n" + F.table(hdr, rows) + "\n")
    return path
