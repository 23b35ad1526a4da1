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
    """The heap over time (heapmap.py): per map its PNG, Chrome trace file and the facts the
    log shows (moves to and from the global heap, a heap that only grows)."""
    out = ["## Heap map", ""]
    if not maps:
        return out + ["Not drawn in this grade (graded before the heap log existed).", ""]
    for m in maps:
        if "error" in m:
            out.append("- %s: not drawn: %s" % (m["workload"], m["error"]))
        else:
            out += ["- %s: %s (trace: `%s`, opens in ui.perfetto.dev)" % (
                m["workload"], m["summary"], m["trace"]), "", "  ![](%s)" % m["png"]]
    return out + [""]


def correctness_lines(corr):
    out = ["## 1. Correctness", "", "| kind | tests | result | first failure |",
           "|---|---|---|---|"]
    for kind, r in corr.items():
        out.append("| %s | %s | %s | %s |" % (kind, ", ".join(r.get("names") or []) or "–",
                                              "**FAIL**" if r["status"] == "fail"
                                              else r["status"], r["message"] or ""))
    return out + [""]


def trace_lines(ts):
    out = ["## 2. Single-threaded, on the traces", "",
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
    out += ["", "**U = %s, T/T_glibc = %s, P = %.1f x %s + %.1f x min(1, %s) = %s**" % (
        num(ts["u"]), num(ts["ratio"]), G.U_WEIGHT, num(ts["u"]), G.T_WEIGHT,
        num(ts["ratio"]), num(ts["p"])), ""]
    return out


def mt_lines(mt, ncores):
    e = mt["taxonomy"]
    out = ["## 3. Multi-threaded: the Table 7 row, measured against serial and hoard", ""]
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
    out += ["", "Q = the mean of a point per verdict (%s; within noise or undecided %.1f): "
            "**%s**" % ("; ".join("%s: %s" % (TITLES[k], ", ".join(
                "%s %g" % kv for kv in G.POINTS[k].items())) for k in KEYS), G.OPEN,
                num(mt.get("q")))]
    out += ["", "M = throughput / serial's at %d threads, geometric mean: **%s** (%s)" % (
        mt["threads"], num(mt["m"]), ", ".join("%s %s" % (w, num(x))
                                               for w, x in mt["vs_serial"].items())),
            "", "Rules: " + " ".join(V.RULES[k] for k in KEYS), ""]
    return out


def cost_lines(cost):
    out = ["## 4. Instructions per malloc+free pair (callgrind, `hoardlab cost`)", ""]
    if not cost:
        return out + ["Not measured (valgrind missing, or --no-cost).", ""]
    cases = list(cost)
    return out + ["| " + " | ".join(cases) + " |", "|" + "---|" * len(cases),
                  "| " + " | ".join("%.0f" % cost[c] for c in cases) + " |", ""]


def write(outdir, strategy, corr, ts, mt, cost, ncores, maps=None):
    """grade-NAME.md and grade-NAME.png; returns the markdown's path."""
    png = "grade-%s.png" % strategy
    err = plot(os.path.join(outdir, png), strategy, corr, ts, mt, cost)
    lines = ["# Grade of `%s`" % strategy, "",
             "Made by `tools/hoardlab grade %s` (docs/lab.md) on %d cores; the runs are in "
             "runs.csv beside this page." % (strategy, ncores), "",
             "![the grade](%s)" % png if not err else "(no figure: %s)" % err, ""]
    lines += correctness_lines(corr) + trace_lines(ts) + mt_lines(mt, ncores)
    lines += cost_lines(cost) + heap_map_section(maps)
    path = os.path.join(outdir, "grade-%s.md" % strategy)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def plot(path, strategy, corr, ts, mt, cost):
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
    ax[0][1].set_title("traces: P = %s" % num(ts["p"]))
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
    fig.suptitle("grade of %s" % strategy)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return None


def leaderboard(outdir, entries):
    """leaderboard.md: one row per strategy, best P + Q first."""
    hdr = ["strategy", "correctness", "U", "T/T_glibc", "P", "Q", "M (vs serial)", "fast?",
           "scalable?", "false sharing?", "blowup", "instr/pair 64 B"]
    rows = []
    for s, corr, ts, mt, cost in sorted(entries, key=lambda e: -((e[2]["p"] or 0) + (e[3].get("q") or 0))):
        e = mt["taxonomy"]
        bad = [k for k, r in corr.items() if r["status"] == "fail"]
        rows.append([s, "fail: " + ", ".join(bad) if bad else "pass", num(ts["u"]),
                     num(ts["ratio"]), num(ts["p"]), num(mt.get("q")), num(mt["m"])] +
                    [e[k]["value"] if e else "–" for k in KEYS] +
                    [num((cost or {}).get("64 B"), "%.0f")])
    path = os.path.join(outdir, "leaderboard.md")
    with open(path, "w") as f:
        f.write("# Leaderboard\n\n" + F.table(hdr, rows) + "\n")
    return path
