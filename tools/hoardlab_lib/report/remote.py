"""The report section of a remote-free sweep (configs/sweeps/remote-free.ini): every value of
the `remote_free` knob per strategy, against each other and the production allocators, on
the workload that isolates remote frees (xfree), on larson, prodcons and migrating-objects,
and in memory on the blowup workloads. The best fast value of hoard and hoard2026 is set
beside `lock` and mimalloc3 with the ratio's interval and the direction it shows (faster,
slower, or within noise): no development target is judged here, since no paper states one."""
from .. import fmt as F, verdicts as V

# By the sweep's workload label: xfree-deep is xfree with batches of thousands of blocks and
# ~100 in flight, a row of its own.
WORKLOADS = ("xfree", "xfree-deep", "larson", "prodcons", "migrating-objects")
BLOWUP = ("blowup-prodcons", "blowup-roundrobin")


def _mem(r):
    return V.memory_of(r)[0]


def _row(r):
    """The table's row of a run: its strategy, and `+tlab` where the sweep turned the TLAB on
    (hoard:tlab=on is not hoard: its mallocs take no lock)."""
    return r["strategy"] + ("+tlab" if str(r.get("knob.tlab")).lower() in ("on", "1", "true")
                            else "")


def _per_free(rows, counter):
    """Spread over runs of counter / frees (the run's own hoardlab counters)."""
    return V.spread_of([r["hoardlab." + counter] / r["hoardlab.frees"] for r in rows
                        if r.get("hoardlab." + counter) is not None and r.get("hoardlab.frees")])


def _growth(rounds, rows):
    """Median growth of memory held from round n/4 to the last (1.0 = flat)."""
    gs = [V.rounds_growth(*V.round_series(rounds, r["index"])) for r in rows]
    return V.median([g[0] for g in gs if g])


def remote_free_section(rows, rounds, ncores=2):
    okr = [r for r in V.ok(rows) if not V.is_census(r)]
    keyed = [r for r in okr if r.get("knob.remote_free") not in (None, "")]
    if len({str(r["knob.remote_free"]) for r in keyed}) < 2:
        return []
    t = V.timing_threads([r["threads"] for r in okr], ncores)
    tm = max(r["threads"] for r in okr)
    out = ["## Remote frees (`remote_free`)", "",
           "Each strategy with every value of `remote_free`: `lock` (the paper: lock the owner "
           "heap for every remote free), `list` (one CAS onto the superblock's remote list) and "
           "`queue` (thread-local batches posted to the owner heap's queue), `batch` (snmalloc's "
           "remote cache: hashed buckets sent whole at a byte budget); docs/remote-free.md "
           "says when pending frees are collected. Time at P: t=%s (xfree: %s threads, a "
           "producer and a consumer per t), medians over repetitions; in "
           "brackets, the ratio to `lock` of the same strategy. Memory: A (peak bytes held) on "
           "the blowup workloads at the highest thread count, t=%d, in brackets the ratio to "
           "`lock`; growth: memory at the last "
           "round over round n/4 (1.00 = flat). Per free: the run's lock acquisitions "
           "(malloc's included) and CAS operations over its frees." % (t, 2 * t, tm), ""]
    # the workloads this sweep measured (an older sweep's folder has no migrating-objects)
    workloads = [w for w in WORKLOADS if any(r["workload_label"] == w for r in okr)]
    head = ["strategy", "remote_free"] + ["%s ops/s" % w for w in workloads] + \
           ["xfree A/U", "locks/free", "CAS/free"] + ["%s A" % w for w in BLOWUP] + ["growth"]
    rs, best = [], {}
    strategies = sorted({_row(r) for r in keyed})
    for s in strategies:
        vals = [v for v in ("lock", "list", "queue", "batch")
                if any(_row(r) == s and str(r["knob.remote_free"]) == v for r in keyed)]
        of = {v: [r for r in keyed if _row(r) == s and str(r["knob.remote_free"]) == v]
              for v in vals}
        ref = {}
        for v in vals:
            rr = of[v]
            cells = [s, v]
            for w in workloads:
                x = V.spread_where(rr, "throughput", workload_label=w, threads=t)
                ref.setdefault(w, x if v == "lock" else None)
                if w == "xfree" and x:
                    best.setdefault(s, {})[v] = x
                rel = V.ratio(x, ref.get(w)) if v != "lock" else None
                cells.append("–" if not x else F.pm(x) + (" (%s)" % F.pm(rel, "%.2f")
                                                        if rel else ""))
            xr = [r for r in rr if r["workload_label"] == "xfree" and r["threads"] == t]
            fr = V.spread_where(xr, "hoardlab.fragmentation")
            lk, cas = _per_free(xr, "lock_acquisitions"), _per_free(xr, "cas_attempts")
            cells += [F.pm(fr, "%.2f") if fr else "–", F.pm(lk, "%.2f") if lk else "–",
                      F.pm(cas, "%.2f") if cas else "–"]
            grow = []
            for w in BLOWUP:
                br = [r for r in rr if r["workload"] == w and r["threads"] == tm]
                a = V.spread_of([_mem(r) for r in br])
                ref.setdefault(w, a if v == "lock" else None)
                rel = V.ratio(a, ref.get(w)) if v != "lock" else None
                cells.append("–" if not a else F.pm(a, F.mib) + (" (%s)" % F.pm(rel, "%.2f")
                                                                if rel else ""))
                g = _growth(rounds, br)
                if g:
                    grow.append("%.2f" % g)
            cells.append(" / ".join(grow) or "–")
            rs.append(cells)
    prod = [r for r in okr if r["alloc_kind"] == "production"]
    for v in V.variants(prod):
        rr = [r for r in prod if r["variant"] == v]
        cells = [v, "–"]
        for w in workloads:
            x = V.spread_where(rr, "throughput", workload_label=w, threads=t)
            cells.append(F.pm(x) if x else "–")
        cells += ["–", "–", "–"]
        for w in BLOWUP:
            a = V.spread_where(rr, _mem, workload=w, threads=tm)
            cells.append(F.pm(a, F.mib) + " RSS" if a else "–")
        cells.append("–")
        rs.append(cells)
    out += [F.table(head, rs), ""]
    out += _beside(okr, keyed, best, t, tm)
    return out + [""]


# The strategies whose best fast value is set beside `lock` and mimalloc3.
COMPARED = ("hoard", "hoard2026")


def _beside(okr, keyed, best, t, tm=None):
    """The best fast value (list, queue, batch) of each of COMPARED against mimalloc3 and
    `lock` on xfree, and in memory on the blowup workloads, each with the ratio's interval and
    the direction it decides (V.NOISE_RULE). A ratio, never a target's verdict: how much
    faster a remote free should be is a development aim, not a claim this sweep can judge."""
    out = []
    tm = tm or t
    mi3 = V.spread_where([r for r in okr if r["variant"] == "mimalloc3"], "throughput",
                         workload_label="xfree", threads=t)
    for s in COMPARED:
        mine = best.get(s, {})
        fast = {v: x for v, x in mine.items() if v in ("list", "queue", "batch")}
        if not fast:
            continue
        v = max(fast, key=lambda k: fast[k].med)
        if mi3:
            q = V.ratio(fast[v], mi3)
            out.append("- xfree at t=%d: %s's best fast value `%s` %s frees/s, mimalloc3 %s "
                       "(%sx) — %s" % (t, s, v, F.pm(fast[v]), F.pm(mi3), F.iv(q),
                                       F.direction(q, "faster", "slower")))
        if mine.get("lock"):
            q = V.ratio(fast[v], mine["lock"])
            out.append("- xfree at t=%d: %s `%s` is %sx `lock` — %s" % (
                t, s, v, F.iv(q), F.direction(q, "faster", "slower")))
        for w in BLOWUP:
            a = {vv: V.spread_of([_mem(r) for r in keyed if _row(r) == s and
                                  str(r["knob.remote_free"]) == vv and r["workload"] == w and
                                  r["threads"] == tm]) for vv in ("lock", v)}
            if a["lock"] and a[v]:
                q = V.ratio(a[v], a["lock"])
                out.append("- %s at t=%d: %s `%s` holds %s, `lock` %s (%sx) — %s" % (
                    w, tm, s, v, F.pm(a[v], F.mib), F.pm(a["lock"], F.mib), F.iv(q),
                    F.direction(q, "more", "less")))
    return out + [""] if out else []
