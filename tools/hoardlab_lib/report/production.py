"""Every allocator against the best production allocator per workload and thread count."""
from .. import fmt as F, verdicts as V


def production_section(rows):
    """The best production allocator per workload and thread count (the fastest of all the
    production allocators measured, by median throughput), the runner-up, and every hoardlab
    allocator relative to the best."""
    rank = V.production_ranking(rows)
    prod = sorted({v for lst in rank.values() for v, _ in lst})
    if len(prod) < 2:       # one production allocator: the throughput tables say it all
        return []
    tab = V.throughput_spreads(rows)
    hl = [v for v in V.variants(rows) if any(
        r["variant"] == v and r.get("alloc_kind") != "production" for r in V.timing_rows(rows))]
    out = ["## Against the best production allocator", "",
           "Per workload and thread count, the production allocator with the highest median "
           "throughput among the %d measured (%s), the runner-up with its throughput relative "
           "to the best, and each other allocator's median throughput relative to the best "
           "(above 1: faster than every production allocator measured). A ratio whose interval "
           "contains 1 is within noise." % (len(prod), ", ".join(prod)),
           ""]
    rs = []
    ratios = {v: [] for v in hl}
    for (wl, t) in sorted(rank):
        (best, bthr), rest = rank[(wl, t)][0], rank[(wl, t)][1:]
        b = tab.get((best, wl, t))
        cells = [wl, V.threads_text(rows, wl, t), "%s %s" % (best, F.pm(b)),
                 "%s (%s)" % (rest[0][0], F.pm(V.ratio(tab.get((rest[0][0], wl, t)), b), "%.2f"))
                 if rest else "–"]
        for v in hl:
            x = V.ratio(tab.get((v, wl, t)), b)
            cells.append(F.pm(x, "%.2f") if x else "–")
            if x:
                ratios[v].append(x.med)
        rs.append(cells)
    out += [F.table(["workload", "threads", "best production (ops/s)", "runner-up"] + hl, rs),
            ""]
    wins = {}
    for lst in rank.values():
        wins[lst[0][0]] = wins.get(lst[0][0], 0) + 1
    out.append("- best production allocator in how many of the %d cells: %s" % (
        len(rank), ", ".join("%s %d" % (v, n)
                             for v, n in sorted(wins.items(), key=lambda vn: (-vn[1], vn[0])))))
    for v in hl:
        g = V.gmean(ratios[v])
        if g:
            out.append("- %s / best production, geometric mean over the %d cells: %.2f"
                       % (v, len(ratios[v]), g))
    excluded = sorted({r["workload_label"] for r in V.timing_rows(rows)
                       if r["workload_label"].startswith(V.TIMING_WORKLOADS_EXCLUDED)})
    if excluded:
        out.append("- not ranked (memory workloads): " + ", ".join(excluded))
    return out + [""]
