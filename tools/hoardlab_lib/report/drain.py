"""What a row of the purge sweep measured after its drain (the phased workload with
next_burst = 1, configs/sweeps/purge.ini), read for purge.py and survivors.py: the memory
held at each checkpoint over the spike's peak, the next burst's throughput, which blocks
outlived the drain (the pattern), the purge policy; and the points (an allocator and policy
each) those sections weigh."""
from .. import verdicts as V
from .series import phases_of, purge_policy

CHECKPOINTS = ("100ms", "1s", "5s")     # phased's default checkpoints, as its keys name them
HELD_AT = "1s"                           # the memory the frontier and the claim weigh
# The survivor patterns beside the random drain: (pattern, phased's parameter, its title).
SURVIVORS = (("spread", "keep_every", "Survivors spread: one block in %s kept"),
             ("together", "keep_first", "Survivors together: the first 1/%s kept"))
# Spread survivors: what a purge of free pages inside partly used superblocks (hoard2026's
# purge_holes = on) aims at, 1 s after the drain: held at most HOLES_HELD of the peak, the next
# burst at least HOLES_BURST of purge = off's.
HOLES_KNOB = "purge_holes"
HOLES_HELD = 0.5
HOLES_BURST = 0.8


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


def param(r, k):
    """phased's integer parameter k of a row (runs.csv's params.<k>), 0 when absent."""
    v = r.get("params." + k)
    try:
        return int(float(v)) if v not in (None, "") else 0
    except (TypeError, ValueError):
        return 0


def pattern_of(r):
    """Which blocks outlive the drain: 'churn' (phased's churn), 'spread' (keep_every),
    'together' (keep_first), else 'random' (each freed with probability `drain`)."""
    if param(r, "churn"):
        return "churn"
    for pat, key, _ in SURVIVORS:
        if param(r, key):
            return pat
    return "random"


def point_name(r):
    """A row's point: its variant, `+collect` when it called the allocator's collect."""
    return r["variant"] + (" +collect" if param(r, "collect") else "")


def peak_kb(r):
    """The RSS peak before the drain: the (first) spike's sampled peak, or RSS as the first
    thread reached the drain (extra.drain_rss_kb) when higher (the live set grew to the
    spike's end), less the harness's tables of live blocks then (extra.drain_table_kb, rows
    with survivors kept or churn); None without a peak."""
    spike = [p for p in phases_of(r) if p.get("name") == "spike"]
    peaks = [x for x in ((spike[0].get("rss_kb_peak") if spike else None),
                         r.get("extra.drain_rss_kb")) if x]
    return max(peaks) - (r.get("extra.drain_table_kb") or 0) if peaks else None


def held_fraction(r, t=HELD_AT):
    """RSS less LazyFree t after the drain (less the harness's tables then,
    extra.kept_table_kb), over the RSS peak before it (peak_kb): what the allocator still
    holds of its peak (LazyFree pages are given back, lazily). None when the run has no such
    checkpoint or no sampled spike."""
    rss, lazy = r.get(col(t, "rss_kb")), r.get(col(t, "lazyfree_kb"))
    peak = peak_kb(r)
    if rss is None or not peak or peak <= 0:
        return None
    return (rss - (lazy or 0) - (r.get("extra.kept_table_kb") or 0)) / peak


def measured(rows, pattern="random"):
    """The ok rows of `pattern` (pattern_of) of a run with a next burst and the checkpoint
    HELD_AT."""
    return [r for r in V.ok(rows) if not V.is_census(r) and pattern_of(r) == pattern and
            r.get("extra.next_burst_ops_per_s") is not None and
            r.get(col(HELD_AT, "rss_kb")) is not None]


def names(rows):
    """The points of rows (point_name), in order of first appearance."""
    seen = []
    for r in rows:
        if point_name(r) not in seen:
            seen.append(point_name(r))
    return seen


def by_point(mr):
    """[(point, its rows at the highest thread count of mr)], in the order of the points."""
    t = max((r["threads"] for r in mr), default=None)
    return [(v, [r for r in mr if point_name(r) == v and r["threads"] == t]) for v in names(mr)]


def points(rows, pattern="random"):
    """[(point, its rows, held Spread, next-burst throughput Spread)] of `pattern` at the
    highest thread count, in the order of the points (a variant, and with collect = 1 the
    variant `+collect`); a point without both numbers is left out."""
    out = []
    for v, rr in by_point(measured(rows, pattern)):
        held = V.spread_of([held_fraction(r) for r in rr])
        thr = V.spread_of([r.get("extra.next_burst_ops_per_s") for r in rr])
        if rr and held and thr:
            out.append((v, rr, held, thr))
    return out


def plain(pts):
    """The points of rows without collect."""
    return [p for p in pts if not param(p[1][0], "collect")]


def policy_text(r):
    """A row's purge policy (its knobs, its strategy's defaults, or 'its own'), and with
    collect = 1 the call made after the drain."""
    pol = purge_policy(r) or "its own"
    if param(r, "collect"):
        pol += "; collect: %s" % (r.get("extra.collect_call") or "none")
    return pol


def is_off(r):
    """Does the row run without a purge (purge = off set, or a strategy whose default it is)?"""
    pol = purge_policy(r)
    return pol is not None and pol.startswith("purge = off") and \
        V.knobs_of(r).get(HOLES_KNOB, "off") == "off"


def off_throughput(pts, strategy):
    """The next burst's throughput Spread of `strategy` under purge = off (without collect),
    or None."""
    return next((thr for _, rr, _, thr in plain(pts) if rr[0].get("strategy") == strategy and
                 is_off(rr[0])), None)


def best_of(cands):
    """(variant, held Spread) of the least held median among cands [(v, rr, held, thr)]."""
    return min(((held.med, v, held) for v, _, held, _ in cands), default=(None, None, None))[1:]
