"""Tidy rows selected and grouped: the runs that count (ok, timing, census), throughput
per group, run-to-run noise, thread counts (THREADS_RULE), memory and rounds of a run, the
production allocators ranked."""
from ..common import BOOL_TRUE
from .noise import SHORT_RUN_S, median, ratio, spread_of

# not speeds: memory per round, a replay, a deadlock probe, memory over time
TIMING_WORKLOADS_EXCLUDED = ("blowup-prodcons", "blowup-roundrobin", "replay", "signal-malloc",
                             "phased")


def truthy(v):
    return str(v).strip().lower() in BOOL_TRUE


def ok(rows):
    return [r for r in rows if r.get("status") == "ok"]


def is_census(r):
    """A census run (not timed): libhoardlab's census (knob census=on), or the census from
    outside the allocator (the workload parameter census = 1, harness/census.c)."""
    return truthy(r.get("knob.census", "")) or truthy(r.get("params.census", ""))


def timing_rows(rows):
    return [r for r in ok(rows) if not is_census(r) and r.get("throughput") is not None]


def throughput_groups(rows):
    """{(variant, workload_label, threads): [throughput of each timing row]}."""
    acc = {}
    for r in timing_rows(rows):
        acc.setdefault((r["variant"], r["workload_label"], r["threads"]), []).append(
            r["throughput"])
    return acc


def throughput_table(rows):
    """{(variant, workload_label, threads): median throughput} over timing rows."""
    return {k: median(v) for k, v in throughput_groups(rows).items()}


def spread_where(rows, key, **where):
    """Spread of `key` (a column, or a function of the row) over the rows whose columns
    equal `where`'s values."""
    get = key if callable(key) else (lambda r: r.get(key))
    return spread_of([get(r) for r in rows if all(r.get(k) == v for k, v in where.items())])


def throughput_spreads(rows):
    """{(variant, workload_label, threads): Spread of throughput} over timing rows."""
    return {k: spread_of(v) for k, v in throughput_groups(rows).items()}


def knobs_of(r):
    """{key: value} of a row's knob overrides (its `knobs` column, "k=v;k=v")."""
    return dict(k.split("=", 1) for k in str(r.get("knobs") or "").split(";") if "=" in k)


def reference_variant(rows, strategy="serial"):
    """The variant that stands for `strategy` with no knob overrides (census aside)."""
    cands = sorted({r["variant"] for r in rows if r.get("strategy") == strategy})
    if strategy in cands:
        return strategy
    for c in cands:
        if set(knobs_of(next(r for r in rows if r["variant"] == c))) <= {"census"}:
            return c
    return cands[0] if cands else None


def rep_spread(rows):
    """Run-to-run noise: {(variant, workload_label, threads): max/min throughput over
    repetitions} for groups with at least 2 repetitions."""
    return {k: max(x) / min(x) for k, x in throughput_groups(rows).items()
            if len(x) >= 2 and min(x) > 0}


def noisiest(rows, k=3):
    """The k groups with the largest run-to-run spread: [((variant, workload, threads),
    max/min)], the noisiest first."""
    return sorted(rep_spread(rows).items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def short_groups(rows, floor=SHORT_RUN_S):
    """{(variant, workload_label, threads): median wall seconds} of the timing groups (not the
    memory workloads) whose median run is shorter than `floor` seconds."""
    acc = {}
    for r in timing_rows(rows):
        if r["workload"].startswith(TIMING_WORKLOADS_EXCLUDED) or r.get("wall_s") is None:
            continue
        acc.setdefault((r["variant"], r["workload_label"], r["threads"]), []).append(r["wall_s"])
    return {k: median(v) for k, v in acc.items() if median(v) < floor}


def speedup_spreads(rows, variant, workloads, max_threads=None, ncores=None):
    """{workload: (Spread of S, T)}: as speedups(), with the ratio's interval; with ncores,
    T is P of THREADS_RULE among the thread counts above 1."""
    tab = throughput_spreads(rows)
    res = {}
    for wl in workloads:
        ts = sorted(t for (v, w, t) in tab if v == variant and w == wl and
                    (max_threads is None or t <= max_threads))
        if len(ts) < 2 or ts[0] != 1:
            continue
        t = timing_threads(ts[1:], ncores) if ncores else ts[-1]
        s = ratio(tab[(variant, wl, t)], tab[(variant, wl, 1)])
        if s:
            res[wl] = (s, t)
    return res


def speedups(rows, variant, workloads, max_threads=None):
    """{workload: (S, Tmax)}: median throughput at the highest thread count (at most
    max_threads when given) over 1 thread."""
    tab = throughput_table(rows)
    res = {}
    for wl in workloads:
        ts = sorted(t for (v, w, t) in tab if v == variant and w == wl and
                    (max_threads is None or t <= max_threads))
        if len(ts) < 2 or ts[0] != 1 or not tab.get((variant, wl, 1)):
            continue
        res[wl] = (tab[(variant, wl, ts[-1])] / tab[(variant, wl, 1)], ts[-1])
    return res


# --- thread counts ------------------------------------------------------------------------

THREADS_RULE = ("Sections on time use P, the largest thread count measured not above the "
                "machine's cores (the smallest measured when every one is above): more "
                "threads than cores time the scheduler's slicing, not the allocator. Sections "
                "on memory use the highest thread count measured (memory needs no cores). "
                "Each section names the count it uses.")


def timing_threads(ts, ncores):
    """P of THREADS_RULE among the thread counts ts (None when ts is empty)."""
    ts = sorted(set(t for t in ts if t is not None))
    if not ts:
        return None
    under = [t for t in ts if t <= ncores]
    return under[-1] if under else ts[0]


def threads_run(r):
    """The threads a run actually ran (besides main): `threads`, except where a workload runs
    more per unit of its `threads` parameter, as xfree does (a producer and a consumer per
    unit: 2T), which its record says in extra.producers and extra.consumers."""
    p, c = r.get("extra.producers"), r.get("extra.consumers")
    if p is not None and c is not None:
        return int(p) + int(c)
    if r.get("workload") == "xfree" and r.get("threads"):
        return 2 * r["threads"]
    return r.get("threads")


def threads_text(rows, workload_label, t):
    """'4', or '4 (8 threads run)' when the runs of that workload ran more than t."""
    ran = {threads_run(r) for r in rows if r.get("workload_label") == workload_label and
           r.get("threads") == t and r.get("status") == "ok"}
    ran.discard(None)
    if ran and max(ran) != t:
        return "%d (%d threads run)" % (t, max(ran))
    return "%d" % t


def memory_of(r):
    """(bytes held, source): hoardlab's A (the policy's: held_bytes_peak; os_bytes_peak in
    results from before that column existed) when loaded, else peak RSS."""
    a = r.get("hoardlab.held_bytes_peak")
    if a is None:
        a = r.get("hoardlab.os_bytes_peak")
    if a is not None:
        return a, "A"
    rss = r.get("peak_rss_kb")
    return (rss * 1024 if rss is not None else None), "RSS"


def outside_bytes(r):
    """Memory held by the process now from outside the allocator: (RSS less LazyFree) in
    bytes, of a round (or any row with rss_kb and lazyfree_kb); RSS alone where LazyFree was
    not recorded; None without RSS."""
    if r.get("rss_kb") is None:
        return None
    return (r["rss_kb"] - (r.get("lazyfree_kb") or 0)) * 1024


def round_series(rounds, index):
    """(memory, live bytes) per round of run `index`: libhoardlab's A where recorded, else
    RSS less LazyFree (outside_bytes)."""
    rs = sorted((r for r in rounds if r["index"] == index), key=lambda r: r["round"])
    mem = [(r["os_bytes"] if r.get("os_bytes") is not None else outside_bytes(r)) for r in rs]
    live = [r.get("live_bytes") for r in rs]
    return mem, live


def production_ranking(rows):
    """{(workload_label, threads): [(variant, median throughput)], fastest first} over the
    production allocators (alloc_kind `production`: glibc, jemalloc, mimalloc, mimalloc3,
    tcmalloc, snmalloc, whichever the sweep measured), on the timing workloads. The first of
    each list is the best production allocator of that workload and thread count."""
    prod = {r["variant"] for r in rows if r.get("alloc_kind") == "production"}
    res = {}
    for (v, wl, t), thr in throughput_table(rows).items():
        if v in prod and thr and not wl.startswith(TIMING_WORKLOADS_EXCLUDED):
            res.setdefault((wl, t), []).append((v, thr))
    for k in res:
        res[k].sort(key=lambda vt: (-vt[1], vt[0]))
    return res


def variants(rows):
    """The allocator variants of rows, in order of first appearance."""
    seen = []
    for r in rows:
        if r["variant"] not in seen:
            seen.append(r["variant"])
    return seen
