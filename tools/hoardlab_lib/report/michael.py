"""The report section of the Michael sweep (configs/sweeps/michael.ini): Michael's
lock-free allocator (PLDI 2004) against hoard, ownership (the class of Ptmalloc) and glibc
(the paper's libc malloc), with the other production allocators beside them. Table 1
(contention-free speedup over glibc), Figure 8 (a)-(h) (speedup over contention-free glibc
per thread count), the stall and signal-malloc results, and the paper's two claims checked
from the numbers: lowest contention-free latency, and scaling on prodcons where Hoard's
producer heap contends. Anything the sweep did not measure is said to be not measured.
Figure 8's numbers are figure8.py's."""
import json
import os

from .. import fmt as F, verdicts as V
from .figure8 import (FIG8, PAPER_SET, PRODUCTION, allocators, figure8_ratio_spreads,
                      figure8_speedups, figure8_spreads, panel_name, panel_of)

# Michael 2004, Table 1: contention-free speedup over libc malloc (POWER3, POWER4).
# ownership stands for Ptmalloc's class (private heaps with ownership).
TABLE1 = {
    "linux-scalability": {"lockfree": (2.25, 2.75), "hoard": (1.11, 1.38),
                          "ownership": (1.83, 1.92)},
    "threadtest": {"lockfree": (2.18, 2.35), "hoard": (1.20, 1.23), "ownership": (1.94, 1.97)},
    "larson": {"lockfree": (2.90, 2.95), "hoard": (2.22, 2.37), "ownership": (2.53, 2.67)},
}
DEADLOCK_WORKLOAD, STALL_WORKLOAD = "signal-malloc", "stall"
STALL_TOLERANT = 0.9      # stall: ratio_outside >= this = others do not wait for the victim


def _cost_pairs(outdir):
    """{allocator: instructions per 8 B malloc+free pair} from cost.json, or {}."""
    if not outdir:
        return {}
    try:
        with open(os.path.join(outdir, "cost.json")) as f:
            res = json.load(f)
        return {c["allocator"]: c["pair"] for c in res if c.get("case") == "8 B" and
                c.get("pair") is not None}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _spawn_note(rows):
    sp = {r.get("params.spawn_first") for r in V.timing_rows(rows) if panel_of(r)}
    if sp and all(x not in (None, 0, "0") for x in sp):
        return ("Every timed run first created one thread that malloced, freed and exited "
                "(`spawn_first` = 1), as the paper did, so no allocator was timed in a "
                "single-threaded shortcut.")
    return ("These runs did not create the paper's extra thread before timing (`spawn_first` "
            "not set): an allocator with a single-threaded shortcut may read faster at 1 "
            "thread than the paper measured.")


def _table1(rows, names, fig, fig_s=None):
    out = ["### Table 1: contention-free speedup over glibc", ""]
    if "glibc" not in names:
        return out + ["Not measured: glibc (the paper's libc malloc, the divisor) is not in "
                      "this sweep.", ""], {}
    cols = list(PAPER_SET) + [n for n in PRODUCTION[1:] if n in names]
    rs, found = [], {}
    for p in FIG8[:5]:
        wl = p[1]
        if wl not in TABLE1:
            continue
        cells = [wl]
        for n in cols:
            x = (fig_s or {}).get(p, {}).get(n, {}).get(1)
            cells.append(F.pm(x, "%.2f") if x else "not measured")
            if x:
                found.setdefault(wl, {})[n] = x
        cells.append(", ".join("%s %.2f / %.2f" % (n, a, b) for n, (a, b) in
                               TABLE1[wl].items()))
        rs.append(cells)
    out += [F.table(["workload"] + [("ownership (Ptmalloc's class)" if n == "ownership" else n)
                                    for n in cols] + ["paper (POWER3 / POWER4)"], rs), "",
            "Median throughput at 1 thread / glibc's median throughput at 1 thread, same "
            "workload (above 1: faster than glibc). The paper's column: lockfree, Hoard and "
            "Ptmalloc over AIX libc malloc.", ""]
    return out, found


def _figure8(fig, names, fig_s=None):
    out = ["### Figure 8: speedup over contention-free glibc", ""]
    if not fig:
        return out + ["Not measured: needs glibc at 1 thread on the Figure 8 workloads.", ""]
    ts = sorted({t for d in fig.values() for pts in d.values() for t, _ in pts})
    rs = []
    for p in FIG8:
        if p not in fig:
            rs.append([panel_name(p), "not measured"] + ["–"] * len(ts))
            continue
        for n in names:
            pts = (fig_s or {}).get(p, {}).get(n, {})
            if not pts:
                continue
            rs.append([panel_name(p), n] + [F.pm(pts[t], "%.2f") if t in pts else "–"
                                            for t in ts])
    return out + [F.table(["panel", "allocator"] + ["t=%d" % t for t in ts], rs), "",
                  "Median throughput at t threads / glibc's median throughput at 1 thread on "
                  "the same workload (the paper's y axis). Plot: `figure8.png`.", ""]


def _latency_claim(rows, names, found, cost, ncores):
    """Claim 1: the lowest contention-free latency."""
    out = []
    tab = V.throughput_table(rows)
    lf = names.get("lockfree")
    for wl, ratio in sorted(found.items(), key=lambda kv: list(TABLE1).index(kv[0])):
        if "lockfree" in ratio and len(ratio) > 1:
            others = {n: x for n, x in ratio.items() if n in PAPER_SET and n != "lockfree"}
            if others:
                lfx = ratio["lockfree"]
                out.append("- Table 1, %s: lockfree %s x glibc; %s; paper: lockfree highest "
                           "(rule: above the others here and above 1) — %s" % (
                               wl, F.iv(lfx), ", ".join("%s %s" % (n, F.iv(x))
                                                        for n, x in sorted(others.items())),
                               F.mark(V.all_hold(V.check(lfx, ">", 1.0), *[
                                   V.differ(lfx, x) for x in others.values()]))))
    # linux-scalability at 1 thread: throughput and sampled latency per allocator.
    one = {}
    for r in V.timing_rows(rows):
        if r["workload"] == "linux-scalability" and r["threads"] == 1:
            one.setdefault(r["variant"], []).append(r)
    thr = {v: V.median([r["throughput"] for r in rs]) for v, rs in one.items()}
    thr_s = {v: V.spread_of([r["throughput"] for r in rs]) for v, rs in one.items()}
    if lf in thr:
        paper_set = {n: thr[v] for n, v in names.items()
                     if v in thr and (n in PAPER_SET or n == "glibc")}
        if len(paper_set) > 1:
            p50 = {n: V.median([r.get("extra.latency_ns.p50") for r in one[names[n]]])
                   for n in paper_set}
            out.append("- linux-scalability at 1 thread (the paper's allocators): %s; paper: "
                       "lockfree the fastest — %s" % (", ".join(
                           "%s %s ops/s%s" % (n, F.pm(thr_s[names[n]]),
                                              " (p50 pair %d ns)" % p50[n] if p50.get(n) else "")
                           for n, x in sorted(paper_set.items(), key=lambda kv: -kv[1])),
                           F.mark(V.all_hold(*[V.differ(thr_s[lf], thr_s[names[n]])
                                               for n in paper_set if names[n] != lf]))))
        ranked = sorted(thr, key=lambda v: -thr[v])
        out.append("- linux-scalability at 1 thread, every allocator measured: lockfree is "
                   "%d of %d (fastest: %s %s ops/s)" % (ranked.index(lf) + 1, len(ranked),
                                                       ranked[0], F.si(thr[ranked[0]])))
    if cost.get("lockfree"):
        cmp_ = {n: cost[n] for n in ("hoard", "ownership", "glibc") if cost.get(n)}
        if cmp_:
            out.append("- instructions per 8 B malloc+free pair (callgrind, below): lockfree "
                       "%.0f; %s; paper: lowest latency of the paper's allocators — %s" % (
                           cost["lockfree"], ", ".join("%s %.0f" % kv for kv in
                                                       sorted(cmp_.items())),
                           F.mark(cost["lockfree"] < min(cmp_.values()))))
        ranked = sorted(cost, key=cost.get)
        out.append("- instructions per 8 B pair, every allocator counted: lockfree is %d of "
                   "%d (fewest: %s %.0f)" % (ranked.index("lockfree") + 1, len(ranked),
                                             ranked[0], cost[ranked[0]]))
    elif lf:
        out.append("- instructions per pair: not measured (no cost.json; `cost = yes` "
                   "counts them)")
    return out


def _prodcons_claim(rows, names, fig, ncores):
    """Claim 2: lockfree keeps scaling on prodcons where hoard's producer heap contends."""
    out = []
    lf, hv = names.get("lockfree"), names.get("hoard")
    if not (lf and hv):
        return ["- prodcons scaling against hoard: not measured (needs lockfree and hoard)"]
    data = figure8_spreads(rows)
    for p in FIG8[5:]:
        d = data.get(p, {})
        s = {}
        for n, v in (("lockfree", lf), ("hoard", hv)):
            pts = d.get(v, {})
            ts = sorted(t for t in pts if pts[t] and pts[t].med)
            if len(ts) >= 2 and ts[0] == 1:
                t = V.timing_threads(ts[1:], ncores)
                s[n] = (V.ratio(pts[t], pts[1]), t)
        if len(s) < 2 or None in (s["lockfree"][0], s["hoard"][0]):
            continue
        lfs, hs = s["lockfree"][0], s["hoard"][0]
        out.append("- prodcons work=%d: speedup over its own 1 thread at t=%d (P): lockfree "
                   "%s, hoard %s; paper: lockfree keeps scaling where hoard's producer heap "
                   "contends (rule: lockfree's speedup above 1 and at least hoard's) — %s"
                   % (p[2], s["lockfree"][1], F.iv(lfs), F.iv(hs),
                      F.mark(V.all_hold(V.check(lfs, ">", 1.0),
                                        V.check(V.ratio(lfs, hs), ">=", 1.0)))))
    if not out:
        return ["- prodcons scaling against hoard: not measured (needs prodcons at 1 and >= 2 "
                "threads for both)"]
    return out


def _stall_signal(rows):
    okr = V.ok(rows)
    st = [r for r in okr if r["workload"] == STALL_WORKLOAD]
    sg = [r for r in rows if r["workload"] == DEADLOCK_WORKLOAD]
    out = ["### Preemption and signals: stall and signal-malloc", ""]
    if not st and not sg:
        return out + ["Not measured in this sweep.", ""], []
    vs = V.variants(st + sg)
    rs, checks = [], []
    for v in vs:
        s = [r for r in st if r["variant"] == v]
        g = [r for r in sg if r["variant"] == v and r.get("status") == "ok"]
        gbad = [r for r in sg if r["variant"] == v and r.get("status") != "ok"]
        ratio = V.median([r.get("extra.ratio") for r in s])
        ro = V.median([r.get("extra.ratio_outside") for r in s])
        dead = sum(1 for r in g if V.truthy(r.get("extra.deadlocked")))
        kind = next((r.get("alloc_kind") for r in s + g + gbad), "")
        rs.append([v, kind, F.pm(V.spread_of([r.get("extra.ratio") for r in s]), "%.2f")
                   if ratio is not None else "not measured",
                   F.pm(V.spread_of([r.get("extra.ratio_outside") for r in s]), "%.2f")
                   if ro is not None else "not measured", len(s) or "–",
                   ("%d of %d" % (dead, len(g)) if g else "not measured") +
                   (" (%d runs failed)" % len(gbad) if gbad else "")])
        strat = next((r.get("strategy") for r in s + g), None)
        if strat == "lockfree":
            if g:
                checks.append("- signal-malloc: lockfree deadlocked in %d of %d runs; paper "
                              "(§1): a lock-free allocator is async-signal-safe, a lock-based "
                              "one can deadlock in a handler — %s" % (dead, len(g),
                                                                       F.mark(dead == 0)))
            if ro is not None:
                ros = V.spread_of([r.get("extra.ratio_outside") for r in s])
                checks.append("- stall: lockfree's ratio_outside %s (rule: >= %.2f, the "
                              "other threads do not wait for a paused thread); paper: "
                              "lock-free progress tolerates preemption — %s"
                              % (F.iv(ros), STALL_TOLERANT,
                                 F.mark(V.check(ros, ">=", STALL_TOLERANT))))
    out += [F.table(["allocator", "kind", "stall ratio", "stall ratio_outside", "stall runs",
                     "signal-malloc deadlocked"], rs), "",
            "stall (2 threads): ratio = the other threads' throughput while thread 0 is paused "
            "inside malloc/free over undelayed; ratio_outside = the same over pauses of the "
            "same length outside the allocator, the measure (about 1: nobody waits for the "
            "paused thread; clearly below 1: they wait for a lock it holds). Medians over "
            "runs; one noisy run is not a verdict. signal-malloc: runs whose watchdog found a "
            "thread stuck in its own signal handler, over ok runs; 0 shows nothing by itself "
            "(the signals may have missed the critical sections).", ""]
    if not any(r[0] == "lockfree" or r[0].startswith("lockfree") for r in rs):
        checks.append("- lockfree: not measured in stall / signal-malloc")
    return out, checks


def michael_section(rows, rounds, ncores, outdir=None):
    names = allocators(rows)
    relevant = ("lockfree" in names or
                any(r["workload"] in (STALL_WORKLOAD, DEADLOCK_WORKLOAD) for r in rows) or
                any(r.get("params.spawn_first") not in (None, 0, "0") for r in rows))
    if not relevant:
        return []
    out = ["## Lock-free allocator (Michael 2004)", ""]
    missing = [n for n in PAPER_SET + ("glibc",) if n not in names]
    out += ["`lockfree` (Michael 2004) against `hoard`, `ownership` (private heaps with "
            "ownership, the class of the paper's Ptmalloc) and glibc (for the paper's libc "
            "malloc)%s. %s%s" % (
                ", with %s beside them" % ", ".join(n for n in PRODUCTION[1:] if n in names)
                if any(n in names for n in PRODUCTION[1:]) else "",
                _spawn_note(rows),
                " Not measured in this sweep: %s." % ", ".join(missing) if missing else ""),
            ""]
    if ncores < V.FEW_CORES:
        out += ["This machine has **%d cores**; the paper used 16 (POWER3) and 8 (POWER4). "
                "Speedups here can show at most %d-fold, and nothing beyond %d threads: the "
                "knees of Figure 8 (for example prodcons with work=500 scaling to 13 "
                "processors) and Hoard's producer-heap contention at many consumers cannot be "
                "reproduced here, only their direction at %d threads." % (
                    ncores, ncores, ncores, ncores), ""]
    fig = figure8_speedups(rows)
    fig_s = figure8_ratio_spreads(rows)
    t1, found = _table1(rows, names, fig, fig_s)
    out += t1
    out += _figure8(fig, names, fig_s)
    ss, ss_checks = _stall_signal(rows)
    out += ss
    out += ["### The paper's claims on this machine", "",
            "(1) The lowest contention-free latency:", ""]
    lat = _latency_claim(rows, names, found, _cost_pairs(outdir), ncores)
    out += lat or ["- not measured (needs lockfree and another allocator on linux-scalability, "
                   "threadtest or larson at 1 thread)"]
    out += ["", "(2) Keeps scaling on prodcons where Hoard's producer heap contends:", ""]
    out += _prodcons_claim(rows, names, fig, ncores)
    if ncores < V.FEW_CORES:
        out.append("- with %d cores a speedup above %d cannot appear, and the paper's "
                   "difference shows at the knee of the curve (many consumers on one producer "
                   "heap): this machine can confirm only the direction at %d threads, and "
                   "cannot show scaling beyond %d threads." % (ncores, ncores, ncores, ncores))
    if ss_checks:
        out += ["", "Lock-freedom (Michael §1), from stall and signal-malloc:", ""] + ss_checks
    return out + [""]
