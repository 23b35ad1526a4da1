"""Residual: what the composed rows explain. For a folder `hoardlab residual`
wrote (residual.json beside runs.csv): per composed row, the share of the real allocator's
advantage over hoard2026 that the row's elements explain on each workload, with its interval
and verdict, the residual named where the elements do not explain half, the attribution
tables of both orders, and residual-share.png. Nothing for any other folder."""
import textwrap

from .. import attribute, fmt as F, plotkit as K, residual as R, verdicts as V

PLOT = "residual-share.png"
SHOWN = (-1.0, 2.0)         # the plot's share axis; intervals beyond it are cut (arrow)
NO_POINT = {R.NO_GAP: "no gap", R.NO_ADVANTAGE: "A slower", R.NOT_MEASURED: "not measured"}


def share_text(s):
    return "–" if s is None else V.interval_text(s, "%.2f")


def diff_text(s):
    """A difference of medians: 'median [lo, hi]' (its sign matters, so not pm's ±p%)."""
    if s is None:
        return "–"
    if s.n < 2:
        return F.si(s.med) + " ±?"
    return V.interval_text(s, F.si)


def row_lines(row, real, per, plan, rows, workloads):
    won, met = R.target_met(per)
    out = ["### %s against %s" % (row, real), "",
           F.table(["workload", "metric", R.BASE, row, real, "gap A - H", "explained R - H",
                    "share explained", "residual A - R", "verdict"],
                   [[wl, workloads[wl]["metric"], F.pm(p["h"]), F.pm(p["r"]), F.pm(p["a"]),
                     diff_text(p["gap"]), diff_text(p["explained"]),
                     share_text(p["share"]), diff_text(p["residual"]),
                     p["status"] + ("; the row overshoots (beats %s)" % real
                                    if p["overshoot"] else "")]
                    for wl, p in per.items()]), "",
           "Aim: the elements explain at least half, decided, on %d workloads: "
           "%s — %s." % (R.TARGET_WORKLOADS, ", ".join(won) or "none",
                         "met" if met else "not met"), ""]
    for wl, p in per.items():
        if p["status"] not in R.NAMED:
            continue
        out.append("- **residual on %s** (share %s, %s): what the testbed lacks of %s:"
                   % (wl, share_text(p["share"]), p["status"], real))
        out += ["  - %s (%s)" % m for m in R.named(row, wl)]
    if any(p["status"] in R.NAMED for p in per.values()):
        out.append("")
    out += ["#### Attribution %s -> %s, both orders" % (R.BASE, row), ""]
    vo = R.variant_of(row)
    for wl in per:
        out += attribute.table_lines(plan, [r for r in rows if r["workload_label"] == wl],
                                     workloads[wl]["metric"], vo, note=False)
    out += ["A ratio is the median of the workload's metric at the step that adds the element "
            "over the median at the step before (above 1: the element raises it); each "
            "order's ratios multiply to %s / %s. *interaction*: the two orders' intervals do "
            "not overlap, the element's effect depends on which others are already there; "
            "*same within noise*: they overlap (`hoardlab attribute`, docs/tool.md)."
            % (row, R.BASE), ""]
    return out


def lacks_lines(rows_run):
    out = ["### What the testbed lacks (the data the residuals are named from)", "",
           "Each row's account of what it leaves out of the real design (configs/rows/, "
           "kept as data in residual.LACKS), with the workloads each mechanism can make a "
           "gap on: named from what the workloads exercise, not measured — the testbed "
           "lacks the mechanism, so no run can switch it on.", ""]
    for row in rows_run:
        out += [F.table(["%s: mechanism" % row, "workloads", "source"],
                        [[m, ", ".join(w), s] for m, w, s in R.LACKS.get(row, ())]), ""]
    return out


def residual_section(outdir, rows):
    plan = R.read_plan(outdir)
    if plan is None:
        return []
    res = R.results(plan, rows)
    workloads = plan["workloads"]
    lines = ["## Residual: what the composed rows explain", "",
             "Per composed row R and the real allocator A it imitates, on each workload (its "
             "metric, higher is better; the highest thread count run): H = %s, gap = A - H, "
             "explained = R - H, share = explained / gap, residual = A - R. The share's "
             "interval spans (r - h) / (a - h) over r, h and a within the three medians' "
             "intervals; a gap whose interval reaches 0 has no share (*%s*). *%s*: the "
             "interval lies wholly at or above %.1f; *%s*: wholly below; *%s*: it reaches "
             "%.1f. *%s*: A is slower than H, there is no advantage to explain. Where the "
             "share is not decided at least %.1f the residual is named from the row's own "
             "account of what it leaves out. %s" % (
                 plan["base"], R.NO_GAP, R.AT_LEAST_HALF, R.THRESHOLD, R.LESS_THAN_HALF,
                 R.WITHIN, R.THRESHOLD, R.NO_ADVANTAGE, R.THRESHOLD, V.NOISE_RULE), "",
             "Workloads: " + "; ".join("**%s**: %s" % (w, d["what"])
                                       for w, d in workloads.items()) + ".", ""]
    for row, d in plan["rows"].items():
        lines += row_lines(row, d["real"], res[row], d["plan"], rows, workloads)
    lines += lacks_lines(list(plan["rows"]))
    try:
        lines += ["![share explained](%s)" % plot(outdir, plan, res), ""]
    except Exception as e:      # noqa: BLE001 -- a plot that fails leaves the tables standing
        lines += ["The plot could not be drawn: %r" % e, ""]
    return lines


def plot(outdir, plan, res):
    """residual-share.png: one panel per row, the share explained per workload with its
    interval; 0 is hoard2026, 1 the real allocator, the dashed line the threshold."""
    plt = K.plt()
    rows_ = list(plan["rows"])
    fig, axes = plt.subplots(1, len(rows_), figsize=(4.2 * len(rows_) + 0.8, 4.0),
                             squeeze=False, sharey=True)
    lo_, hi_ = SHOWN
    for ax, row in zip(axes[0], rows_):
        per = res[row]
        wls = list(per)
        for i, wl in enumerate(wls):
            p = per[wl]
            s = p["share"]
            if s is None or p["status"] == R.NO_ADVANTAGE:    # no advantage to share
                ax.annotate(NO_POINT.get(p["status"], p["status"]), (i, 0), ha="center",
                            va="bottom", fontsize=7, rotation=90)
                continue
            med = min(max(s.med, lo_), hi_)
            y0, y1 = max(s.lo, lo_), min(s.hi, hi_)
            color = {R.AT_LEAST_HALF: "tab:green", R.LESS_THAN_HALF: "tab:red"}.get(
                p["status"], "tab:gray")
            ax.errorbar([i], [med], yerr=[[max(0.0, med - y0)], [max(0.0, y1 - med)]],
                        fmt="o", color=color, capsize=4)
            for end, cut in ((s.lo, lo_), (s.hi, hi_)):
                if (end < cut and cut == lo_) or (end > cut and cut == hi_):
                    ax.annotate("", (i, cut), (i, cut - 0.15 if cut == hi_ else cut + 0.15),
                                arrowprops={"arrowstyle": "->", "color": color})
        ax.axhline(R.THRESHOLD, ls="--", color="k", lw=0.8)
        ax.axhline(1.0, color="tab:blue", lw=0.8)
        ax.axhline(0.0, color="gray", lw=0.8)
        ax.set_xticks(range(len(wls)))
        ax.set_xticklabels(wls, rotation=20, fontsize=8)
        ax.set_xlim(-0.6, len(wls) - 0.4)
        ax.set_ylim(lo_ - 0.05, hi_ + 0.05)
        K.title(ax, "%s vs %s" % (row, plan["rows"][row]["real"]), fontsize=9)
    axes[0][0].set_ylabel("(R - %s) / (A - %s)" % (R.BASE, R.BASE), fontsize=8)
    fig.suptitle("\n".join(textwrap.wrap(
        "Share of the real allocator's advantage over %s that the row's elements explain "
        "(0: %s, 1: the real allocator, dashed: %.1f). Green: decided at least %.1f; red: "
        "decided below; grey: undecided" % (R.BASE, R.BASE, R.THRESHOLD, R.THRESHOLD),
        45 * len(rows_) + 20)), fontsize=8)
    return K.save(fig, outdir, PLOT)
