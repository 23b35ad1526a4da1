"""The purge sweep's survivor patterns and churn measure (configs/sweeps/purge.ini; issue
49), which close report/purge.py's section: a subsection per survivor pattern (phased's
keep_every: spread; keep_first: together) with its held table, frontier and plot, and the
aims' sentences computed from the rows; then the churn measure (phased's churn: the threads
that allocated have exited and the process idles), a table of what each allocator gave back
at each checkpoint after the last exit."""
from .. import fmt as F, verdicts as V
from .drain import (CHECKPOINTS, HELD_AT, HOLES_BURST, HOLES_HELD, HOLES_KNOB, SURVIVORS,
                    best_of, by_point, decide, held_fraction, off_throughput, param,
                    pattern_of, peak_kb, plain, points, policy_text, spoken)
from .purge import (NEAR_OFF, budget_line, collect_lines, held_table, pareto_text,
                    pattern_plot, purge_section)


def section(rows):
    """The purge section with its survivor patterns and churn measure."""
    return purge_section(rows, survivors_text(rows) + churn_text(rows))


def _k_of(pts, key):
    """The k of keep_every / keep_first of the points' rows (one value, else 'k')."""
    ks = {param(rr[0], key) for _, rr, _, _ in pts}
    return str(ks.pop()) if len(ks) == 1 else "k"


def _sizes(pts):
    """'16..512 B' from the rows' min_size and max_size (one value each), else ''."""
    lo = {param(rr[0], "min_size") for _, rr, _, _ in pts}
    hi = {param(rr[0], "max_size") for _, rr, _, _ in pts}
    return "%d..%d B" % (lo.pop(), hi.pop()) if len(lo) == len(hi) == 1 and 0 not in lo | hi \
        else "the default sizes"


def survivors_text(rows):
    """A subsection per survivor pattern measured: what was run, the held table (100 ms,
    1 s, 5 s after the drain, the next burst), the frontier of its plot, and the aims'
    sentences computed from the rows."""
    out = []
    for pattern, key, title in SURVIVORS:
        pts = points(rows, pattern)
        if not pts:
            continue
        k = _k_of(pts, key)
        kept = [r.get("extra.drain_kept_blocks") for _, rr, _, _ in pts for r in rr]
        live = [r.get("extra.drain_live_blocks") for _, rr, _, _ in pts for r in rr]
        share = (sum(x for x in kept if x) / sum(x for x in live if x)
                 if any(live) and all(x is not None for x in kept + live) else None)
        how = ("blocks 0, %s, 2 x %s, ... of each thread's live blocks in allocation order"
               % (k, k) if pattern == "spread" else
               "the first 1/%s of each thread's live blocks in allocation order (the oldest)"
               % k)
        out += ["### %s" % (title % k), "",
                "The phased workload with `%s = %s` (blocks of %s): the drain keeps %s and "
                "frees the rest, and the threads idle (no allocation, no free) until the last "
                "checkpoint is read; then the next burst. %sHeld and the next burst as in the "
                "table above, less the harness's own tables of live blocks (resident before and "
                "after the drain, by mincore); the peak is the higher of the spike's sampled "
                "RSS peak and RSS as the first thread reached the drain." % (
                    key, k, _sizes(pts), how,
                    "Kept: %.4f of the live blocks (all runs). " % share if share else ""), ""]
        out += held_table(pts)
        out += pareto_text(pts, pattern_plot(pattern), "The trade-off, survivors %s: held "
                            "%s after the drain against the next burst" %
                            (pattern, spoken(HELD_AT)))
        out += _aims(pattern, pts) + [""]
    return out


def _production_range(pts):
    """'0.97 (`glibc`) to 1.00 (`tcmalloc`)': the production allocators' held medians at
    HELD_AT, least to most; None without any."""
    prod = sorted((held.med, v) for v, rr, held, _ in plain(pts)
                  if rr[0].get("alloc_kind") == "production")
    if not prod:
        return None
    return "%.2f (`%s`) to %.2f (`%s`)" % (prod[0][0], prod[0][1], prod[-1][0], prod[-1][1])


def _holes_lines(pts):
    """hoard2026 with purge_holes = on: held at HELD_AT against HOLES_HELD, its next burst
    over purge = off's against HOLES_BURST, each the direction its interval decides."""
    off = off_throughput(pts, "hoard2026")
    holes = [p for p in plain(pts) if p[1][0].get("strategy") == "hoard2026" and
             V.knobs_of(p[1][0]).get(HOLES_KNOB) == "on"]
    if not holes:
        return ["- `hoard2026` with `%s = on`: not measured (no such row)." % HOLES_KNOB]
    out = []
    for v, rr, held, thr in holes:
        q = V.ratio(thr, off) if off else None
        low = decide(held, "<=", HOLES_HELD)
        fast = decide(q, ">=", HOLES_BURST) if q else None
        out.append("- `%s` (%s): held %s %s: %s; next burst / `purge = off` %s: %s; both: %s."
                   % (v, policy_text(rr[0]), spoken(HELD_AT), F.iv(held),
                      V.decided(low, "at most %.1f" % HOLES_HELD, "above %.1f" % HOLES_HELD),
                      F.iv(q) if q else "– (no `purge = off` row)",
                      V.decided(fast, "at least %.1f" % HOLES_BURST,
                                "below %.1f" % HOLES_BURST),
                      V.decided(V.all_hold(low, fast))))
    return out


def _best_line(pts):
    """hoard2026's best policy (least held at HELD_AT among those whose next burst is within
    10% of purge = off's by the interval) against the production allocator holding least: the
    ratio and whether hoard2026's holds no more, by the interval."""
    off = off_throughput(pts, "hoard2026")
    ok26 = [p for p in plain(pts) if p[1][0].get("strategy") == "hoard2026" and off and
            decide(V.ratio(p[3], off), ">=", NEAR_OFF) is True]
    v26, h26 = best_of(ok26)
    vp, hp = best_of([p for p in plain(pts) if p[1][0].get("alloc_kind") == "production"])
    if not (v26 and vp):
        return ("- `hoard2026`'s best policy against the best production allocator: %s." %
                ("not measured (no `purge = off` row of it, or no production allocator)"
                 if not (off and vp) else "%s: no policy's next burst is within %d%% of "
                 "`purge = off` by its interval" % (V.WITHIN_NOISE, round(100 * (1 - NEAR_OFF)))))
    q = V.ratio(h26, hp)
    return ("- `hoard2026`'s best policy whose next burst is within %d%% of `purge = off` "
            "(ratio >= %.1f by its interval): `%s`, held %s %s; the production allocator "
            "holding least, `%s`: %s; ratio %s: %s." % (
                round(100 * (1 - NEAR_OFF)), NEAR_OFF, v26, spoken(HELD_AT), F.iv(h26), vp,
                F.iv(hp), F.iv(q), V.decided(decide(q, "<=", 1.0), "holds no more",
                                             "holds more")))


def _aims(pattern, pts):
    rng = _production_range(pts)
    out = ["Beside the production allocators (a value or a ratio and the direction its "
           "interval decides):", "",
           "- The production allocators hold %s of the peak %s after the drain (medians)."
           % (rng, spoken(HELD_AT)) if rng else "- No production allocator measured."]
    if pattern == "spread":
        out += _holes_lines(pts)
    return out + [_best_line(pts), budget_line(pts)] + collect_lines(pts)


# ---- the churn measure: threads gone, then idle -------------------------------------------------

def checkpoint_keys(r):
    """A row's checkpoints as its keys name them ('100ms', '1s', '10s'), from
    params.checkpoints; phased's default when absent."""
    text = r.get("params.checkpoints")
    if not text:
        return list(CHECKPOINTS)
    keys = []
    for part in str(text).split(","):
        ms = round(float(part) * 1000)
        keys.append("%dms" % ms if ms % 1000 else "%ds" % (ms // 1000))
    return keys


def churn_points(rows):
    """[(point, rows, checkpoint keys)] of the churn measure's ok rows at the highest thread
    count, in order of first appearance; a point whose last checkpoint was not read is out."""
    mr = [r for r in V.ok(rows) if not V.is_census(r) and pattern_of(r) == "churn"]
    out = []
    for v, rr in by_point(mr):
        keys = checkpoint_keys(rr[0])
        rr = [r for r in rr if held_fraction(r, keys[-1]) is not None]
        if rr:
            out.append((v, rr, keys))
    return out


def churn_text(rows):
    """The churn measure: per allocator the RSS peak, held at each checkpoint after the
    last thread exited, and returned at the last (1 - held); the allocator returning most,
    and hoard2026's best beside the best production allocator (a ratio, by the interval)."""
    pts = churn_points(rows)
    if not pts:
        return []
    r0 = pts[0][1][0]
    keys = pts[0][2]
    last = keys[-1]
    out = ["### Thread churn, then idle: what comes back %s after the threads are gone"
           % spoken(last), "",
           "The phased workload with `churn = %d`: each thread's share is run by %d threads "
           "in turn (created, allocate, exit), blocks of %d..%d B; the last of each keeps "
           "%s at its drain and exits; the process then idles with no worker thread and RSS "
           "is read %s after the last exit. Held: RSS less LazyFree over the peak before the "
           "drain (the higher of the spike's sampled peak and RSS at the drain), both less "
           "the harness's own tables of live blocks; returned: 1 - held at %s, with its "
           "interval. Median over repetitions." % (
               param(r0, "churn"), param(r0, "churn"), param(r0, "min_size"),
               param(r0, "max_size"),
               "one block in %d (0, k, 2k, ... in allocation order)" % param(r0, "keep_every")
               if param(r0, "keep_every") else
               "the first 1/%d of its blocks" % param(r0, "keep_first")
               if param(r0, "keep_first") else "a share of its blocks (`drain`)",
               ", ".join(spoken(k) for k in keys), spoken(last)), ""]
    rs, ret = [], {}
    for v, rr, ks in pts:
        peak = V.spread_of([peak_kb(r) * 1024 for r in rr])
        cells = [v, policy_text(rr[0]), F.pm(peak, F.mib)]
        cells += [F.pm(V.spread_of([held_fraction(r, k) for r in rr]), "%.2f") for k in ks]
        ret[v] = (rr, V.spread_of([1 - held_fraction(r, ks[-1]) for r in rr]),
                  V.spread_of([held_fraction(r, ks[-1]) for r in rr]))
        cells.append(F.iv(ret[v][1]))
        rs.append(cells)
    out += [F.table(["allocator", "policy", "RSS peak MiB"] +
                    ["held %s" % spoken(k) for k in keys] +
                    ["returned %s" % spoken(last)], rs), ""]
    most = max(ret, key=lambda v: ret[v][1].med)
    out.append("- Returns most %s after: `%s`, %s of its peak." % (
        spoken(last), most, F.iv(ret[most][1])))
    best = {}
    for kind, test in (("hoard2026", lambda r: r.get("strategy") == "hoard2026"),
                       ("production", lambda r: r.get("alloc_kind") == "production")):
        cands = [(s[2].med, v, s[2]) for v, s in ret.items() if test(s[0][0])]
        if cands:
            best[kind] = min(cands)[1:]
    if len(best) == 2:
        (v26, h26), (vp, hp) = best["hoard2026"], best["production"]
        q = V.ratio(h26, hp)
        out.append("- `hoard2026`'s policy holding least, `%s` (%s), against the production "
                   "allocator holding least, `%s` (%s): held ratio %s: %s." % (
                       v26, F.iv(h26), vp, F.iv(hp), F.iv(q),
                       V.decided(decide(q, "<=", 1.0), "holds no more", "holds more")))
    else:
        out.append("- `hoard2026` against the production allocators: not measured.")
    return out + [""]
