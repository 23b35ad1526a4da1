"""The report's section on real programs ([program NAME] sections of a sweep) and its plot
programs.png: wall time and peak RSS of every allocator relative to glibc, per program,
with the geometric mean over the programs, the way the field's suites (mimalloc-bench)
present them. A run that failed, timed out, did not load its allocator or whose output
differed from glibc's is shown as such in the tables and marked in the plot, never
dropped; its program is left out of that allocator's geometric mean, and a note says so.
Then hoardlab's own statistics of the programs' runs (A, U, locks, CAS)."""

from .. import fmt as F, plotkit as K, verdicts as V
from ..programs import is_program
from . import series

BASELINE = "glibc"
CAP = 3.0            # programs.png: bars above this ratio are cut and labelled
MARKS = {"failed": "F", "timeout": "T", "mismatch": "M", "not-loaded": "N"}


def program_rows(rows):
    return [r for r in rows if is_program(r)]


def bench_rows(rows):
    """The hlbench rows: what every other section of the report is about."""
    return [r for r in rows if not is_program(r)]


def cases(prows):
    """[(name, label, threads)]: a program, per thread count when it ran at several."""
    labels = list(dict.fromkeys(r["workload_label"] for r in prows))
    out = []
    for lab in labels:
        ts = sorted({r["threads"] for r in prows if r["workload_label"] == lab})
        out += [(lab if len(ts) == 1 else "%s t=%d" % (lab, t), lab, t) for t in ts]
    return out


def variants(prows):
    vs = V.variants(prows)
    return ([BASELINE] if BASELINE in vs else []) + [v for v in vs if v != BASELINE]


def cells(prows):
    """{(case name, variant): {"runs", "bad": {status: n}, "wall", "rss_kb", "cpu"}}:
    medians over the ok repetitions."""
    out = {}
    for name, lab, t in cases(prows):
        for v in variants(prows):
            rs = [r for r in prows if r["workload_label"] == lab and r["threads"] == t and
                  r["variant"] == v]
            if not rs:
                continue
            ok = V.ok(rs)
            bad = {}
            for r in rs:
                if r["status"] != "ok":
                    bad[r["status"]] = bad.get(r["status"], 0) + 1
            cpu = [(r.get("program.user_s") or 0) + (r.get("program.sys_s") or 0) for r in ok]
            out[(name, v)] = {"runs": len(rs), "bad": bad,
                              "wall": V.median([r.get("wall_s") for r in ok]),
                              "rss_kb": V.median([r.get("peak_rss_kb") for r in ok]),
                              "cpu": V.median(cpu), "walls": [r.get("wall_s") for r in ok],
                              "spread": {"wall": V.spread_of([r.get("wall_s") for r in ok]),
                                         "rss_kb": V.spread_of([r.get("peak_rss_kb")
                                                                for r in ok])}}
    return out


def bad_text(c):
    """'timeout', or 'timeout 1/3' when some repetitions were ok."""
    parts = []
    for st, n in sorted(c["bad"].items()):
        parts.append(st if n == c["runs"] else "%s %d/%d" % (st, n, c["runs"]))
    return ", ".join(parts)


def ratios(data, cs, vs, key):
    """{variant: {case name: ratio to glibc or None}}, and the exclusions [(variant, case,
    why)] of the geometric mean."""
    res, excl = {v: {} for v in vs}, []
    for name, _, _ in cs:
        base = data.get((name, BASELINE))
        base_ok = base is not None and not base["bad"] and base[key]
        for v in vs:
            c = data.get((name, v))
            if c is None:
                continue
            if c["bad"]:
                res[v][name] = None
                if v != BASELINE:
                    excl.append((v, name, bad_text(c)))
            elif not base_ok:
                res[v][name] = None
                if v != BASELINE:
                    excl.append((v, name, "glibc: %s" % (bad_text(base) if base else
                                                          "not measured")))
            else:
                res[v][name] = c[key] / base[key]
    return res, excl


def gmeans(rat, vs):
    """{variant: (geometric mean, programs in it, programs measured)}."""
    out = {}
    for v in vs:
        if v == BASELINE:
            continue
        xs = [x for x in rat[v].values() if x]
        out[v] = (V.gmean(xs), len(xs), len(rat[v]))
    return out


def _table(data, cs, vs, key, title, absolute):
    rat, excl = ratios(data, cs, vs, key)
    others = [v for v in vs if v != BASELINE]
    head = ["program", "glibc (%s)" % ("s" if key == "wall" else "MiB")] + others
    rows = []
    for name, _, _ in cs:
        base = data.get((name, BASELINE))
        if base is None:
            first = "not measured"
        elif base["bad"]:
            first = "**%s**" % bad_text(base)
        else:
            first = F.pm(base["spread"][key], absolute)
        cells_ = [name, first]
        for v in others:
            c = data.get((name, v))
            if c is None:
                cells_.append("–")
            elif c["bad"]:
                cells_.append("**%s**" % bad_text(c))
            elif rat[v].get(name) is None:
                cells_.append("(%s)" % absolute(c[key]))
            else:
                cells_.append(F.pm(V.ratio(c["spread"][key], base["spread"][key]), "%.2f"))
        rows.append(cells_)
    gm = gmeans(rat, vs)
    rows.append(["**geometric mean**", "1"] + [
        "–" if not gm[v][0] else "**%.2f**%s" % (gm[v][0], "" if gm[v][1] == gm[v][2]
                                                  else " (%d of %d)" % gm[v][1:])
        for v in others])
    out = ["### %s" % title, "", F.table(head, rows), ""]
    if excl:
        out += ["Left out of the geometric mean: " + "; ".join(
            "%s on %s (%s)" % e for e in excl) + ".", ""]
    return out


def stats_table(prows, cs):
    """hoardlab's statistics, medians over the ok runs: A and U of the largest process,
    event counters summed over the run's processes."""
    hl = [v for v in V.variants(prows) if any(
        r["variant"] == v and r.get("alloc_kind") == "hoardlab" for r in prows)]
    rows = []
    for name, lab, t in cs:
        for v in hl:
            rs = [r for r in V.ok(prows) if r["workload_label"] == lab and r["threads"] == t
                  and r["variant"] == v]
            if not rs:
                continue

            def med(k):
                return V.median([r.get("hoardlab." + k) for r in rs])

            def num(x):
                return "–" if x is None else F.si(x)
            def sp(k):
                return V.spread_of([r.get("hoardlab." + k) for r in rs])
            fr = sp("fragmentation")
            rows.append([name, v, F.pm(sp("held_bytes_peak"), F.mib),
                         F.pm(sp("in_use_peak"), F.mib),
                         F.pm(fr, "%.2f") if fr and fr.med else "–", num(med("lock_acquisitions")),
                         num(med("lock_contended")), num(med("cas_attempts")),
                         num(med("cas_retries")), num(med("mallocs")),
                         num(V.median([r.get("program.processes") for r in rs]))])
    if not rows:
        return []
    return ["### hoardlab statistics of the program runs", "",
            "HOARD_STATS of every process of a run that exited normally: A (peak MiB held "
            "for blocks, the policy's A) and U (peak MiB in use) of the process with the largest A, A/U; "
            "lock acquisitions, contended ones, CAS operations, CAS retries and mallocs summed "
            "over the run's processes (in server mode only the server runs under the "
            "allocator); medians over the ok repetitions.", "",
            F.table(["program", "allocator", "A MiB", "U MiB", "A/U", "locks", "contended",
                     "CAS", "CAS retries", "mallocs", "processes"], rows), ""]


def programs_section(rows, meta=None):
    prows = program_rows(rows)
    if not prows:
        return []
    cs, vs = cases(prows), variants(prows)
    data = cells(prows)
    n_bad = sum(1 for r in prows if r["status"] != "ok")
    out = ["## Real programs", "",
           "Each program ran under every allocator with the same inputs (made once by its "
           "setup, before the timed runs) and its output was compared byte for byte with "
           "its output under glibc (a reference run before the timed runs). Time: median "
           "wall seconds of the run (in server mode: the client's); peak RSS: median of "
           "`ru_maxrss` from wait4, the largest peak RSS among the program's processes (in "
           "server mode: the server's). Cells are ratios to glibc's median (below 1: faster, "
           "or less memory); the geometric mean runs over the programs whose runs all "
           "succeeded under both. A run that failed, timed out, did not load its allocator "
           "or whose output differed from glibc's (`mismatch`) is shown by its status, with "
           "the number of repetitions when only some were affected, and is left out of the "
           "mean. Geometric means over different sets of programs do not compare exactly.",
           ""]
    if BASELINE not in vs:
        out += ["glibc was not among the sweep's allocators, so there are no ratios; "
                "`runs.csv` has every measurement.", ""]
    out += ["- %d program runs, %d not ok (also listed under Failed runs)" % (len(prows), n_bad)]
    noise = sorted(((max(c["walls"]) / min(c["walls"]), k) for k, c in data.items()
                    if len(c["walls"]) >= 2 and min(c["walls"]) > 0), reverse=True)
    spreads = sorted(x for x, _ in noise)
    if spreads:
        out.append("- run-to-run noise: wall time max/min over the repetitions of one program "
                   "and allocator is %.2f in the median group and %.2f in the worst; "
                   "noisiest: %s" % (V.median(spreads), spreads[-1], "; ".join(
                       "%s under %s %.2f" % (k[0], k[1], x) for x, k in noise[:3])))
    out.append("")
    if BASELINE in vs:
        out += _table(data, cs, vs, "wall", "Time relative to glibc", lambda x: "%.2f" % x)
        out += _table(data, cs, vs, "rss_kb", "Peak RSS relative to glibc",
                      lambda x: "%.1f" % (x / 1024.0))
    out += stats_table(prows, cs)
    return out


def section(rows, meta=None):
    """The real programs' section and their memory over time ([] when none ran)."""
    out = programs_section(rows, meta)
    if out:
        out += series.memory_over_time_section(program_rows(rows), programs=True)
    return out


def programs_plot(rows, outdir):
    """programs.png: two panels (time, peak RSS), a group of bars per program and one for
    the geometric mean, each bar an allocator's ratio to glibc with the ratio's interval
    over repetitions as its error bar (linear, from 0, as mimalloc-bench draws them; a bar
    above CAP is cut there and labelled with its value; the legend outside the axes); a
    run that was not ok is an x at 1 with its status letter (F failed, T timeout, M
    mismatch, N not loaded)."""
    prows = program_rows(rows)
    vs = variants(prows)
    if not prows or BASELINE not in vs or len(vs) < 2:
        return []
    plt = K.plt()
    cs = cases(prows)
    data = cells(prows)
    others = [v for v in vs if v != BASELINE]
    groups = [c[0] for c in cs] + ["geomean"]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.09 * len(groups) * len(others) + 3), 9))
    width = 0.85 / len(others)
    cmap = plt.get_cmap("tab20")
    for ax, key, title in ((axes[0], "wall", "time relative to glibc (lower is faster)"),
                           (axes[1], "rss_kb", "peak RSS relative to glibc (lower is less)")):
        rat, _ = ratios(data, cs, vs, key)
        gm = gmeans(rat, vs)
        his = [V.ratio(data[(n, v)]["spread"][key], data[(n, BASELINE)]["spread"][key])
               for v in others for n, x in rat[v].items() if x]
        top = min(CAP, 1.1 * max([1.0] + [x for v in others for x in rat[v].values() if x] +
                                 [h.hi for h in his if h]))
        for i, v in enumerate(others):
            xs, ys, bad_x, sp = [], [], [], []
            for g, name in enumerate(groups):
                x = g + (i - (len(others) - 1) / 2) * width
                y = gm[v][0] if name == "geomean" else rat[v].get(name)
                c = data.get((name, v))
                if y:
                    xs.append(x)
                    ys.append(y)
                    base = data.get((name, BASELINE))
                    sp.append(None if name == "geomean" or y > top else
                              V.ratio(c["spread"][key], base["spread"][key]))
                elif c is not None and (c["bad"] or name != "geomean"):
                    bad_x.append((x, c))
            ax.bar(xs, [min(y, top) for y in ys], width, label=v, color=cmap(i % 20),
                   yerr=K.yerr(sp), capsize=1.5, error_kw={"lw": 0.7})
            for x, y in zip(xs, ys):
                if y > top:
                    ax.annotate("%.1f" % y, (x, top), textcoords="offset points",
                                xytext=(0, 2), ha="center", fontsize=6, rotation=90)
            for x, c in bad_x:
                ax.plot([x], [1.0], marker="x", color="red", ms=6, mew=2)
                mark = "".join(MARKS.get(s, "?") for s in sorted(c["bad"])) or "g"
                ax.annotate(mark, (x, 1.0), textcoords="offset points", xytext=(0, 5),
                            ha="center", fontsize=6, color="red")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axvline(len(groups) - 1.5, color="0.6", lw=0.8, ls=":")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8, rotation=30, ha="right")
        ax.set_ylabel("ratio to glibc")
        ax.set_ylim(0, top * 1.08)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    K.legend(axes[0])
    fig.text(0.01, 0.005, "x: no ratio (F failed, T timed out, M output differs from "
             "glibc's, N allocator not loaded, g glibc's own runs failed); geomean over the "
             "programs with ratios", fontsize=7)
    return [K.save(fig, outdir, "programs.png")]
