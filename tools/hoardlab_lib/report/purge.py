"""The report section of the purge sweep (configs/sweeps/purge.ini): what each
allocator and purge policy keeps 1 s after a drain against the next burst's throughput. The
phased workload with next_burst = 1 reads RSS, Private_Dirty, LazyFree and A at checkpoints
after the drain (extra.after_drain_<t>_*) and times a second spike (extra.next_burst_ops_per_s).
A table, purge-pareto.png (each allocator and policy a point, the non-dominated frontier
drawn, the dominated named), and the direction of Hoard #116's claim -- a retain budget
gives faster warm reuse and returns less -- decided by the interval (verdicts.NOISE_RULE)."""
from .. import fmt as F, plotkit as K, verdicts as V
from .series import PURGE_KNOBS, PURGE_SECTION, phases_of, purge_policy

CHECKPOINTS = ("100ms", "1s", "5s")     # phased's default checkpoints, as its keys name them
HELD_AT = "1s"                           # the memory the frontier and the claim weigh
PLOT = "purge-pareto.png"
# hoard2026's policies set beside the production allocators: those whose next burst is within
# 10% of purge = off's (a choice of which policies are fast enough to compare, not a verdict)
NEAR_OFF = 0.9
SECTION = PURGE_SECTION


def decide(s, op, threshold):
    """verdicts.check, but a number from one repetition decides nothing here: its interval is
    unknown, and these numbers move by tens of percent from run to run."""
    return None if s is None or s.n < 2 else V.check(s, op, threshold)


def spoken(t):
    """'100ms' -> '100 ms', '1s' -> '1 s': a checkpoint's key in prose."""
    return t[:-2] + " ms" if t.endswith("ms") else t[:-1] + " s"


def col(t, what):
    """runs.csv's column of a checkpoint: extra.after_drain_<t>_<what>."""
    return "extra.after_drain_%s_%s" % (t, what)


def held_fraction(r, t=HELD_AT):
    """RSS less LazyFree t after the drain, over the RSS peak of the (first) spike: what the
    allocator still holds of its peak (LazyFree pages are given back, lazily). None when the
    run has no such checkpoint or no sampled spike."""
    rss, lazy = r.get(col(t, "rss_kb")), r.get(col(t, "lazyfree_kb"))
    spike = [p for p in phases_of(r) if p.get("name") == "spike"]
    peak = spike[0].get("rss_kb_peak") if spike else None
    if rss is None or not peak:
        return None
    return (rss - (lazy or 0)) / peak


def measured(rows):
    """The ok rows of a run with a next burst and the checkpoint HELD_AT."""
    return [r for r in V.ok(rows) if not V.is_census(r) and
            r.get("extra.next_burst_ops_per_s") is not None and
            r.get(col(HELD_AT, "rss_kb")) is not None]


def points(rows):
    """[(variant, its rows, held Spread, next-burst throughput Spread)] at the highest thread
    count, in the order of the variants; a variant without both numbers is left out."""
    mr = measured(rows)
    if not mr:
        return []
    t = max(r["threads"] for r in mr)
    out = []
    for v in V.variants(mr):
        rr = [r for r in mr if r["variant"] == v and r["threads"] == t]
        held = V.spread_of([held_fraction(r) for r in rr])
        thr = V.spread_of([r.get("extra.next_burst_ops_per_s") for r in rr])
        if rr and held and thr:
            out.append((v, rr, held, thr))
    return out


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
    for v, rr, held, thr in pts:
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


def purge_section(rows):
    pts = points(rows)
    if not pts:
        return []
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
    rs = []
    for v, rr, held, thr in pts:
        cells = [v, purge_policy(rr[0]) or "its own"]
        for c in CHECKPOINTS:
            cells.append(F.pm(V.spread_of([held_fraction(r, c) for r in rr]), "%.2f"))
        first = V.spread_of([r.get("extra.spike_ops_per_s") for r in rr])
        qs = [V.ratio(thr, first), V.ratio(thr, off_throughput(pts, rr[0]["strategy"]))]
        cells += [F.pm(thr, F.si)] + [F.pm(q, "%.2f") if q else "–" for q in qs]
        rs.append(cells)
    out += [F.table(["allocator", "policy"] + ["held %s" % spoken(c) for c in CHECKPOINTS] +
                    ["next burst ops/s", "next / first spike", "next / purge = off"], rs), ""]
    out += _pareto_text(pts) + _claim_text(claim_rows(pts)) + _beside_text(pts)
    return out


def is_off(r):
    """Does the row run without a purge (purge = off set, or a strategy whose default it is)?"""
    pol = purge_policy(r)
    return pol is not None and pol.startswith("purge = off")


def off_throughput(pts, strategy):
    """The next burst's throughput Spread of `strategy` under purge = off, or None."""
    return next((thr for _, rr, _, thr in pts if rr[0].get("strategy") == strategy and
                 is_off(rr[0])), None)


def _best(cands):
    """(variant, held Spread) of the least held median among cands [(v, rr, held, thr)]."""
    return min(((held.med, v, held) for v, _, held, _ in cands), default=(None, None, None))[1:]


def _beside_text(pts):
    """hoard2026's best policy beside the production allocator holding least (a ratio and the
    direction its interval decides: a development aim, not judged), and hoard202607's
    defaults against their own retain budget (the design of Hoard #116: a claim, judged)."""
    out = ["### hoard2026 and hoard202607 beside the production allocators", ""]
    off = off_throughput(pts, "hoard2026")
    ok26 = [p for p in pts if p[1][0].get("strategy") == "hoard2026" and
            decide(V.ratio(p[3], off), ">=", NEAR_OFF) is True]
    v26, h26 = _best(ok26)
    vp, hp = _best([p for p in pts if p[1][0].get("alloc_kind") == "production"])
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
    dflt = [p for p in pts if p[1][0].get("strategy") == "hoard202607" and
            purge_policy(p[1][0]) == "purge = free, retain = 64M"]
    if dflt:
        v, rr, _, _ = dflt[0]
        beyond = V.spread_of([beyond_live(r) for r in rr])
        out.append("- `hoard202607` with its defaults (`%s`): RSS less LazyFree %s after the "
                   "drain beyond the bytes live then (the harness's own memory included), "
                   "%s MiB, at most its retain budget of 64 MiB (Hoard #116's design): %s." % (
                       v, spoken(HELD_AT), F.iv(beyond, F.mib),
                       F.mark(decide(beyond, "<=", 64 << 20))))
    else:
        out.append("- `hoard202607` with its defaults: not measured.")
    return out + [""]


def beyond_live(r, t=HELD_AT):
    """Bytes of RSS less LazyFree t after the drain beyond the bytes live then, or None."""
    rss, lazy, live = (r.get(col(t, k)) for k in ("rss_kb", "lazyfree_kb", "live_bytes"))
    if rss is None or live is None:
        return None
    return (rss - (lazy or 0)) * 1024 - live


def _pareto_text(pts):
    spreads = {v: (held, thr) for v, _, held, thr in pts}
    front, dom = frontier([(v, held.med, thr.med) for v, _, held, thr in pts])
    out = ["### The trade-off: held %s after the drain against the next burst"
           % spoken(HELD_AT), "",
           "%s draws each allocator and policy as a point (held %s after the drain, next "
           "burst's throughput; bars: the interval over repetitions). A point is dominated "
           "when another holds no more and is no slower, and is better in one (by the "
           "medians); decidedly so when the ratio of one of the two lies wholly on the "
           "better side of 1 (the interval rule)." % (PLOT, spoken(HELD_AT)), "",
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


def pareto_plot(rows, outdir):
    """purge-pareto.png: held HELD_AT after the drain (x) against the next burst's
    throughput (y), a point per allocator and policy with its intervals, the frontier as a
    step line."""
    pts = points(rows)
    if not pts:
        return []
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
    K.title(ax, "Memory held after a drain against the next burst's throughput (up and left "
            "is better; bars: min-max over repetitions)", fontsize=10)
    return [K.save(fig, outdir, PLOT)]
