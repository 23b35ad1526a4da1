"""Throughput per workload at every thread count measured, with speedups."""
from .. import fmt as F, verdicts as V


def throughput_tables(rows, baseline, ncores=None):
    tab = V.throughput_spreads(rows)
    short = V.short_groups(rows)
    out = ["## Throughput", "",
           "Median operations per second over repetitions, at every thread count measured%s; "
           "the speedup is P's over 1 thread (P: the thread-count rule in the header, or the "
           "highest count when every one is above the cores); `(short)`: runs under %.2g s "
           "(header)." %
           ("; in brackets relative to `%s` at the same thread count" % baseline
            if baseline else "", V.SHORT_RUN_S)]
    for w in sorted({w for (_, w, _) in tab}):
        ts = sorted({t for (_, ww, t) in tab if ww == w})
        rs = []
        for v in V.variants(rows):
            if not any((v, w, t) in tab for t in ts):
                continue
            cells = [v]
            for t in ts:
                x = tab.get((v, w, t))
                ref = tab.get((baseline, w, t)) if baseline and baseline != v else None
                rel = V.ratio(x, ref)
                cells.append("–" if x is None else F.pm(x) + (" (%s)" % F.pm(rel, "%.2f")
                                                             if rel else "") +
                             (" (short)" if (v, w, t) in short else ""))
            p = V.timing_threads(ts[1:], ncores) if ncores else (ts[-1] if ts else None)
            sp = V.ratio(tab.get((v, w, p)), tab.get((v, w, 1))) \
                if len(ts) > 1 and ts[0] == 1 else None
            cells.append(F.pm(sp, "%.2f") if sp else "–")
            rs.append(cells)
        p = V.timing_threads(ts[1:], ncores) if ncores and len(ts) > 1 else ts[-1]
        out += ["", "### %s" % w, "",
                F.table(["allocator"] + ["t=%s" % V.threads_text(rows, w, t) for t in ts] +
                      ["speedup t=%d / t=1" % p if len(ts) > 1 else "speedup"], rs)]
    return out + [""]
