"""Michael's Figure 8 (PLDI 2004) from a sweep's rows: per panel (a workload, prodcons at three
amounts of work), each allocator's throughput at each thread count and its speedup over
contention-free glibc; what the Michael section (michael.py) and its plot (plots.py) read.
The allocators compared: the paper's (lockfree, hoard, ownership, glibc) and the other
production allocators."""
from .. import verdicts as V

PAPER_SET = ("lockfree", "hoard", "ownership")      # the paper's allocators besides libc
PRODUCTION = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc",
              "tcmalloc-google")
# Figure 8's panels: (letter, hlbench workload, prodcons work or None).
FIG8 = (("a", "linux-scalability", None), ("b", "threadtest", None), ("c", "active-false", None),
        ("d", "passive-false", None), ("e", "larson", None), ("f", "prodcons", 500),
        ("g", "prodcons", 750), ("h", "prodcons", 1000))


def panel_name(p):
    letter, wl, work = p
    return "(%s) %s%s" % (letter, wl, " work=%d" % work if work is not None else "")


def panel_of(r):
    for p in FIG8:
        if r["workload"] != p[1]:
            continue
        if p[2] is None:
            return p
        w = r.get("params.work")
        if w is None and p[2] == 500:       # the workload's default
            return p
        try:
            if w is not None and int(w) == p[2]:
                return p
        except (TypeError, ValueError):
            pass
    return None


def allocators(rows):
    """{name: variant} for the allocators of the comparison that the sweep measured: the
    paper's (lockfree, hoard, ownership, glibc) and the other production allocators, each the
    variant without knob overrides."""
    res = {}
    for name in PAPER_SET + PRODUCTION:
        v = V.reference_variant(rows, name)
        if v:
            res[name] = v
    return res


def _figure8_throughputs(rows):
    """{panel: {variant: {threads: [throughput of each timing row]}}}."""
    acc = {}
    for r in V.timing_rows(rows):
        p = panel_of(r)
        if p:
            acc.setdefault(p, {}).setdefault(r["variant"], {}).setdefault(
                r["threads"], []).append(r["throughput"])
    return acc


def _per_cell(rows, fn):
    return {p: {v: {t: fn(xs) for t, xs in byt.items()} for v, byt in byv.items()}
            for p, byv in _figure8_throughputs(rows).items()}


def figure8_data(rows):
    """{panel: {variant: {threads: median throughput}}} over timing rows."""
    return _per_cell(rows, V.median)


def figure8_spreads(rows):
    """{panel: {variant: {threads: Spread of throughput}}} over timing rows."""
    return _per_cell(rows, V.spread_of)


def _over_glibc_at_1(data, names, cell):
    """{panel: {allocator name: cell(values by threads, glibc's value at 1 thread)}} for the
    panels where glibc was measured at 1 thread."""
    res = {}
    g = names.get("glibc")
    for p in FIG8:
        d = data.get(p)
        base = d.get(g, {}).get(1) if d and g else None
        if base:
            res[p] = {n: cell(d[v], base) for n, v in names.items() if v in d}
    return res


def figure8_ratio_spreads(rows):
    """{panel: {allocator name: {threads: Spread of throughput / glibc's at 1 thread}}}."""
    return _over_glibc_at_1(figure8_spreads(rows), allocators(rows), lambda byt, base: {
        t: V.ratio(x, base) for t, x in byt.items() if V.ratio(x, base)})


def figure8_speedups(rows):
    """{panel: {allocator name: [(threads, speedup over glibc at 1 thread)]}} for panels where
    glibc was measured at 1 thread."""
    return _over_glibc_at_1(figure8_data(rows), allocators(rows), lambda byt, base: sorted(
        (t, x / base) for t, x in byt.items() if x))
