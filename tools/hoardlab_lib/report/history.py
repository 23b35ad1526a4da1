"""The report section of the Hoard history sweep (configs/sweeps/hoard-history.ini):
each pull request Hoard merged after #88 that makes a claim, paraphrased, beside what this
machine measured for the knob that models it, with a verdict by the report's noise rule; and,
when the sweep ran the steps from `hoard` to `hoard202607`, the attribution of that difference
to each element in the forward and the reverse order (attribute.py's computation).

The claims are from ../shared/papers/hoard-after-pr88-2026.md: the authors' own statements,
mostly from 64-192-core machines. A claim made at 8 threads or more, or about NUMA nodes, is
shown with this machine's number but decided as "two cores cannot decide"."""
from .. import attribute as A, fmt as F, verdicts as V

# The later elements, each alone on hoard2026: (label in the shipped sweep, pull request,
# what it adds, knobs as runs.csv writes them: key=value;key=value sorted).
ELEMENTS = (
    ("h26-home", "#103", "home heap per thread; foreign frees go home",
     "heap_select=home;tlab_foreign=home"),
    ("h26-adaptive", "#98", "adaptive TLAB budget", "tlab_adaptive=on"),
    ("h26-refill", "#99", "batched TLAB refill", "tlab_refill=batch"),
    ("h26-flush", "#111", "batched TLAB flush", "tlab_flush=batch"),
    ("h26-shards-thread", "#95", "64 global shards keyed by thread",
     "global_shard_key=thread;global_shards=64"),
    ("h26-shards-node", "#89", "global shards keyed by NUMA node", "global_shard_key=node"),
    ("h26-purge", "#99/#116", "purge empty superblocks (retain budget)", "purge=free"),
    ("h26-classes", "#107/#108", "4 size classes per power of two", "size_classes=pow2x4"),
    ("h26-queue", "#98", "bounded lock-free remote-free queue",
     "remote_free=queue;remote_queue_cap=256"),
)
PRODUCTION = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc",
              "tcmalloc-google")
TIMING = ("larson", "threadtest", "xfree", "migrate")
BLOWUP = ("blowup-prodcons", "blowup-roundrobin")
CANNOT = "two cores cannot decide"

# (pull request, the claim in brief, [(numerator, denominator, workload, threads: 1 or "P",
# metric: throughput | rss | a)], op: the claimed direction of every ratio, why two cores
# cannot decide it or None). Several comparisons must all hold.
CLAIMS = (
    ("#88", "Heap selection by CPU and a TLAB make Hoard several times faster at high thread "
     "counts (\"3-4x\").", [("hoard2026", "hoard", "larson", "P", "throughput")], ">",
     "64+ threads"),
    ("#88", "Up to 64 threads Hoard is faster than mimalloc (8 threads: 0.43 s against "
     "0.97 s) but holds about twice its RSS.",
     [("hoard2026", "mimalloc", "threadtest", "P", "throughput"),
      ("hoard2026", "mimalloc", "threadtest", "P", "rss")], ">", "8-256 threads"),
    ("#89", "Shards keyed by NUMA node, stealing within the node first, beat mimalloc with "
     "128 threads on 2 nodes.", [("h26-shards-node", "hoard2026", "larson", "P",
                                  "throughput")], ">", "NUMA, 128 threads"),
    ("#95", "64 fixed shards keyed by thread (with a superblock cache in the TLAB) make "
     "Hoard 1.3-1.5x faster than mimalloc.", [("hoard202607", "mimalloc", "larson", "P",
                                               "throughput")], ">", "192 cores"),
    ("#95", "With one thread Hoard is a little behind mimalloc (48 against 50 M ops/s).",
     [("hoard202607", "mimalloc", "larson", 1, "throughput")], "<", None),
    ("#98", "A bounded lock-free remote-free queue (with the adaptive TLAB) raises larson "
     "at 64 threads from 520 to 734 M ops/s.",
     [("h26-queue", "hoard2026", "larson", "P", "throughput")], ">", "64 threads"),
    ("#98", "An adaptive TLAB budget (64 KiB doubling to 16 MiB) is faster than a fixed "
     "one.", [("h26-adaptive", "hoard2026", "threadtest", 1, "throughput")], ">", None),
    ("#99", "Batched refill, finer classes and purging: Hoard beats jemalloc on every "
     "benchmark.", [("hoard202607", "jemalloc", w, t, "throughput")
                    for w in TIMING for t in (1, "P")], ">", None),
    ("#99", "Purging empty superblocks cuts threadtest's RSS (62 to 9 MB on macOS).",
     [("h26-purge", "hoard2026", "threadtest", 1, "rss")], "<", None),
    ("#103", "A thread-stable home heap: keyed to the CPU, RSS grows when threads "
     "migrate.", [("h26-home", "hoard2026", "migrate", "P", "rss")], "<", None),
    ("#103", "... the same read in A, the bytes hoardlab holds for blocks (touched or not).",
     [("h26-home", "hoard2026", "migrate", "P", "a")], "<", None),
    ("#103", "... and throughput decays when threads migrate.",
     [("h26-home", "hoard2026", "migrate", "P", "throughput")], ">", None),
    ("#103", "Frees routed to their home heap remove larson's false sharing (about 2.4x at "
     "8 threads; x86 8 threads 72.4 to 80.9 M ops/s).",
     [("h26-home", "hoard2026", "larson", "P", "throughput")], ">", "8 threads"),
    ("#109", "Single-threaded on x86, Hoard is behind jemalloc and mimalloc on larson "
     "(38.8 against 47.2 and 46.1).", [("hoard202607", "jemalloc", "larson", 1, "throughput"),
                                      ("hoard202607", "mimalloc", "larson", 1, "throughput")],
     "<", None),
    ("#111", "Freeing up to 64 blocks under one lock when the TLAB overflows: 16.8 to 12.7 "
     "ns per operation with 10 M live blocks.",
     [("h26-flush", "hoard2026", "threadtest", 1, "throughput")], ">", None),
)


def _variants(rows):
    """{key: variant} for hoard, hoard2026, hoard202607, the elements (by label, else by
    strategy and knobs) and the production allocators the rows hold."""
    res = {}
    for s in ("hoard", "hoard2026", "hoard202607", "serial") + PRODUCTION:
        v = V.reference_variant(rows, s)
        if v:
            res[s] = v
    for label, _, _, knobs in ELEMENTS:
        cands = sorted({r["variant"] for r in rows if r.get("strategy") == "hoard2026" and
                        str(r.get("knobs") or "") == knobs})
        if cands:
            res[label] = label if label in cands else cands[0]
    return res


def _metric(r, metric):
    if metric == "rss":
        return r["peak_rss_kb"] * 1024 if r.get("peak_rss_kb") is not None else None
    if metric == "a":
        return r.get("hoardlab.held_bytes_peak")
    return r.get(metric)


def _spread(rows, variant, wl, t, metric):
    return V.spread_of([_metric(r, metric) for r in V.ok(rows) if r["variant"] == variant and
                        r["workload"] == wl and r["threads"] == t and not V.is_census(r)])


def _claim_row(rows, var, tp, pr, text, comps, op, cannot):
    cells, holds = [], []
    for num, den, wl, t, metric in comps:
        t = tp if t == "P" else t
        what = "%s / %s, %s, %s, t=%d" % (num, den, wl, {"rss": "peak RSS", "a": "A"}.get(
            metric, "throughput"), t)
        if num not in var or den not in var:
            cells.append("%s: not measured" % what)
            holds.append("missing")
            continue
        q = V.ratio(_spread(rows, var[num], wl, t, metric), _spread(rows, var[den], wl, t,
                                                                      metric))
        if q is None:
            cells.append("%s: not measured" % what)
            holds.append("missing")
            continue
        cells.append("%s: %s" % (what, F.pm(q, "%.2f")))
        holds.append(V.check(q, op, 1.0))
    measured = [h for h in holds if h != "missing"]
    if not measured:
        verdict = "not measured"
    elif cannot:
        verdict = "%s (%s)" % (CANNOT, cannot)
    else:
        verdict = F.mark(V.all_hold(*measured))
        if len(measured) < len(holds):
            verdict += " (on what was measured)"
    return [pr, text, "; ".join(cells), verdict]


def _diffs(knobs, steps):
    """The keys each step adds to the one before (the first: to `hoard`, which has none):
    [{key: value}], or None when a step changes a key already set or adds nothing."""
    res, prev = [], {}
    for v in steps:
        cur = knobs[v]
        add = {k: x for k, x in cur.items() if prev.get(k) != x}
        if not add or any(k in prev for k in add) or any(k not in cur for k in prev):
            return None
        res.append(add)
        prev = cur
    return res


def history_plan(rows, var):
    """The attribution's Plan from the `hist-f*` and `hist-r*` variants of the rows (their
    knobs give the elements and both orders), or (None, why). The element each path adds
    last is the one the other path's steps show; when both paths end with the same element,
    its keys are not in any step and it is named `the rest`."""
    knobs = {r["variant"]: V.knobs_of(r) for r in rows if r["variant"].startswith("hist-")}
    fwd = sorted((v for v in knobs if v.startswith("hist-f")), key=lambda v: int(v[6:]))
    rev = sorted((v for v in knobs if v.startswith("hist-r")), key=lambda v: int(v[6:]))
    if "hoard" not in var or "hoard202607" not in var or not fwd:
        return None, "the sweep did not run the steps from hoard to hoard202607"
    n = len(fwd) + 1
    if [int(v[6:]) for v in fwd] != list(range(1, n)) or \
            [int(v[6:]) for v in rev] != list(range(1, n)):
        return None, "the steps hist-f1..f%d and hist-r1..r%d are not complete" % (n - 1, n - 1)
    f, r = _diffs(knobs, fwd), _diffs(knobs, rev)
    if f is None or r is None:
        return None, "a step does not add new keys to the step before"
    only_r = [e for e in r if e not in f]
    only_f = [e for e in f if e not in r]
    if len(only_r) != len(only_f) or len(only_r) > 1:
        return None, "the forward and reverse steps do not add the same elements"
    last_f, last_r = (only_r[0], only_f[0]) if only_r else ({}, {})
    els = [("+".join(sorted(e)) or "the rest", e) for e in f + [last_f]]
    rev_order = [f.index(e) if e in f else n - 1 for e in r + [last_r]]
    return A.Plan("hoard", "hoard202607", els, list(range(n)), rev_order), None


def attribution_lines(rows, var, tp):
    p, why = history_plan(rows, var)
    out = ["### Attribution: from `hoard` to `hoard202607`", ""]
    if p is None:
        return out + ["Not shown: %s." % why, ""]
    out += ["Elements, in the forward (chronological) order: %s. Each step is `hoard` with "
            "the July values of the elements added so far (`hist-f*` forward, `hist-r*` "
            "reverse); the last is `hoard202607` itself. `tools/hoardlab attribute hoard "
            "hoard202607` runs the same computation on any workload." % ", ".join(
                "`%s`" % n for n, _ in p.elements), ""]
    variant_of = {"base": var["hoard"], "target": var["hoard202607"]}
    wls = sorted({r["workload"] for r in V.ok(rows) if r["variant"].startswith("hist-")})
    for wl in wls:
        for metric, name, fmt in (("throughput", "throughput", F.si),
                                  ("a", "A (peak bytes held)", F.mib)):
            def measure(label, wl=wl, metric=metric):
                return _spread(rows, variant_of.get(label, "hist-" + label), wl, tp, metric)
            res, total, mb, mt = A.attribution(p, measure)
            if total is None:
                continue
            out += ["**%s, %d threads, %s**: hoard %s, hoard202607 %s, ratio %s" % (
                wl, tp, name, F.pm(mb, fmt), F.pm(mt, fmt), F.pm(total, "%.2f")), ""]
            out += [F.table(["element", "forward", "reverse", "orders"],
                            [[e["name"], F.pm(e["forward"], "%.3f"),
                              F.pm(e["reverse"], "%.3f"), e["verdict"]] for e in res]), ""]
    out += ["A cell is the element's ratio to the step before (median over repetitions, with "
            "the interval of a ratio of medians); each column multiplies to hoard202607 / "
            "hoard. *interaction*: the two orders' intervals do not overlap.", ""]
    return out


def history_section(rows, rounds, ncores):
    var = _variants(rows)
    elements = [label for label, *_ in ELEMENTS if label in var]
    # Shown only when the sweep measured its inputs: the July row beside hoard2026, and at
    # least one later element alone on hoard2026.
    if not ("hoard202607" in var and "hoard2026" in var and elements):
        return []
    ts = sorted({r["threads"] for r in V.timing_rows(rows) if r["workload"] in TIMING})
    tp = V.timing_threads(ts, ncores) or ncores
    out = ["## Hoard after PR 88: the pull requests' claims, measured here", "",
           "Each claim, in brief, from the pull request's own description (most were measured "
           "on 64-192-core machines), beside the ratio this machine measured between the "
           "knob that models it and `hoard2026` (or the July row, `hoard202607`, against a "
           "production allocator), at 1 thread or at P = %d. Elements alone on hoard2026: "
           "%s; not measured: %s." % (tp, ", ".join(elements) or "none", ", ".join(
               label for label, *_ in ELEMENTS if label not in var) or "none"), ""]
    rs = [_claim_row(rows, var, tp, *c) for c in CLAIMS]
    out += [F.table(["PR", "claim", "measured here (ratio, median ±spread)", "verdict"], rs),
            "",
            "Verdict: *agrees* when every ratio's interval lies on the claimed side of 1, "
            "**MISMATCH** when one lies wholly on the other side, *within noise* otherwise "
            "(the report's noise rule). A claim made at 8 threads or more, or about NUMA "
            "nodes, is *%s* here: "
            "with %d cores the contention among many heaps, and the cross-node traffic, that "
            "such claims are about cannot appear; its measured ratio is shown all the same. "
            "#107/#108 (size classes) and #116 (the retain budget) state no speed or memory "
            "figure this sweep's workloads can check; their knobs are in the tables. The "
            "TLAB's superblock cache (#95, #123) is not a knob here (docs/hoard2026.md says "
            "why), so its claims are not in the table." % (
                CANNOT, ncores), ""]
    # --- blowup of the July row ---------------------------------------------------------
    ref = var.get("serial")
    v = var.get("hoard202607")
    b = V.blowup(rows, rounds, v, ref)
    have = sorted({r["workload"] for r in V.ok(rows) if r["variant"] == v and
                   r["workload"] in BLOWUP})
    out += ["- hoard202607 blowup: %s — %s; Hoard's bound (the paper's, DESIGN.md's): O(1) on "
            "both blowup workloads — %s" % (
        b["value"], b["evidence"], "not decided (%s not measured)" % ", ".join(
            w for w in BLOWUP if w not in have) if len(have) < len(BLOWUP) else
        ("undecided" if b["value"] == "undecided" else F.mark(b["value"] == "O(1)"))), ""]
    return out + attribution_lines(rows, var, tp)
