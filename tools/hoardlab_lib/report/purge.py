"""The report section of the purge sweep (configs/sweeps/purge.ini): what each
allocator and purge policy keeps 1 s after a drain against the next burst's throughput. The
phased workload with next_burst = 1 reads RSS, Private_Dirty, LazyFree and A at checkpoints
after the drain (extra.after_drain_<t>_*) and times a second spike (extra.next_burst_ops_per_s).
A table, purge-pareto.png (each allocator and policy a point, the non-dominated frontier
drawn, the dominated named), and the direction of Hoard #116's claim -- a retain budget
gives faster warm reuse and returns less -- decided by the interval (verdicts.NOISE_RULE).

Which blocks outlive the drain (phased's keep_every, keep_first) makes a pattern of its own,
each with its table, frontier and plot (purge-pareto-<pattern>.png): the survivors spread
(every k-th block in allocation order kept) and together (the first 1/k); rows with
collect = 1 (the allocator's explicit call right after the drain) are points of their own,
named `<variant> +collect`. The churn measure (phased's churn: the threads that allocated
have exited, the process idles) is a table of what each allocator gave back. The survivor
patterns and the churn measure close the section: report/survivors.py; what a row measured
after its drain, and the points, are report/drain.py's. Every aim's
sentence is computed from the rows: a ratio or a value and the direction its interval
decides (verdicts.NOISE_RULE), no target judged."""
from .. import fmt as F, plotkit as K, verdicts as V
from .drain import (CHECKPOINTS, HELD_AT, best_of, col, decide, held_fraction, off_throughput,
                    param, plain, points, policy_text, spoken)
from .series import PURGE_DEFAULTS, PURGE_KNOBS, PURGE_SECTION, purge_policy

PLOT = "purge-pareto.png"
# hoard2026's policies set beside the production allocators: those whose next burst is within
# 10% of purge = off's (a choice of which policies are fast enough to compare, not a verdict)
NEAR_OFF = 0.9
SECTION = PURGE_SECTION
RETAIN_DEFAULT = 64 << 20               # hoard202607's retain budget (its defaults)


def frontier(pts):
    """Pareto: less held and a faster next burst are better. Returns (the non-dominated
    names in order of held, {dominated name: the name that dominates it}), by the medians: a
    point is dominated by another that holds no more and is no slower, and is better in one.
    pts: [(name, held, throughput)] of numbers; of several dominators the one holding least."""
    front, dom = [], {}
    for n, h, x in pts:
        by = [(h2, -x2, n2) for n2, h2, x2 in pts if n2 != n and h2 <= h and x2 >= x and
              (h2 < h or x2 > x)]
        if by:
            dom[n] = min(by)[2]
        else:
            front.append((h, -x, n))
    return [n for _, _, n in sorted(front)], dom


def _decided_domination(a, b):
    """Is b dominated by a decidedly: a's held below b's or a's burst faster, by the
    interval of the ratio (NOISE_RULE)? (a, b: (held, thr) Spreads.)"""
    return decide(V.ratio(b[0], a[0]), ">", 1.0) is True or \
        decide(V.ratio(a[1], b[1]), ">", 1.0) is True


def claim_rows(pts):
    """Hoard #116's claim for each strategy and purge policy (purge and its other knobs:
    decay_ms, purge_delay) with retain = 0 and a retain budget: [(strategy, purge, retain,
    burst ratio, held ratio, faster, returns less, verdict)], the ratios budget / retain 0
    with their intervals; faster and returns less decided by them."""
    by = {}
    for v, rr, held, thr in plain(pts):
        k = V.knobs_of(rr[0])
        if "retain" in k and "purge" in k:
            pol = ", ".join([k["purge"]] + ["%s = %s" % (x, k[x]) for x in PURGE_KNOBS
                                            if x not in ("purge", "retain") and x in k])
            by[(rr[0]["strategy"], pol, k["retain"])] = (held, thr)
    out = []
    for (s, p, ret), (held, thr) in by.items():
        zero = by.get((s, p, "0"))
        if ret == "0" or not zero:
            continue
        q_thr, q_held = V.ratio(thr, zero[1]), V.ratio(held, zero[0])
        faster, less = decide(q_thr, ">", 1.0), decide(q_held, ">", 1.0)
        out.append((s, p, ret, q_thr, q_held, faster, less, V.all_hold(faster, less)))
    return out


def held_table(pts, checkpoints=CHECKPOINTS):
    """The table of points: held at each checkpoint, the next burst, over the first spike and
    over the strategy's purge = off."""
    rs = []
    for v, rr, held, thr in pts:
        cells = [v, policy_text(rr[0])]
        for c in checkpoints:
            cells.append(F.pm(V.spread_of([held_fraction(r, c) for r in rr]), "%.2f"))
        first = V.spread_of([r.get("extra.spike_ops_per_s") for r in rr])
        qs = [V.ratio(thr, first), V.ratio(thr, off_throughput(pts, rr[0]["strategy"]))]
        cells += [F.pm(thr, F.si)] + [F.pm(q, "%.2f") if q else "–" for q in qs]
        rs.append(cells)
    return [F.table(["allocator", "policy"] + ["held %s" % spoken(c) for c in checkpoints] +
                    ["next burst ops/s", "next / first spike", "next / purge = off"], rs), ""]


def purge_section(rows, tail=()):
    """The section; `tail`: lines that close it (report/survivors.py's subsections)."""
    pts = points(rows)
    extra = list(tail)
    if not pts:
        return ["## %s" % SECTION, ""] + extra if extra else []
    t = max(r["threads"] for _, rr, _, _ in pts for r in rr)
    out = ["## %s" % SECTION, "",
           "The phased workload with `next_burst = 1` (configs/sweeps/purge.ini): "
           "after the drain it reads RSS, Private_Dirty, LazyFree and A at 100 ms, 1 s and "
           "5 s (from when the last thread finished freeing its share), holds the drain "
           "until the last reading, then times a second spike, the next burst. Held: RSS less "
           "LazyFree at that time over the RSS peak of the first spike (LazyFree pages are "
           "given back, lazily); 1.00 keeps all of it. Next burst: its operations per second "
           "(all %d threads), and over the first spike's (cold: pages fresh from the OS). "
           "Median over repetitions, `±p%%` their spread." % t, ""]
    out += held_table(pts)
    out += pareto_text(pts) + _claim_text(claim_rows(pts)) + _beside_text(pts)
    coll = collect_lines(pts)
    if coll:
        out += ["The explicit collect right after the drain:", ""] + coll + [""]
    return out + extra


def _beside_text(pts):
    """hoard2026's best policy beside the production allocator holding least (a ratio and the
    direction its interval decides: a development aim, not judged), and hoard202607's
    defaults against their own retain budget (the design of Hoard #116: a claim, judged)."""
    out = ["### hoard2026 and hoard202607 beside the production allocators", ""]
    pts = plain(pts)
    off = off_throughput(pts, "hoard2026")
    ok26 = [p for p in pts if p[1][0].get("strategy") == "hoard2026" and
            decide(V.ratio(p[3], off), ">=", NEAR_OFF) is True]
    v26, h26 = best_of(ok26)
    vp, hp = best_of([p for p in pts if p[1][0].get("alloc_kind") == "production"])
    if v26 and vp:
        q = V.ratio(h26, hp)
        out.append("- `hoard2026`'s best policy whose next burst is within %d%% of `purge = "
                   "off` (ratio >= %.1f by its interval): `%s`, held %s %s; the production "
                   "allocator holding least, `%s`: %s; ratio %s: %s." % (
                       round(100 * (1 - NEAR_OFF)), NEAR_OFF, v26, spoken(HELD_AT),
                       F.iv(h26), vp, F.iv(hp), F.iv(q),
                       V.decided(decide(q, "<", 1.0), "holds less", "holds more")))
    elif off and vp:
        out.append("- `hoard2026` against the production allocators: %s: no policy's next "
                   "burst is within %d%% of `purge = off` by its interval (ratio >= %.1f)."
                   % (V.WITHIN_NOISE, round(100 * (1 - NEAR_OFF)), NEAR_OFF))
    else:
        out.append("- `hoard2026` against the production allocators: not measured (no "
                   "`purge = off` row of it, or no production allocator).")
    return out + [budget_line(pts), ""]


def budget_line(pts):
    """hoard202607's defaults against their retain budget beyond the bytes live (a claim of
    Hoard #116's design, judged), and the same with retain_counts = free (the budget on every
    free byte) where the sweep has it."""
    own = PURGE_DEFAULTS["hoard202607"]
    dflt, counted = ([p for p in plain(pts) if p[1][0].get("strategy") == "hoard202607" and
                      purge_policy(p[1][0]) == pol]
                     for pol in (own, own + ", retain_counts = free"))
    if not dflt:
        return "- `hoard202607` with its defaults: not measured."
    return "\n".join([judged_beyond(dflt[0], "with its defaults", "Hoard #116's design")] + [
        judged_beyond(p, "with `retain_counts = free`",
                      "the budget then counts every free byte it holds") for p in counted[:1]])


def judged_beyond(point, which, claim):
    """One row's bytes beyond live 1 s after the drain against the 64 MiB budget, judged."""
    v, rr, _, _ = point
    beyond = V.spread_of([beyond_live(r) for r in rr])
    return ("- `hoard202607` %s (`%s`): RSS less LazyFree %s after the "
            "drain beyond the bytes live then (the harness's own memory included), "
            "%s MiB, at most its retain budget of 64 MiB (%s): %s.%s" % (
                which, v, spoken(HELD_AT), F.iv(beyond, F.mib), claim,
                F.mark(decide(beyond, "<=", RETAIN_DEFAULT)), where_beyond(rr)))


# Where the bytes beyond live sit, by the allocator's own statistics at the checkpoint
# (libhoardlab's rows): (column, what it is). Only the first is bounded by `retain`.
BEYOND_PARTS = (("parked_bytes", "kept within `retain` (parked empty superblocks and freed "
                 "large mappings' ranges)"),
                ("cache_bytes", "in the threads' TLABs"),
                ("heaps_free_bytes", "free inside the thread heaps' superblocks (a - u: Hoard's "
                 "emptiness threshold lets each heap keep `release_threshold` superblocks "
                 "free per size class under accounting = class, and `empty_fraction` of "
                 "the rest)"))


def where_beyond(rr, t=HELD_AT):
    """' Held then, by its statistics: ...' -- the medians of BEYOND_PARTS, so a mismatch
    shows which part `retain` does not bound; '' without the statistics."""
    parts = [(what, V.spread_of([r.get(col(t, k)) for r in rr])) for k, what in BEYOND_PARTS]
    if any(s is None for _, s in parts):
        return ""
    return (" Held then, by its statistics (medians; bytes held, resident or not, so they "
            "need not add up to the figure above): %s." % "; ".join(
                "%s MiB %s" % (F.mib(s.med), what) for what, s in parts))


def beyond_live(r, t=HELD_AT):
    """Bytes of RSS less LazyFree t after the drain beyond the bytes live then, or None."""
    rss, lazy, live = (r.get(col(t, k)) for k in ("rss_kb", "lazyfree_kb", "live_bytes"))
    if rss is None or live is None:
        return None
    return (rss - (lazy or 0)) * 1024 - live


def pareto_text(pts, plot=PLOT, title=None):
    spreads = {v: (held, thr) for v, _, held, thr in pts}
    front, dom = frontier([(v, held.med, thr.med) for v, _, held, thr in pts])
    out = ["### %s" % (title or "The trade-off: held %s after the drain against the next burst"
                       % spoken(HELD_AT)), "",
           "%s draws each allocator and policy as a point (held %s after the drain, next "
           "burst's throughput; bars: the interval over repetitions). A point is dominated "
           "when another holds no more and is no slower, and is better in one (by the "
           "medians); decidedly so when the ratio of one of the two lies wholly on the "
           "better side of 1 (the interval rule)." % (plot, spoken(HELD_AT)), "",
           "- Frontier (not dominated), from least held: %s." %
           ", ".join("`%s`" % v for v in front)]
    if dom:
        out.append("- Dominated: %s." % "; ".join(
            "`%s` by `%s` (%s)" % (v, by, "decided" if _decided_domination(
                spreads[by], spreads[v]) else V.WITHIN_NOISE) for v, by in dom.items()))
    else:
        out.append("- Dominated: none.")
    return out + [""]


def _claim_text(claims):
    out = ["### Hoard #116: does a retain budget give faster warm reuse and return less?", ""]
    if not claims:
        return out + ["Not measured: the sweep has no `retain = 0` beside a retain budget "
                      "under the same strategy and purge.", ""]
    out += ["Each retain budget against `retain = 0` under the same strategy and purge: the "
            "next burst's throughput and the memory held %s after the drain, budget / "
            "none, with the ratio's interval. Faster, returns less: the interval wholly above "
            "1 (yes), wholly below (no), else %s. The claim agrees when both hold." %
            (spoken(HELD_AT), V.WITHIN_NOISE), ""]
    rs = [[s, p, ret, F.iv(q_thr), F.iv(q_held), V.decided(f), V.decided(l), F.mark(a)]
          for s, p, ret, q_thr, q_held, f, l, a in claims]
    out += [F.table(["strategy", "purge", "retain", "next burst / retain 0",
                     "held / retain 0", "faster", "returns less", "claim"], rs), ""]
    n = len(claims)
    agree = sum(1 for c in claims if c[-1] is True)
    wrong = sum(1 for c in claims if c[-1] is False)
    fast = sum(1 for c in claims if c[5] is True)
    slow = sum(1 for c in claims if c[5] is False)
    less = sum(1 for c in claims if c[6] is True)
    out += ["Direction, by the interval: faster warm reuse with a budget in %d of %d, slower "
            "in %d, %s in the rest; returns less in %d of %d. The claim as a whole agrees in "
            "%d, **MISMATCH** in %d, %s in %d." % (fast, n, slow, V.WITHIN_NOISE, less, n,
                                                   agree, wrong, V.WITHIN_NOISE,
                                                   n - agree - wrong), ""]
    return out


def pattern_plot(pattern):
    """The Pareto plot's file of a pattern: purge-pareto.png for the random drain."""
    return PLOT if pattern == "random" else PLOT.replace(".png", "-%s.png" % pattern)


def pareto_plot(rows, outdir):
    """purge-pareto.png (the random drain), purge-pareto-spread.png and
    purge-pareto-together.png (the survivor patterns): held HELD_AT after the drain (x)
    against the next burst's throughput (y), a point per allocator and policy with its
    intervals, the frontier as a step line; one file per pattern measured."""
    files = []
    for pattern, title in (("random", ""), ("spread", "survivors spread, "),
                           ("together", "survivors together, ")):
        pts = points(rows, pattern)
        if pts:
            files.append(_draw_pareto(pts, outdir, pattern_plot(pattern), title))
    return files


def _draw_pareto(pts, outdir, name, what):
    plt = K.plt()
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    front, dom = frontier([(v, held.med, thr.med) for v, _, held, thr in pts])
    for i, (v, _, held, thr) in enumerate(pts):
        ax.errorbar([held.med], [thr.med / 1e6], xerr=K.yerr([held]),
                    yerr=K.yerr([thr], 1e-6), marker=K.MARKERS[i % len(K.MARKERS)],
                    ms=6 if v in front else 4, capsize=2, color="C%d" % (i % 10),
                    alpha=1.0 if v in front else 0.55, ls="none",
                    label=v if v in front else "%s (dominated)" % v)
    fp = sorted((held.med, thr.med / 1e6) for v, _, held, thr in pts if v in front)
    ax.step([x for x, _ in fp], [y for _, y in fp], where="post", color="k", lw=1.0,
            ls="--", label="frontier")
    ax.set_xlabel("held %s after the drain: (RSS - LazyFree) / first spike's RSS peak"
                  % spoken(HELD_AT))
    ax.set_ylabel("next burst: million operations / s")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    K.legend(ax)
    K.title(ax, "Memory held after a drain (%s) against the next burst's throughput (up and left "
            "is better; bars: min-max over repetitions)" % (what + spoken(HELD_AT)), fontsize=10)
    return K.save(fig, outdir, name)


def collect_lines(pts):
    """Each point with collect = 1: the call, held HELD_AT after the drain, and over the same
    variant without it (the direction its interval decides)."""
    out = []
    for v, rr, held in [(v, rr, held) for v, rr, held, _ in pts if param(rr[0], "collect")]:
        base = next((h for v2, rr2, h, _ in plain(pts) if rr2[0]["variant"] ==
                     rr[0]["variant"]), None)
        q = V.ratio(held, base) if base else None
        out.append("- `%s` (%s): held %s %s%s." % (
            v, rr[0].get("extra.collect_call") or "no call", spoken(HELD_AT), F.iv(held),
            "; over without the call %s: %s" % (F.iv(q), V.decided(
                decide(q, "<", 1.0), "gives back more", "gives back less")) if q else ""))
    return out
