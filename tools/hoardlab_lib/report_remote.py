"""The report section of a remote-free sweep (configs/sweeps/remote-free.ini): every value of
the `remote_free` knob per strategy, against each other and the production allocators, on
the workload that isolates remote frees (xfree), on larson and prodcons, and in memory on the
blowup workloads. Targets of issue 18 are checked from the numbers, never assumed."""
from . import report as R, verdicts as V

WORKLOADS = ("xfree", "larson", "prodcons")
BLOWUP = ("blowup-prodcons", "blowup-roundrobin")


def _med(rows, key, **where):
    return V.median([r.get(key) for r in rows if all(r.get(k) == v for k, v in where.items())])


def _per_free(rows, counter):
    """Median over runs of counter / frees (the run's own hoardlab counters)."""
    return V.median([r["hoardlab." + counter] / r["hoardlab.frees"] for r in rows
                     if r.get("hoardlab." + counter) is not None and r.get("hoardlab.frees")])


def _growth(rounds, rows):
    """Median growth of memory held from round n/4 to the last (1.0 = flat)."""
    gs = [V.rounds_growth(*V.round_series(rounds, r["index"])) for r in rows]
    return V.median([g[0] for g in gs if g])


def remote_free_section(rows, rounds):
    okr = [r for r in V.ok(rows) if not V.is_census(r)]
    keyed = [r for r in okr if r.get("knob.remote_free") not in (None, "")]
    if len({str(r["knob.remote_free"]) for r in keyed}) < 2:
        return []
    t = max(r["threads"] for r in okr)
    out = ["## Remote frees (`remote_free`)", "",
           "Each strategy with every value of `remote_free`: `lock` (the paper: lock the owner "
           "heap for every remote free), `list` (one CAS onto the superblock's remote list) and "
           "`queue` (thread-local batches posted to the owner heap's queue); docs/remote-free.md "
           "says when pending frees are collected. At t=%d, medians over repetitions; in "
           "brackets, the ratio to `lock` of the same strategy. Memory: A (peak bytes held) on "
           "the blowup workloads, in brackets the ratio to `lock`; growth: memory at the last "
           "round over round n/4 (1.00 = flat). Per free: the run's lock acquisitions "
           "(malloc's included) and CAS operations over its frees." % t, ""]
    head = ["strategy", "remote_free"] + ["%s ops/s" % w for w in WORKLOADS] + \
           ["xfree A/U", "locks/free", "CAS/free"] + ["%s A" % w for w in BLOWUP] + ["growth"]
    rs, best = [], {}
    strategies = sorted({r["strategy"] for r in keyed})
    for s in strategies:
        vals = [v for v in ("lock", "list", "queue")
                if any(r["strategy"] == s and str(r["knob.remote_free"]) == v for r in keyed)]
        of = {v: [r for r in keyed if r["strategy"] == s and str(r["knob.remote_free"]) == v]
              for v in vals}
        ref = {}
        for v in vals:
            rr = of[v]
            cells = [s, v]
            for w in WORKLOADS:
                x = _med(rr, "throughput", workload=w, threads=t)
                ref.setdefault(w, x if v == "lock" else None)
                if w == "xfree" and x:
                    best.setdefault(s, {})[v] = x
                cells.append("–" if not x else R.si(x) + (" (%.2f)" % (x / ref[w])
                                                        if ref.get(w) and v != "lock" else ""))
            xr = [r for r in rr if r["workload"] == "xfree" and r["threads"] == t]
            fr = _med(xr, "hoardlab.fragmentation")
            lk, cas = _per_free(xr, "lock_acquisitions"), _per_free(xr, "cas_attempts")
            cells += ["%.2f" % fr if fr else "–", "%.2f" % lk if lk is not None else "–",
                      "%.2f" % cas if cas is not None else "–"]
            grow = []
            for w in BLOWUP:
                br = [r for r in rr if r["workload"] == w and r["threads"] == t]
                a = V.median([V.memory_of(r)[0] for r in br])
                ref.setdefault(w, a if v == "lock" else None)
                cells.append("–" if not a else R.mib(a) + (" (%.2f)" % (a / ref[w])
                                                         if ref.get(w) and v != "lock" else ""))
                g = _growth(rounds, br)
                if g:
                    grow.append("%.2f" % g)
            cells.append(" / ".join(grow) or "–")
            rs.append(cells)
    prod = [r for r in okr if r["alloc_kind"] == "production"]
    for v in V.variants(prod):
        rr = [r for r in prod if r["variant"] == v]
        cells = [v, "–"]
        for w in WORKLOADS:
            x = _med(rr, "throughput", workload=w, threads=t)
            cells.append(R.si(x) if x else "–")
        cells += ["–", "–", "–"]
        for w in BLOWUP:
            a = V.median([V.memory_of(r)[0] for r in rr if r["workload"] == w and
                          r["threads"] == t])
            cells.append(R.mib(a) + " RSS" if a else "–")
        cells.append("–")
        rs.append(cells)
    out += [R.table(head, rs), ""]
    out += _targets(okr, keyed, best, t)
    return out + [""]


def _targets(okr, keyed, best, t):
    """Issue 18's targets, each stated with the numbers that decide it."""
    out = []
    hoard = best.get("hoard", {})
    fast = {v: x for v, x in hoard.items() if v in ("list", "queue")}
    mi3 = _med([r for r in okr if r["variant"] == "mimalloc3"], "throughput", workload="xfree",
               threads=t)
    if fast:
        v = max(fast, key=fast.get)
        if mi3:
            out.append("- xfree at t=%d: hoard's best fast value `%s` %s frees/s, mimalloc3 %s "
                       "(%.2fx); target: at or above mimalloc3 — %s"
                       % (t, v, R.si(fast[v]), R.si(mi3), fast[v] / mi3, R.mark(fast[v] >= mi3)))
        if hoard.get("lock"):
            out.append("- xfree at t=%d: `%s` is %.2fx `lock`; target: at least 5x — %s"
                       % (t, v, fast[v] / hoard["lock"], R.mark(fast[v] >= 5 * hoard["lock"])))
        for w in BLOWUP:
            a = {vv: V.median([V.memory_of(r)[0] for r in keyed if r["strategy"] == "hoard" and
                               str(r["knob.remote_free"]) == vv and r["workload"] == w and
                               r["threads"] == t]) for vv in ("lock", v)}
            if a["lock"] and a[v]:
                out.append("- %s at t=%d: `%s` holds %s, `lock` %s (%.2fx); target: within "
                           "1.2x — %s" % (w, t, v, R.mib(a[v]), R.mib(a["lock"]), a[v] / a["lock"],
                                          R.mark(a[v] <= 1.2 * a["lock"])))
    return out + [""] if out else []
