"""The report's section on latency, from the columns runkit/tidy.py makes of a record's
`latency` (hlbench's sampled percentiles of malloc and free): the percentiles per workload
and allocator, the other threads' latency while the `stall` workload pauses one, and
latency-<workload>.png (the sampled percentiles as a CDF). It appears only when the sweep
measured latency: results from before hlbench sampled it have no such column."""
import math
import textwrap

from .. import fmt as F, plotkit as K, verdicts as V
from .michael import STALL_WORKLOAD

PERCENTILES = (("p50", "p50_ns", 0.5), ("p90", "p90_ns", 0.9), ("p99", "p99_ns", 0.99),
               ("p99.9", "p999_ns", 0.999), ("max", "max_ns", None))
OPS = ("malloc", "free")
STALL_MODES = ("undelayed", "outside", "delayed")     # stall.c's modes, in its order


def ns(x):
    """A latency in ns, µs or ms, three significant digits."""
    if x is None:
        return "–"
    for div, unit in ((1e6, "ms"), (1e3, "µs")):
        if abs(x) >= div:
            return "%.3g %s" % (x / div, unit)
    return "%.3g ns" % x


def timed(rows):
    """The ok, non-census rows whose record carried latency percentiles."""
    return [r for r in V.ok(rows) if not V.is_census(r) and
            any(r.get("latency.%s_p50_ns" % op) is not None for op in OPS)]


def latency_cells(rr, op):
    """The medians (with spread) of one operation's percentiles over the rows rr."""
    return [F.pm(V.spread_of([r.get("latency.%s_%s" % (op, k)) for r in rr]), ns)
            for _, k, _ in PERCENTILES]


def latency_section(rows, ncores):
    tr = timed(rows)
    if not tr:
        return []
    every = sorted({r.get("latency.sample_every") for r in tr} - {None})
    clocks = sorted({str(r.get("latency.clock")) for r in tr} - {"None"})
    over = V.spread_of([r.get("latency.overhead_ns") for r in tr])
    out = ["## Latency", "",
           "hlbench times one malloc and one free in every %s (`sample_every`) with %s and "
           "keeps a log-bucketed histogram per thread, merged at the end; a cell is the "
           "median over repetitions of the run's percentile, at P (the thread-count rule in "
           "the header), in ns, µs or ms. The cost of reading the clock, as hlbench measured "
           "it: %s ns. Samples: the median number of timed operations of a run. "
           "latency-<workload>.png draws these percentiles as a CDF."
           % (" or ".join(str(e) for e in every) or "?", " or ".join(clocks) or "a clock",
              F.pm(over, "%.3g")), ""]
    rs = []
    for w in sorted({r["workload_label"] for r in tr}):
        t = V.timing_threads([r["threads"] for r in tr if r["workload_label"] == w], ncores)
        for v in V.variants(tr):
            rr = [r for r in tr if r["workload_label"] == w and r["variant"] == v and
                  r["threads"] == t]
            for op in OPS:
                if not rr or all(r.get("latency.%s_p50_ns" % op) is None for r in rr):
                    continue
                n = V.median([r.get("latency.%s_samples" % op) for r in rr])
                rs.append([w, V.threads_text(rr, w, t), v, op] + latency_cells(rr, op) +
                          [F.si(n)])
    out += [F.table(["workload", "threads", "allocator", "op"] +
                    [p for p, _, _ in PERCENTILES] + ["samples"], rs), ""]
    return out + stall_table(rows)


def stall_column(mode, op, key):
    """runs.csv's column of one percentile of the other threads in a mode of `stall`: the
    record's extra.latency_<mode> (hlbench's stall.c), flattened by tidy."""
    return "extra.latency_%s.%s.%s" % (mode, op, key)


def stall_modes(r):
    """The modes of `stall` whose latency the row carries, in stall.c's order."""
    return [m for m in STALL_MODES if any(r.get(stall_column(m, op, "p50_ns")) is not None
                                          for op in OPS)]


def stall_table(rows):
    """Who waits when a thread stalls? The other threads' latency in each mode of `stall`."""
    sr = [r for r in V.ok(rows) if r["workload"] == STALL_WORKLOAD and stall_modes(r)]
    if not sr:
        return []
    out = ["### Who waits when a thread stalls?", "",
           "The `stall` workload pauses thread 0 inside malloc or free (`delayed`), at the "
           "top of its loop (`outside`, the control) or not at all (`undelayed`); these are "
           "the OTHER threads' latencies in each mode. An allocator whose threads wait for "
           "a lock the paused thread holds shows it in the tail (p99.9, max) of `delayed`, "
           "not in `outside`. Last column: the ratio of the medians of p99.9, delayed / "
           "outside, with its spread (1 ±p% reaching across 1: within noise).", ""]
    rs = []
    for v in V.variants(sr):
        rr = [r for r in sr if r["variant"] == v]
        t = max(r["threads"] for r in rr)
        rr = [r for r in rr if r["threads"] == t]
        for op in OPS:
            tail = {m: V.spread_of([r.get(stall_column(m, op, "p999_ns")) for r in rr])
                    for m in STALL_MODES}
            q = V.ratio(tail["delayed"], tail["outside"])
            for m in stall_modes(rr[0]):
                cells = [F.pm(V.spread_of([r.get(stall_column(m, op, k)) for r in rr]), ns)
                         for _, k, _ in PERCENTILES]
                rs.append([v, t, op, m] + cells + [F.pm(q, "%.2f") if q and m == "delayed"
                                                   else ""])
    return out + [F.table(["allocator", "threads", "op", "mode"] +
                          [p for p, _, _ in PERCENTILES] + ["delayed / outside p99.9"], rs), ""]


def _ns_axis(ax):
    """A log x axis labelled at powers of ten in ns, µs or ms (ns()): '100 ns', '1 µs'; at
    most about six labels, so that they never run into each other."""
    from matplotlib.ticker import (FuncFormatter, LogLocator,  # deferred: slow, optional
                                   NullFormatter)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=6))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: ns(x)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def latency_plots(rows, outdir, ncores):
    """latency-<workload>.png: per operation, the sampled percentiles (p50 .. max) as a CDF on
    a tail axis, a line per allocator; points are medians over repetitions, bars min-max."""
    tr = timed(rows)
    if not tr:
        return []
    plt = K.plt()
    # the tail axis: a percentile q at -log10(1 - q), the maximum one step beyond p99.9
    ys = [-math.log10(1 - q) if q else 4.0 for _, _, q in PERCENTILES]
    files = []
    for w in sorted({r["workload_label"] for r in tr}):
        t = V.timing_threads([r["threads"] for r in tr if r["workload_label"] == w], ncores)
        rs = [r for r in tr if r["workload_label"] == w and r["threads"] == t]
        ops = [op for op in OPS if any(r.get("latency.%s_p50_ns" % op) for r in rs)]
        if not ops:
            continue
        fig, axes = plt.subplots(1, len(ops), figsize=(4.2 * len(ops) + 1.8, 4.2),
                                 squeeze=False)
        for ax, op in zip(axes[0], ops):
            for i, v in enumerate(V.variants(rs)):
                sp = [V.spread_of([r.get("latency.%s_%s" % (op, k)) for r in rs
                                   if r["variant"] == v]) for _, k, _ in PERCENTILES]
                pts = [(s, y) for s, y in zip(sp, ys) if s and s.med and s.med > 0]
                if not pts:
                    continue
                xerr = [[s.med - s.lo for s, _ in pts], [s.hi - s.med for s, _ in pts]]
                ax.errorbar([s.med for s, _ in pts], [y for _, y in pts], xerr=xerr,
                            marker=K.MARKERS[i % len(K.MARKERS)], ms=4, capsize=2, label=v)
            _ns_axis(ax)
            ax.set_yticks(ys)
            ax.set_yticklabels([p for p, _, _ in PERCENTILES])
            ax.set_xlabel("%s latency (log axis)" % op)
            ax.set_ylabel("sampled percentile")
            ax.grid(alpha=0.3)
        K.legend(axes[0, -1])
        fig.suptitle("\n".join(textwrap.wrap(
            "%s, t=%d: latency CDF from the sampled percentiles (median over repetitions; "
            "bars: min-max)" % (w, t), 90, break_on_hyphens=False)), fontsize=10)
        files.append(K.save(fig, outdir, "latency-%s.png" % K.fname(w)))
    return files
