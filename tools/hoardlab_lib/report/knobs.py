"""Generic knob comparisons: for every swept knob, throughput and A/U by value."""
from .. import fmt as F, verdicts as V


def knob_section(rows, meta, ncores=None):
    """Generic: for every swept knob, throughput and A/U by value."""
    swept = sorted({k[5:] for r in rows for k in r if k.startswith("knob.")} - {"census"})
    ncores = ncores or F.cores_of(meta, rows)
    out = []
    for knob in swept:
        vals = sorted({str(r["knob." + knob]) for r in V.ok(rows)
                       if r.get("knob." + knob) is not None})
        if len(vals) < 2 or knob == "empty_fraction":
            continue
        out += ["### Knob `%s`" % knob, ""]
        rs = []
        for w in sorted({r["workload_label"] for r in V.timing_rows(rows)}):
            for strat in sorted({r["strategy"] for r in V.timing_rows(rows)
                                 if r.get("knob." + knob) is not None}):
                rr = [r for r in V.timing_rows(rows) if r["workload_label"] == w and
                      r["strategy"] == strat and r.get("knob." + knob) is not None]
                if not rr:
                    continue
                t = V.timing_threads([r["threads"] for r in rr], ncores)
                cells = [w, strat, V.threads_text(rr, w, t)]
                first = None
                for val in vals:
                    x = V.spread_of([r["throughput"] for r in rr if str(r["knob." + knob]) == val
                                     and r["threads"] == t])
                    fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rr
                                      if str(r["knob." + knob]) == val and r["threads"] == t])
                    first = first or x
                    q = V.ratio(x, first) if x is not first else None
                    vs_first = "" if q is None else " (%s%s)" % (
                        F.pm(q, "x%.2f"), ", %s" % V.WITHIN_NOISE
                        if V.check(q, ">", 1.0) is None else "")
                    cells.append("%s%s%s" % (F.pm(x), vs_first,
                                             (" / %s" % F.pm(fr, "%.2f")) if fr else ""))
                rs.append(cells)
        out += [F.table(["workload", "strategy", "threads"] + ["%s=%s" % (knob, v) for v in vals],
                      rs), "", "Cells: median throughput (ops/s), in brackets its ratio to the "
                "first column's (`%s=%s`; *%s* when the ratio's interval contains 1: no "
                "evidence the knob changed the speed) / A/U, at P (the thread-count rule in "
                "the header)." % (knob, vals[0], V.WITHIN_NOISE), ""]
    if out:
        out = ["## Knob comparisons", ""] + out
    return out
