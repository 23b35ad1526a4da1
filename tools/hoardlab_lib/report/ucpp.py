"""The uC++ report's padding experiment: concurrent's free-list heads padded or not."""
from .. import fmt as F, verdicts as V


def ucpp(rows, ncores):
    conc = [r for r in V.timing_rows(rows) if r.get("strategy") == "concurrent" and
            r["workload"] in ("ucpp-unique", "ucpp-random")]
    pads = {}
    for r in conc:
        p = str(r.get("knob.padding", "off"))
        pads.setdefault(V.truthy(p), set()).add(r["variant"])
    if len(pads) < 2:
        return []
    p = V.timing_threads([r["threads"] for r in conc if r["threads"] > 1], ncores)
    out = ["## Padding the free-list heads (uC++ report)", "",
           "Speedup over 1 thread of `concurrent` with padding off and on, at P = %s (the "
           "thread-count rule in the header; %d cores). The uC++ report found a slowdown with "
           "threads on ucpp-unique without padding, removed by padding each free-list head to "
           "a cache line." % (p or "–", ncores), ""]
    rs, checks = [], []
    for w in ("ucpp-unique", "ucpp-random"):
        s = {}
        for on, vs in sorted(pads.items()):
            for v in sorted(vs):
                sp = V.speedup_spreads(rows, v, (w,), max_threads=p)
                if w in sp:
                    s[(on, v)] = sp[w]
        if not s:
            continue
        for (on, v), (x, t) in sorted(s.items()):
            def census(field):
                vals = [r.get(field) for r in V.ok(rows)
                        if r["variant"] == v and r["workload"] == w and V.is_census(r) and
                        r.get(field) is not None]
                return max(vals) if vals else "–"
            rs.append([w, v, "on" if on else "off", "%s (t=%d)" % (F.pm(x, "%.2f"), t),
                       census("hoardlab.census_false_blocks"),
                       census("hoardlab.census_meta_false")])
        if w == "ucpp-unique":
            off = [x for (on, _), (x, _) in s.items() if not on]
            on_ = [x for (on, _), (x, _) in s.items() if on]
            if off and on_:
                lo, hi = min(off, key=lambda x: x.med), max(on_, key=lambda x: x.med)
                checks.append("padding=off slows down with threads (S < 1): S = %s — %s"
                              % (F.iv(lo), F.mark(V.check(lo, "<", 1.0))))
                checks.append("padding=on removes the slowdown (S >= 1 and above off): "
                              "S = %s against %s — %s" % (F.iv(hi), F.iv(lo), F.mark(V.all_hold(
                                  V.check(hi, ">=", 1.0), V.differ(hi, lo)))))
            meta = {row[2]: row[5] for row in rs if row[0] == w and row[5] != "–"}
            if "off" in meta and "on" in meta:
                checks.append("the census sees the free-list heads falsely shared with "
                              "padding off (> 0) and not with it on (0): %s and %s — %s"
                              % (meta["off"], meta["on"],
                                 F.mark(meta["off"] > 0 and meta["on"] == 0)))
    if not rs:
        return []
    out += [F.table(["workload", "allocator", "padding", "speedup", "census blocks",
                   "census metadata"], rs), ""]
    out += ["- " + c for c in checks]
    out += ["", "census blocks: blocks handed out on a line another thread held (the program's "
            "data); census metadata: touches of a free-list head on a cache line last touched "
            "by another thread for another list (the allocator's own data, which padding "
            "separates).", ""]
    return out
