"""Memory at the highest thread count: A, U, A/U and blowup."""
from .. import fmt as F, verdicts as V


def memory_tables(rows):
    okr = [r for r in V.ok(rows) if not V.is_census(r)]
    ref = V.reference_variant(rows, "serial")
    out = ["## Memory", "",
           "At the highest thread count (memory needs no cores), median over repetitions. "
           "A = peak bytes held from "
           "the OS and U = peak bytes in use (hoardlab statistics); allocators without them "
           "show peak RSS. Blowup = A / A of `serial` on the same workload and threads.", ""]
    rs = []
    for w in sorted({r["workload_label"] for r in okr}):
        t = max(r["threads"] for r in okr if r["workload_label"] == w)
        refa = V.spread_of([V.memory_of(r)[0] for r in okr if r["variant"] == ref and
                            r["workload_label"] == w and r["threads"] == t]) if ref else None
        for v in V.variants(okr):
            rr = [r for r in okr if r["variant"] == v and r["workload_label"] == w and
                  r["threads"] == t]
            if not rr:
                continue
            a = V.spread_of([V.memory_of(r)[0] for r in rr])
            src = V.memory_of(rr[0])[1]
            u = V.spread_of([r.get("hoardlab.in_use_peak") for r in rr])
            fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rr])
            bl = V.ratio(a, refa) if src == "A" else None
            rs.append([w, V.threads_text(rr, w, t), v, "%s %s" % (F.pm(a, F.mib), src),
                       F.pm(u, F.mib), F.pm(fr, "%.2f") if fr and fr.med else "–",
                       F.pm(bl, "%.2f") if bl else "–"])
    return out + [F.table(["workload", "threads", "allocator", "MiB held", "MiB U", "A/U",
                         "blowup"], rs), ""]
