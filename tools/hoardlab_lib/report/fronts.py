"""The report section of the fronts sweep (configs/sweeps/fronts.ini): the caches
allocators put before their heaps — a cache per thread (the TLAB, with and without its
superblock cache), a heap per CPU without a cache, a cache per CPU (`cache = cpu`) — and the
production allocators, against the thread count on many more threads than CPUs (`oversub`:
threadtest with its threads held on `cpus` CPUs) and under migration (`migrate`). Per front:
throughput, the bytes its caches hold when every thread has done its last round
(extra.cache_bytes, threadtest's `held = 1`) and the p99 latency of malloc and free. The CPU
cache is set beside the thread cache by the ratios' intervals and the directions they decide
(verdicts.NOISE_RULE); how far apart they should be is a development aim, judged nowhere here."""
from .. import fmt as F, plotkit as K, verdicts as V

WORKLOADS = ("oversub", "migrate")
PLOT = "fronts.png"


def _cache(r):
    """The bytes a run's caches held (None: the allocator does not say, -1 in the record)."""
    x = r.get("extra.cache_bytes")
    return x if x is not None and x >= 0 else None


def _p99(r, op):
    return r.get("latency.%s_p99_ns" % op)


def front_rows(rows):
    """The rows of the fronts sweep: ok, timed, of its workloads."""
    return [r for r in V.ok(rows) if not V.is_census(r) and r["workload_label"] in WORKLOADS]


def _front(rows, v):
    """A variant's front in words, from its knobs (the rows of one variant share them)."""
    r = next(r for r in rows if r["variant"] == v)
    if r["alloc_kind"] == "production":
        return "production"
    k = V.knobs_of(r)
    if k.get("cache"):
        return "cache = %s" % k["cache"]
    if str(k.get("tlab", "")).lower() in ("off", "0", "false", "no"):
        return "no cache (heaps)"
    sbc = k.get("tlab_sb_cache")
    if sbc is not None:
        return "thread cache, superblock cache %s" % ("off" if str(sbc) == "0" else sbc)
    return "defaults of %s" % r["strategy"]


def the_fronts(rows):
    """(cpu, thread): the variant with `cache = cpu` and the thread cache it is measured
    against — the variant with `cache = thread`, else the same strategy with no override of
    cache, tlab or tlab_sb_cache (its TLAB as its defaults have it). None where missing."""
    def knobs(v):
        return V.knobs_of(next(r for r in rows if r["variant"] == v))

    vs = V.variants(rows)
    cpu = next((v for v in vs if knobs(v).get("cache") == "cpu"), None)
    if cpu is None:
        return None, None
    strategy = next(r["strategy"] for r in rows if r["variant"] == cpu)
    same = [v for v in vs if next(r["strategy"] for r in rows if r["variant"] == v) == strategy]
    thread = next((v for v in same if knobs(v).get("cache") == "thread"), None) or \
        next((v for v in same if not {"cache", "tlab", "tlab_sb_cache"} & set(knobs(v))), None)
    return cpu, thread


def _table(rows, w, ts, cell):
    vs = V.variants(rows)
    rs = []
    for v in vs:
        rr = [r for r in rows if r["workload_label"] == w and r["variant"] == v]
        if rr:
            rs.append([v, _front(rows, v)] + [cell([r for r in rr if r["threads"] == t])
                                              for t in ts])
    return F.table(["allocator", "front"] + ["t=%d" % t for t in ts], rs)


def _throughput_cell(rr):
    s = V.spread_of([r["throughput"] for r in rr])
    return F.pm(s) if s else "–"


def _cache_cell(rr):
    s = V.spread_of([_cache(r) for r in rr])
    return F.pm(s, F.mib) if s else "–"


def _p99_cell(rr):
    m, f = (V.spread_of([_p99(r, op) for r in rr]) for op in ("malloc", "free"))
    if not m and not f:
        return "–"
    return "%s / %s" % (F.pm(m, "%.0f") if m else "–", F.pm(f, "%.0f") if f else "–")


def cpu_cache_line(rows):
    """The CPU cache against the thread cache at the most oversub threads, as one line: the
    bytes the caches hold and the throughput, each ratio with its interval and the direction
    it decides (less / more, faster / slower, or within noise)."""
    ov = [r for r in rows if r["workload_label"] == "oversub"]
    cpu, thread = the_fronts(ov)
    if not cpu or not thread:
        return ("- `cache = cpu` against the thread cache on oversub: not measured: this sweep "
                "has no %s" % ("`cache = cpu` front" if not cpu else
                               "thread-cache front of its strategy"))
    t = max(r["threads"] for r in ov)
    cpus = V.median([r.get("params.cpus") for r in ov if r["threads"] == t])
    mem = {v: V.spread_where(ov, _cache, variant=v, threads=t) for v in (cpu, thread)}
    ops = {v: V.spread_where(ov, "throughput", variant=v, threads=t) for v in (cpu, thread)}
    qm, qt = V.ratio(mem[cpu], mem[thread]), V.ratio(ops[cpu], ops[thread])
    return ("- `cache = cpu` against the thread cache on oversub at t=%d on %s CPUs: `%s` holds "
            "%s MiB in caches, `%s` %s (%sx: %s), throughput %sx of `%s`'s (%s)"
            % (t, "%g" % cpus if cpus else "?", cpu, F.pm(mem[cpu], F.mib), thread,
               F.pm(mem[thread], F.mib), F.iv(qm, "%.3f"),
               F.direction(qm, "more", "less"), F.iv(qt), thread,
               F.direction(qt, "faster", "slower")))


def _versus(rows, base, w, t):
    """One line per other variant: its throughput and cache bytes over base's at t, each
    with its interval and the direction it decides (fmt.direction: a ratio of groups
    measured once decides none)."""
    out = []
    b = V.spread_where(rows, "throughput", variant=base, workload_label=w, threads=t)
    bm = V.spread_where(rows, _cache, variant=base, workload_label=w, threads=t)
    for v in V.variants(rows):
        x = V.spread_where(rows, "throughput", variant=v, workload_label=w, threads=t)
        if v == base or not x or not b:
            continue
        q = V.ratio(x, b)
        word = F.direction(q, "faster", "slower")      # one run: no interval, no direction
        line = "- %s t=%d: `%s` %sx `%s`'s throughput (%s)" % (w, t, v, F.iv(q), base, word)
        m = V.spread_where(rows, _cache, variant=v, workload_label=w, threads=t)
        qm = V.ratio(m, bm)
        if qm:
            line += "; cache bytes %sx (%s)" % (
                F.iv(qm), F.direction(qm, "more", "less"))
        out.append(line)
    return out


def fronts_section(rows, baseline=None):
    fr = front_rows(rows)
    if not any(r["workload_label"] == "oversub" for r in fr):
        return []
    out = ["## Fronts: thread caches, CPU caches and CPU heaps", "",
           "`oversub` is threadtest with all its threads held on the first `cpus` CPUs, so "
           "most threads wait for a CPU while their caches stay full; `migrate` moves every "
           "thread to the next CPU every `every` operations. Cells: medians over repetitions "
           "±spread. Cache bytes: what the allocator's caches held when every thread had done "
           "its last round (hoardlab: `tlab_bytes`, the free blocks in the TLABs or the "
           "per-CPU caches; tcmalloc: its thread caches; – where the allocator does not "
           "say). p99: the 99th percentile of a timed malloc / free, in ns (one call in "
           "`sample_every`). %s draws the three against the thread count." % PLOT, ""]
    base = baseline if baseline in V.variants(fr) else None
    for w in WORKLOADS:
        rw = [r for r in fr if r["workload_label"] == w]
        if not rw:
            continue
        ts = sorted({r["threads"] for r in rw})
        out += ["### %s: throughput (ops/s)" % w, "", _table(fr, w, ts, _throughput_cell), ""]
        if any(_cache(r) is not None for r in rw):
            out += ["### %s: MiB held in caches" % w, "", _table(fr, w, ts, _cache_cell), ""]
        out += ["### %s: p99 latency, malloc / free (ns)" % w, "",
                _table(fr, w, ts, _p99_cell), ""]
        if base:
            out += _versus(fr, base, w, max(ts)) + [""]
    return out + [cpu_cache_line(fr), ""]


def fronts_plot(rows, outdir):
    """fronts.png: per workload of the sweep, throughput, cache MiB and free p99 against
    threads, a line per allocator (medians; bars: min-max)."""
    fr = front_rows(rows)
    wls = [w for w in WORKLOADS if any(r["workload_label"] == w for r in fr)]
    if "oversub" not in wls:
        return []
    plt = K.plt()
    panels = (("ops/s", lambda r: r["throughput"], 1.0), ("MiB in caches", _cache, 1.0 / (1 << 20)),
              ("free p99 (ns)", lambda r: _p99(r, "free"), 1.0))
    fig, axes = plt.subplots(len(wls), 3, figsize=(15, 4 * len(wls)), squeeze=False)
    for i, w in enumerate(wls):
        rw = [r for r in fr if r["workload_label"] == w]
        ts = sorted({r["threads"] for r in rw})
        for ax, (label, get, scale) in zip(axes[i], panels):
            allv = []
            for k, v in enumerate(V.variants(rw)):
                sp = [V.spread_where([r for r in rw if r["variant"] == v], get, threads=t)
                      for t in ts]
                pts = [(t, s) for t, s in zip(ts, sp) if s and s.med is not None]
                if not pts:
                    continue
                ys = [s.med * scale for _, s in pts]
                allv += ys
                ax.errorbar([t for t, _ in pts], ys, yerr=K.yerr([s for _, s in pts], scale),
                            marker=K.MARKERS[k % len(K.MARKERS)], label=v, capsize=2, lw=1)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ts)
            ax.set_xticklabels([str(t) for t in ts])
            ax.set_xlabel("threads")
            ax.set_ylabel(label)
            if allv:
                K.value_axis(ax, allv)
            else:                        # migrate: threadtest's held = 1 only records them
                ax.text(0.5, 0.5, "not recorded", ha="center", transform=ax.transAxes)
            ax.grid(alpha=0.3)
            K.title(ax, "%s: %s" % (w, label), fontsize=10)
        K.legend(axes[i][2])
    return [K.save(fig, outdir, PLOT)]
