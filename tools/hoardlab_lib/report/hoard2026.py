"""The report section of the Hoard 2026 sweep (configs/sweeps/hoard2026.ini): the
paper's `hoard`, each 2026 element alone as a knob of it (TLAB, 8 global-heap shards, `cpu`
heap selection), all of them (the `hoard2026` strategy) and the production allocators. An
ablation table of time and memory, the blowup verdict against the design's O(1) bound,
hoard2026 beside the best production allocator (ratios and the directions their intervals
decide: a development aim is not judged here), and the directions of PR 88's own tables
beside the directions measured here."""
from .. import fmt as F, verdicts as V

# (label in the shipped sweep, what it is, strategy, knobs text as runs.csv writes it)
ELEMENTS = (("hoard", "paper Hoard", "hoard", ""),
            ("hoard-tlab", "TLAB alone", "hoard", "tlab=on"),
            ("hoard-shards", "8 global-heap shards alone", "hoard", "global_shards=8"),
            ("hoard-cpu", "`cpu` heap selection alone", "hoard", "heap_select=cpu"),
            ("hoard2026", "all of them (`hoard2026`)", "hoard2026", ""))
PRODUCTION = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc",
              "tcmalloc-google")
SPEED = ("larson", "threadtest", "linux-scalability", "shbench")   # set beside production
WORKLOADS = ("larson", "threadtest", "linux-scalability", "realloc-churn", "shbench")
BLOWUP = ("blowup-prodcons", "blowup-roundrobin")
BLOWUP_CHECKED = ("hoard2026", "hoard-shards")

# PR 88's tables (192-core, 2-node NUMA machine), columns Hoard, mimalloc, jemalloc, glibc,
# rows 16..256 threads: seconds (lower is faster) and MB. Phong is the realloc-heavy one
# (realloc-churn here). Larson's throughput table is not in the PR text, only its memory.
PR_COLS = ("hoard", "mimalloc", "jemalloc", "glibc")
PR88 = {
    "threadtest": {
        "time": {16: (2.89, 3.07, 7.90, 6.49), 32: (1.52, 1.55, 3.83, 3.42),
                 64: (2.41, 0.74, 1.94, 1.66), 128: (0.94, 0.43, 1.27, 0.98),
                 192: (0.48, 0.35, 0.94, 0.76), 256: (0.42, 0.43, 1.01, 0.90)},
        "memory": {16: (8, 9, 9, 8), 32: (8, 10, 14, 9), 64: (9, 11, 17, 9),
                   128: (10, 14, 22, 10), 192: (10, 16, 28, 11), 256: (11, 18, 28, 11)}},
    "linux-scalability": {
        "time": {16: (0.066, 0.046, 0.044, 0.160), 32: (0.095, 0.067, 0.047, 0.216),
                 64: (0.142, 0.116, 0.064, 0.422), 128: (0.226, 0.211, 0.091, 0.590),
                 192: (0.449, 0.369, 0.073, 1.003), 256: (0.248, 0.177, 0.104, 1.562)},
        "memory": {16: (183, 182, 62, 229), 32: (303, 302, 62, 351), 64: (543, 542, 74, 644),
                   128: (1035, 1034, 86, 1154), 192: (2018, 1526, 74, 1616),
                   256: (1796, 2028, 129, 2115)}},
    "realloc-churn": {
        "time": {16: (4.45, 9.04, 13.02, 18.41), 32: (1.28, 1.83, 2.77, 4.14),
                 64: (0.43, 0.49, 0.64, 1.11), 128: (0.37, 0.23, 0.25, 0.61),
                 192: (0.40, 0.19, 0.22, 0.56), 256: (0.45, 0.19, 0.17, 0.54)},
        "memory": {16: (995, 488, 481, 529), 32: (1000, 510, 487, 541),
                   64: (1012, 560, 508, 565), 128: (1014, 640, 520, 550),
                   192: (1054, 622, 535, 529), 256: (1043, 614, 510, 534)}},
    "larson": {
        "memory": {16: (69, 128, 93, 115), 32: (110, 234, 185, 230), 64: (222, 517, 424, 444),
                   128: (714, 1167, 928, 882), 192: (929, 1918, 1639, 1291),
                   256: (1344, 2576, 2364, 1687)}},
}
# The PR's claims at 1-8 threads (its last commit): Hoard faster than mimalloc, jemalloc and
# glibc on these workloads, by these factors.
PR88_LOW = {"linux-scalability": "5-8x", "threadtest": "2x", "larson": "1.3-1.5x"}


def element_variants(rows):
    """{label: variant} of the ablation's allocators that the sweep measured."""
    res = {}
    for label, _, strat, knobs in ELEMENTS:
        cands = [r["variant"] for r in rows if r.get("strategy") == strat and
                 str(r.get("knobs") or "") == knobs]
        if label in cands:
            res[label] = label
        elif cands:
            res[label] = cands[0]
    return res


def _prod_variants(rows):
    return {p: V.reference_variant(rows, p) for p in PRODUCTION
            if V.reference_variant(rows, p)}


def _sp(rows, variant, wl, t, fn):
    """The Spread over repetitions of fn(row), on the runs of variant, wl and t that count
    (ok, no census)."""
    return V.spread_where([r for r in V.ok(rows) if not V.is_census(r)], fn,
                          variant=variant, workload=wl, threads=t)


def _thr(r):
    return r.get("throughput")


def _rss(r):
    return r["peak_rss_kb"] * 1024 if r.get("peak_rss_kb") is not None else None


def _a(r):
    """The policy's A (None for production allocators, which have no hoardlab statistics)."""
    a, source = V.memory_of(r)
    return a if source == "A" else None


def _pr_direction(wl, metric, other):
    """(rows where Hoard is better than `other`, rows where it is worse, rows) in PR 88's
    table: better = faster (fewer seconds) or less memory; a tie is neither."""
    tab = PR88.get(wl, {}).get(metric)
    if not tab or other not in PR_COLS:
        return None
    i = PR_COLS.index(other)
    return (sum(1 for row in tab.values() if row[0] < row[i]),
            sum(1 for row in tab.values() if row[0] > row[i]), len(tab))


def _word(better, worse):
    return "better" if better > worse else ("worse" if worse > better else "mixed")


def hoard2026_section(rows, rounds, ncores):
    el = element_variants(rows)
    prod = _prod_variants(rows)
    # A section appears only when the sweep measured what it compares: hoard against two or
    # more of the 2026 elements (alone as knobs, or together as hoard2026), or hoard2026
    # against production allocators. One element alone is a one-knob experiment, which the
    # knob table reports; hoard2026 alone among the strategies (taxonomy) gets its taxonomy row.
    compared = [k for k in ("hoard-tlab", "hoard-shards", "hoard-cpu", "hoard2026") if k in el]
    if not (("hoard" in el and len(compared) >= 2) or ("hoard2026" in el and prod)):
        return []
    okr = [r for r in V.timing_rows(rows)]
    ts = sorted({r["threads"] for r in okr if r["workload"] in WORKLOADS})
    tp = V.timing_threads(ts, ncores) or ncores
    out = ["## Hoard 2026 (PR 88) ablation", "",
           "The paper's `hoard`, each 2026 element alone as a knob of `hoard` (a thread-local "
           "allocation buffer, `tlab=on`; the global heap in 8 shards, `global_shards=8`; heap "
           "selection by the CPU running the thread, `heap_select=cpu`), all of them together "
           "(the `hoard2026` strategy, which also uses its own superblock size), and the "
           "production allocators. Not measured in this sweep: %s."
           % (", ".join(l for l, *_ in ELEMENTS if l not in el) or "none of them"), ""]
    var = dict(el)
    var.update(prod)
    h26 = el.get("hoard2026")
    return (out + _time(rows, el, prod, var, ts) + _memory(rows, el, prod, var) +
            _blowup(rows, rounds, el) + _beside_production(rows, h26, prod, tp) +
            _against_pr88(rows, h26, prod, tp) + _pr88_low(rows, h26, prod, tp, ncores))


def _time(rows, el, prod, var, ts):
    """Throughput relative to paper Hoard, per workload and thread count."""
    cols = [l for l, *_ in ELEMENTS[1:]] + [p for p in PRODUCTION if p in prod]
    hv = el.get("hoard")
    rs = []
    for wl in WORKLOADS:
        for t in ts:
            ref = _sp(rows, hv, wl, t, _thr) if hv else None
            if ref is None and not any(_sp(rows, var[c], wl, t, _thr)
                                       for c in cols if c in var):
                continue
            cells = [wl, t, F.pm(ref) if ref else "not measured"]
            for c in cols:
                x = _sp(rows, var[c], wl, t, _thr) if c in var else None
                cells.append("not measured" if x is None else
                             (F.pm(V.ratio(x, ref), "%.2f") if ref else F.pm(x)))
            rs.append(cells)
    return ["### Time: throughput relative to paper Hoard", "",
            F.table(["workload", "threads", "hoard (ops/s)"] + cols, rs), "",
            "Median throughput over repetitions / paper Hoard's at the same workload and "
            "thread count (above 1: faster than paper Hoard); a ratio whose ± reaches 1 is "
            "within noise.", ""]


def _memory(rows, el, prod, var):
    """Peak RSS and A at the lowest and highest thread count."""
    hv = el.get("hoard")
    rs = []
    mcols = [l for l, *_ in ELEMENTS] + [p for p in PRODUCTION if p in prod]
    for wl in WORKLOADS + BLOWUP:
        wts = sorted({r["threads"] for r in V.ok(rows) if r["workload"] == wl})
        for t in wts:
            if t != min(wts) and t != max(wts):
                continue
            refa = _sp(rows, hv, wl, t, _a) if hv else None
            cells = [wl, t]
            for c in mcols:
                if c not in var:
                    cells.append("not measured")
                    continue
                rss, a = _sp(rows, var[c], wl, t, _rss), _sp(rows, var[c], wl, t, _a)
                if rss is None and a is None:
                    cells.append("–")
                    continue
                txt = "RSS %s" % F.pm(rss, F.mib)
                if a is not None:
                    txt += ", A %s%s" % (F.pm(a, F.mib), " (%s)" % F.pm(V.ratio(a, refa), "%.2f")
                                         if refa and c != "hoard" else "")
                cells.append(txt)
            rs.append(cells)
    return ["### Memory: peak RSS and A, MiB", "",
            F.table(["workload", "threads"] + mcols, rs), "",
            "Median over repetitions at the lowest and highest thread count measured. RSS = "
            "peak resident set of the process (comparable across every allocator); A = peak "
            "bytes hoardlab held from the OS (hoardlab allocators only), in brackets / paper "
            "Hoard's A.", ""]


def _blowup(rows, rounds, el):
    """The blowup verdict of the elements that must keep it O(1): the Hoard paper's bound,
    which DESIGN.md's table claims for hoard2026 too ("O(1), to be shown")."""
    out = ["### Blowup", ""]
    ref = V.reference_variant(rows, "serial")
    for label in BLOWUP_CHECKED:
        v = el.get(label)
        if not v:
            out.append("- %s: not measured" % label)
            continue
        b = V.blowup(rows, rounds, v, ref)
        have = sorted({r["workload"] for r in V.ok(rows) if r["variant"] == v and
                       r["workload"] in BLOWUP})
        miss = [w for w in BLOWUP if w not in have]
        out.append("- %s: blowup %s — %s%s; the design claims O(1) (Hoard's bound, DESIGN.md) "
                   "on both blowup workloads — %s" % (
            label, b["value"], b["evidence"], (" (%s)" % b["note"]) if b["note"] else "",
            "not decided (%s not measured)" % ", ".join(miss) if miss else
            ("undecided" if b["value"] == "undecided" else F.mark(b["value"] == "O(1)"))))
    out += ["", "Rule: " + V.RULES["blowup"], ""]
    return out


def _beside_production(rows, h26, prod, tp):
    """hoard2026 beside the best production allocator's speed and mimalloc's peak RSS: each
    ratio with its interval and the direction it decides. No verdict of agreement: being as
    fast as the best production allocator is a development aim, which no paper claims."""
    out = ["### hoard2026 beside the production allocators", ""]
    rank = V.production_ranking(rows)
    if not h26:
        out += ["- hoard2026: not among this sweep's allocators; nothing to set beside them.", ""]
    else:
        for wl in SPEED:
            for t in sorted({1, tp}):
                x = _sp(rows, h26, wl, t, _thr)
                best = rank.get((wl, t))
                if x is None or not best:
                    out.append("- %s at t=%d: not measured (%s)" % (
                        wl, t, "hoard2026" if x is None else "no production allocator"))
                    continue
                bv = best[0][0]
                bx = _sp(rows, bv, wl, t, _thr)
                q = V.ratio(x, bx)
                out.append("- %s at t=%d: hoard2026 %s ops/s, best production %s %s (%sx) — "
                           "%s" % (wl, t, F.pm(x), bv, F.pm(bx), F.iv(q),
                                   F.direction(q, "faster", "slower")))
        mi = prod.get("mimalloc")
        for wl in WORKLOADS + BLOWUP:
            wts = [r["threads"] for r in V.ok(rows) if r["workload"] == wl]
            if not wts:
                continue
            t = max(wts)
            a, m = _sp(rows, h26, wl, t, _rss), _sp(rows, mi, wl, t, _rss) if mi else None
            if a is None or m is None:
                out.append("- %s at t=%d, peak RSS: not measured (%s)" % (
                    wl, t, "hoard2026" if a is None else "mimalloc"))
                continue
            q = V.ratio(a, m)
            out.append("- %s at t=%d, peak RSS: hoard2026 %s MiB, mimalloc %s MiB (%sx) — %s"
                       % (wl, t, F.pm(a, F.mib), F.pm(m, F.mib), F.iv(q),
                          F.direction(q, "more", "less")))
        out.append("")
    return out


def _against_pr88(rows, h26, prod, tp):
    """PR 88's tables beside the direction measured here, per workload, metric and allocator."""
    out = ["### Against PR 88's tables", "",
            "PR 88 measured on a 192-core, 2-node NUMA machine at 16 to 256 threads (Larson: "
            "memory only; Phong, its realloc-heavy benchmark, stands against realloc-churn "
            "here). Per workload and allocator: in how many of its thread counts Hoard was "
            "better (faster, or less memory), and the direction this machine measured for "
            "hoard2026 (throughput ratio, or peak RSS ratio, hoard2026 / the other; `mimalloc` "
            "of the PR against both mimalloc 2.0 and mimalloc3 here).", ""]
    rs = []
    for wl in ("larson", "threadtest", "linux-scalability", "realloc-churn"):
        for metric in ("time", "memory"):
            if metric not in PR88.get(wl, {}):
                continue
            for other in ("mimalloc", "mimalloc3", "jemalloc", "glibc"):
                k, j, n = _pr_direction(wl, metric, "mimalloc" if other == "mimalloc3"
                                        else other)
                ov = prod.get(other)
                pr = _word(k, j)
                cells = [wl, metric, other, "better in %d, worse in %d of %d: %s"
                         % (k, j, n, pr)]
                dirs = []
                for t in sorted({1, tp}):
                    if not h26 or not ov:
                        cells.append("not measured")
                        continue
                    if metric == "time":
                        a, b = _sp(rows, h26, wl, t, _thr), _sp(rows, ov, wl, t, _thr)
                        better = V.ratio(a, b)
                    else:
                        a, b = _sp(rows, h26, wl, t, _rss), _sp(rows, ov, wl, t, _rss)
                        better = V.ratio(b, a)
                    if better is None:
                        cells.append("not measured")
                        continue
                    word = {True: "better", False: "worse", None: V.WITHIN_NOISE}[
                        V.check(better, ">", 1.0)]
                    dirs.append(word)
                    cells.append("%s (%s)" % (F.pm(V.ratio(a, b), "%.2f"), word))
                same = "–" if not dirs else (
                    V.WITHIN_NOISE if dirs[-1] == V.WITHIN_NOISE else
                    "same" if dirs[-1] == pr else ("PR mixed" if pr == "mixed" else "opposite"))
                rs.append(cells + [same])
    out += [F.table(["workload", "metric", "vs", "PR 88, Hoard at 16-256 threads"] +
                    ["here t=%d" % t for t in sorted({1, tp})] + ["direction at t=%d" % tp],
                    rs), ""]
    return out


def _pr88_low(rows, h26, prod, tp, ncores):
    """PR 88's claims at 1-8 threads, and what this machine's cores can confirm."""
    out = []
    if h26:
        for wl, factor in PR88_LOW.items():
            x = {t: _sp(rows, h26, wl, t, _thr) for t in sorted({1, tp})}
            others = [o for o in ("mimalloc", "jemalloc", "glibc") if o in prod]
            for t, xv in x.items():
                ys = {o: _sp(rows, prod[o], wl, t, _thr) for o in others}
                ys = {o: y for o, y in ys.items() if y and y.med}
                if not xv or not ys:
                    continue
                out.append("- PR 88 at 1-8 threads: Hoard %s faster than mimalloc, jemalloc "
                           "and glibc on %s. Here at t=%d (the direction only: faster than "
                           "each), hoard2026 / %s — %s" % (
                               factor, wl, t, ", ".join("%s %s" % (o, F.iv(V.ratio(xv, y)))
                                                        for o, y in sorted(ys.items())),
                               F.mark(V.all_hold(*[V.differ(xv, y) for y in ys.values()]))))
    out += ["- What %d cores can confirm: the direction of each comparison at 1 and %d "
            "threads, single-thread speed, and memory bounds (the blowup verdict does not "
            "depend on timing). What they cannot: every PR table row is at 16 threads or "
            "more on a 2-node NUMA machine, so contention among many heaps, the cost of "
            "`tid %% heaps` collisions that `cpu` selection removes, and cross-node traffic "
            "the shards avoid cannot appear here; a PR row and a measurement here that "
            "differ in direction are not a contradiction, only unconfirmed." % (ncores, tp), ""]
    return out
