"""Generic knob comparisons: for every swept knob, throughput and A/U by value, each against
the knob's reference value: the sweep's `baseline` allocator's value where it has one, else
the knob's default (meta.json's configuration table), else the first value."""
from .. import fmt as F, verdicts as V


def reference_value(knob, vals, rows, meta):
    """(the reference value of `knob` among vals, why it is the reference)."""
    base = (meta.get("sweep") or {}).get("baseline")
    got = {str(r["knob." + knob]) for r in rows
           if r.get("variant") == base and r.get("knob." + knob) is not None}
    if len(got) == 1 and next(iter(got)) in vals:
        return next(iter(got)), "the baseline `%s`'s" % base
    table = meta.get("config_table")
    for o in table if isinstance(table, list) else ():
        if isinstance(o, dict) and o.get("name") == knob and str(o.get("default")) in vals:
            return str(o["default"]), "the default"
    return vals[0], "the first value"


def knob_cells(rr, knob, vals, t):
    """The cells of one workload and strategy: each value's throughput (its ratio to the
    reference, vals[0]) / A/U at t; '–' where the value was not measured."""
    cells, ref = [], None
    for val in vals:
        x = V.spread_of([r["throughput"] for r in rr if str(r["knob." + knob]) == val
                         and r["threads"] == t])
        fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rr
                          if str(r["knob." + knob]) == val and r["threads"] == t])
        if val == vals[0]:
            ref = x
        q = V.ratio(x, ref) if x is not None and ref is not None and x is not ref else None
        vs_ref = "" if q is None else " (%s%s)" % (
            F.pm(q, "x%.2f"), ", %s" % V.WITHIN_NOISE if V.check(q, ">", 1.0) is None else "")
        cells.append("%s%s%s" % (F.pm(x), vs_ref, (" / %s" % F.pm(fr, "%.2f")) if fr else ""))
    return cells


def knob_table(rows, knob, vals, ncores):
    """The rows of one knob's table (workload, strategy, threads, one cell per value)."""
    rs = []
    timing = V.timing_rows(rows)
    for w in sorted({r["workload_label"] for r in timing}):
        for strat in sorted({r["strategy"] for r in timing if r.get("knob." + knob) is not None}):
            rr = [r for r in timing if r["workload_label"] == w and
                  r["strategy"] == strat and r.get("knob." + knob) is not None]
            if rr:
                t = V.timing_threads([r["threads"] for r in rr], ncores)
                rs.append([w, strat, V.threads_text(rr, w, t)] + knob_cells(rr, knob, vals, t))
    return rs


def swept_knobs(rows):
    """{knob: its values measured} of every knob swept over two or more values."""
    out = {}
    for knob in sorted({k[5:] for r in rows for k in r if k.startswith("knob.")} - {"census"}):
        vals = sorted({str(r["knob." + knob]) for r in V.ok(rows)
                       if r.get("knob." + knob) is not None})
        if len(vals) >= 2 and knob != "empty_fraction":
            out[knob] = vals
    return out


def knob_section(rows, meta, ncores=None):
    """Generic: for every swept knob, throughput and A/U by value against its reference."""
    ncores = ncores or F.cores_of(meta, rows)
    out = []
    for knob, vals in swept_knobs(rows).items():
        ref, why = reference_value(knob, vals, rows, meta)
        vals = [ref] + [v for v in vals if v != ref]
        rs = knob_table(rows, knob, vals, ncores)
        keep = [i for i in range(len(vals)) if any(r[3 + i] != "–" for r in rs)]
        if not rs or not keep:
            continue
        out += ["### Knob `%s`" % knob, "",
                F.table(["workload", "strategy", "threads"] +
                        ["%s=%s" % (knob, vals[i]) for i in keep],
                        [r[:3] + [r[3 + i] for i in keep] for r in rs]), "",
                "Cells: median throughput (ops/s), in brackets its ratio to the reference "
                "`%s=%s` (%s; *%s* when the ratio's interval contains 1: no evidence the knob "
                "changed the speed) / A/U, at P (the thread-count rule in the header)."
                % (knob, ref, why, V.WITHIN_NOISE), ""]
    if out:
        out = ["## Knob comparisons", ""] + out
    return out
