"""The Michael and Hoard 2026 report sections on small hand-made tidy rows (made-up numbers,
as in test_verdicts.py): what they print, what they decide, and that a strategy the build
lacks makes them say "not measured" instead of failing."""
import itertools
import json

from hoardlab_lib import report, verdicts as V
from hoardlab_lib.report import hoard2026 as H, michael as M, taxonomy

_ids = itertools.count()
PROD = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc")


def row(variant, wl, t, thr=None, strategy=None, knobs="", label=None, **extra):
    strategy = strategy or variant
    r = {"index": next(_ids), "variant": variant, "allocator": variant, "strategy": strategy,
         "alloc_kind": "production" if strategy in PROD else "hoardlab", "knobs": knobs,
         "workload": wl, "workload_label": label or wl, "threads": t, "throughput": thr,
         "status": "ok", "repetition": 0, "peak_rss_kb": None,
         "hoardlab.os_bytes_peak": None, "hoardlab.in_use_peak": None}
    r.update(extra)
    return r


# --- Michael 2004 --------------------------------------------------------------------------

FIG8_WL = (("linux-scalability", None), ("threadtest", None), ("larson", None),
           ("prodcons", 500), ("prodcons", 1000))


def michael_rows(lockfree=True):
    """glibc 100 at t=1 everywhere; lockfree fastest at t=1 on linux-scalability and
    threadtest, slower than hoard on larson; on prodcons lockfree scales (x1.8), hoard does
    not (x0.9)."""
    thr = {"lockfree": {1: 250, 2: 480}, "hoard": {1: 120, 2: 230},
           "ownership": {1: 180, 2: 300}, "glibc": {1: 100, 2: 60}}
    rows = []
    for wl, work in FIG8_WL:
        label = "%s-%d" % (wl, work) if work else wl
        for a, by_t in thr.items():
            if a == "lockfree" and not lockfree:
                continue
            for t, x in by_t.items():
                if wl == "larson" and a == "lockfree":
                    x = x / 5                          # lockfree slower than hoard here
                if wl == "prodcons":
                    x = {"lockfree": (100, 180), "hoard": (100, 90)}.get(a, (100, 100))[t - 1]
                extra = {"params.spawn_first": 1}
                if work:
                    extra["params.work"] = work
                rows.append(row(a, wl, t, x, label=label, **extra))
    strategies = ["serial", "hoard"] + (["lockfree"] if lockfree else []) + ["glibc"]
    for a in strategies:
        for dead, ro in ((a != "lockfree", 0.6 if a in ("serial", "glibc") else 1.0),
                         (False, 1.02)):
            rows.append(row(a, "signal-malloc", 2, 10, **{"extra.deadlocked": dead}))
            rows.append(row(a, "stall", 2, 10, **{"extra.ratio": 1.1,
                                                   "extra.ratio_outside": ro}))
    return rows


def test_michael_section_tables_and_claims(tmp_path):
    with open(tmp_path / "cost.json", "w") as f:
        json.dump([{"allocator": a, "case": "8 B", "pair": n} for a, n in
                   (("lockfree", 90), ("hoard", 150), ("ownership", 149), ("glibc", 135),
                    ("mimalloc3", 49))], f)
    text = "\n".join(M.michael_section(michael_rows(), [], 2, str(tmp_path)))
    assert "## Lock-free allocator (Michael 2004)" in text
    assert "(`spawn_first` = 1)" in text
    # Table 1: speedup over glibc at t=1 with the paper's values beside it
    assert "| linux-scalability | 2.50 ±? | 1.20 ±? | 1.80 ±? |" in text
    assert "lockfree 2.25 / 2.75" in text
    # Figure 8: speedup over contention-free glibc at every thread count
    assert "| (a) linux-scalability | lockfree | 2.50 ±? | 4.80 ±? |" in text
    assert "| (a) linux-scalability | glibc | 1.00 ±? | 0.60 ±? |" in text
    assert "(f) prodcons work=500" in text and "(h) prodcons work=1000" in text
    assert "| (g) prodcons work=750 | not measured |" in text
    # claim 1: agrees on linux-scalability and threadtest, MISMATCH on larson
    lines = text.splitlines()
    t1 = {wl: next(ln for ln in lines if ln.startswith("- Table 1, %s:" % wl))
          for wl in ("linux-scalability", "threadtest", "larson")}
    assert t1["linux-scalability"].endswith("agrees")
    assert t1["threadtest"].endswith("agrees")
    assert t1["larson"].endswith("**MISMATCH**")
    assert any(ln.startswith("- instructions per 8 B malloc+free pair") and "lockfree 90" in ln
               and ln.endswith("agrees") for ln in lines)
    assert "lockfree is 2 of 5 (fewest: mimalloc3 49)" in text
    # claim 2: lockfree x1.80 against hoard x0.90 on both prodcons panels
    pc = [ln for ln in lines if ln.startswith("- prodcons work=")]
    assert len(pc) == 2 and all("lockfree 1.80, hoard 0.90" in ln and ln.endswith("agrees")
                                for ln in pc)
    assert "cannot show scaling beyond 2 threads" in text
    # stall and signal-malloc: counts of deadlocked runs over runs, medians of the ratios
    assert "| hoard | hoardlab | 1.10 ±0% | 1.01 ±1% | 2 | 1 of 2 |" in text
    assert "| serial | hoardlab | 1.10 ±0% | 0.81 ±26% | 2 | 1 of 2 |" in text
    assert "| lockfree | hoardlab | 1.10 ±0% | 1.01 ±1% | 2 | 0 of 2 |" in text
    assert "lockfree deadlocked in 0 of 2 runs" in text


def test_michael_section_without_lockfree_says_not_measured():
    text = "\n".join(M.michael_section(michael_rows(lockfree=False), [], 2))
    assert "Not measured in this sweep: lockfree." in text
    assert "prodcons scaling against hoard: not measured" in text
    assert "| linux-scalability | not measured | 1.20 ±? | 1.80 ±? |" in text
    assert "lockfree: not measured in stall / signal-malloc" in text
    assert "MISMATCH" not in text


def test_michael_section_without_glibc_and_absent_when_irrelevant():
    rows = [r for r in michael_rows() if r["strategy"] != "glibc"]
    text = "\n".join(M.michael_section(rows, [], 2))
    assert "Not measured: glibc" in text
    assert "prodcons work=500: speedup over its own 1 thread at t=2 (P): lockfree 1.80" in text
    assert M.michael_section([row("hoard", "threadtest", 1, 5)], [], 2) == []


def test_figure8_plot_is_drawn(tmp_path):
    from hoardlab_lib.report import plots
    assert plots.figure8_plot(michael_rows(), str(tmp_path)) == ["figure8.png"]
    assert (tmp_path / "figure8.png").stat().st_size > 0
    assert plots.figure8_plot([r for r in michael_rows() if r["strategy"] != "glibc"],
                              str(tmp_path)) == []


# --- Hoard 2026 ----------------------------------------------------------------------------

VARIANTS = (("hoard", "hoard", ""), ("hoard-tlab", "hoard", "tlab=on"),
            ("hoard-shards", "hoard", "global_shards=8"), ("hoard-cpu", "hoard", "heap_select=cpu"),
            ("hoard2026", "hoard2026", ""))


def hoard2026_rows(with_2026=True):
    """Throughput: hoard 100, each element 110, hoard2026 130 (t=1) and 90 (t=2); mimalloc
    120 and jemalloc 100 at both. Peak RSS: hoard2026 8 MiB, mimalloc 10 MiB. Blowup: flat
    rounds, memory flat over threads (O(1))."""
    rows = []
    mib = 1024          # KiB
    for wl in H.WORKLOADS:
        for t in (1, 2):
            for label, strat, knobs in VARIANTS:
                if strat == "hoard2026" and not with_2026:
                    continue
                x = {"hoard": 100, "hoard2026": 130 if t == 1 else 90}.get(label, 110)
                rows.append(row(label, wl, t, x, strategy=strat, knobs=knobs,
                                peak_rss_kb=8 * mib, **{"hoardlab.os_bytes_peak": 4 << 20}))
            for p, x in (("mimalloc", 120), ("jemalloc", 100)):
                rows.append(row(p, wl, t, x, peak_rss_kb=10 * mib))
    rounds = []
    for wl, ts in (("blowup-prodcons", (2,)), ("blowup-roundrobin", (1, 2, 4))):
        for label, strat, knobs in VARIANTS + (("serial", "serial", ""),):
            if strat == "hoard2026" and not with_2026:
                continue
            for t in ts:
                r = row(label, wl, t, 1, strategy=strat, knobs=knobs, peak_rss_kb=8 * mib,
                        **{"hoardlab.os_bytes_peak": 1 << 20, "hoardlab.in_use_peak": 1 << 19})
                rows.append(r)
                rounds += [{"index": r["index"], "round": i, "os_bytes": 1 << 20,
                            "live_bytes": 1 << 19, "rss_kb": None} for i in range(8)]
    return rows, rounds


def test_hoard2026_section_ablation_targets_and_blowup():
    rows, rounds = hoard2026_rows()
    text = "\n".join(H.hoard2026_section(rows, rounds, 2))
    # measured once, a ratio has no interval: no direction is claimed from it
    once = next(ln for ln in text.splitlines() if ln.startswith("- larson at t=1: hoard2026"))
    assert once.endswith("— one run, no interval"), once
    lines = text.splitlines()
    assert "## Hoard 2026 (PR 88) ablation" in text
    assert "| larson | 1 | 100 ±? | 1.10 ±? | 1.10 ±? | 1.10 ±? | 1.30 ±? | 1.00 ±? | " \
        "1.20 ±? |" in text
    assert "| larson | 2 | 100 ±? | 1.10 ±? | 1.10 ±? | 1.10 ±? | 0.90 ±? | 1.00 ±? | " \
        "1.20 ±? |" in text
    # a second repetition within 1% of the first: the ratios' intervals decide below
    rows = rows + [dict(r, index=10 ** 6 + i, repetition=1, throughput=r["throughput"] * 1.01)
                   for i, r in enumerate(rows) if r.get("throughput") is not None]
    text = "\n".join(H.hoard2026_section(rows, rounds, 2))
    lines = text.splitlines()
    # beside the best production allocator (mimalloc, 120): faster at t=1, slower at t=2 --
    # directions, never a development target's verdict
    t1 = next(ln for ln in lines if ln.startswith("- larson at t=1: hoard2026"))
    t2 = next(ln for ln in lines if ln.startswith("- larson at t=2: hoard2026"))
    assert "best production mimalloc" in t1 and t1.endswith("— faster")
    assert t2.endswith("— slower")
    assert "target" not in text and "issue" not in text.lower()
    assert sum(1 for ln in lines if ln.startswith("- ") and " at t=" in ln and
               "best production" in ln) == 8
    mem = [ln for ln in lines if "peak RSS: hoard2026" in ln]
    assert mem and all(ln.endswith("less") and "(0.80x)" in ln for ln in mem)
    # blowup: O(1) for hoard2026 and hoard-shards
    for label in ("hoard2026", "hoard-shards"):
        b = next(ln for ln in lines if ln.startswith("- %s: blowup" % label))
        assert "blowup O(1)" in b and b.endswith("agrees"), b
        assert "the design claims O(1)" in b
    # PR 88's directions beside the measured ones
    assert "| threadtest | time | jemalloc | better in 5, worse in 1 of 6: better |" in text
    assert "| threadtest | memory | glibc | better in 2, worse in 0 of 6: better |" in text
    assert "What 2 cores can confirm" in text and "cannot appear here" in text


def test_hoard2026_section_without_the_strategy_says_not_measured():
    rows, rounds = hoard2026_rows(with_2026=False)
    text = "\n".join(H.hoard2026_section(rows, rounds, 2))
    assert "Not measured in this sweep: hoard2026." in text
    assert "- hoard2026: not measured" in text
    assert "hoard2026: not among this sweep's allocators" in text
    assert "MISMATCH" not in text
    assert "- hoard-shards: blowup O(1)" in text
    assert H.hoard2026_section([row("hoard", "larson", 1, 5)], [], 2) == []


def test_report_write_carries_both_sections(tmp_path):
    rows, rounds = hoard2026_rows()
    rows += michael_rows()
    meta = {"machine": {"cores": 2}, "sweep": {"name": "t"}}
    path, _ = report.write(str(tmp_path), rows, rounds, meta, [], [])
    text = open(path).read()
    assert text.index("## Lock-free allocator (Michael 2004)") < \
        text.index("## Hoard 2026 (PR 88) ablation") < text.index("## Throughput")


def test_taxonomy_rows_for_the_new_strategies():
    """lockfree and hoard2026 get taxonomy rows with a claim and a measured blowup class."""
    rows, rounds = [], []
    for s in ("serial", "lockfree", "hoard2026"):
        for t in (1, 2, 4):
            r = row(s, "blowup-roundrobin", t, 1, **{"hoardlab.os_bytes_peak": 1 << 20,
                                                     "hoardlab.in_use_peak": 1 << 19})
            rows.append(r)
            rounds += [{"index": r["index"], "round": i, "os_bytes": 1 << 20,
                        "live_bytes": 1 << 19, "rss_kb": None} for i in range(8)]
    # the census finds false sharing under both: a mismatch for lockfree (Michael claims it
    # avoids false sharing), none for hoard2026 (PR 88 makes no claim about it)
    for s in ("lockfree", "hoard2026"):
        rows.append(row(s, "active-false", 2, 1, label="census-active-false",
                        **{"knob.census": "on", "hoardlab.census_false_blocks": 7}))
    tax = {e["variant"]: e for e in V.taxonomy(rows, rounds, 2)}
    assert tax["lockfree"]["mismatches"] == ["false_sharing"]
    assert tax["hoard2026"]["false_sharing"]["value"] == "no"
    for s in ("lockfree", "hoard2026"):
        assert tax[s]["claim"] is not None
        assert tax[s]["blowup"]["value"] == "O(1)"
    assert tax["hoard2026"]["mismatches"] == []
    lines, _ = taxonomy.taxonomy_section(rows, rounds, 2)
    text = "\n".join(lines)
    assert "| hoard2026 |" in text and "Hoard 2026 (PR 88" in text
    assert "| no | no claim | O(1) | O(1) | none |" in text
    # hoard2026 alone among the strategies (as in the taxonomy sweep): no ablation section
    assert H.hoard2026_section(rows, rounds, 2) == []


def test_hoard2026_targets_within_noise_when_the_runs_overlap():
    rows, rounds = hoard2026_rows()
    # a second repetition: hoard2026 at t=1 spreads 100-130 and mimalloc 115-120, so the
    # ratio's interval [0.83, 1.13] contains 1: neither agrees nor MISMATCH
    extra = [dict(r, index=10 ** 6 + i, repetition=1, throughput=100 if r["variant"] ==
                  "hoard2026" else 115 if r["variant"] == "mimalloc" else r["throughput"])
             for i, r in enumerate(rows) if r["workload"] == "larson" and r["threads"] == 1]
    text = "\n".join(H.hoard2026_section(rows + extra, rounds, 2))
    t1 = next(ln for ln in text.splitlines() if ln.startswith("- larson at t=1: hoard2026"))
    assert t1.endswith("— within noise"), t1
    assert "hoard2026 115 ±13% ops/s, best production mimalloc 118 ±2% (0.98 [0.83, 1.13]x)" in t1


def test_a_one_knob_sweep_gets_neither_the_taxonomy_nor_the_ablation(tmp_path):
    """Issue 25: a section appears only when the sweep measured what it compares. hoard
    against hoard with heap_select=cpu is a one-knob experiment: the knob table reports it."""
    rows = []
    for label, knobs in (("hoard", ""), ("hoard-cpu", "heap_select=cpu")):
        for rep in range(3):
            for t in (1, 2):
                rows.append(row(label, "larson", t, 100 + rep, strategy="hoard", knobs=knobs,
                                repetition=rep))
    assert H.hoard2026_section(rows, [], 2) == []
    assert taxonomy.taxonomy_section(rows, [], 2)[0] == []
    meta = {"machine": {"cores": 2}, "sweep": {"name": "one-knob"}}
    text = open(report.write(str(tmp_path), rows, [], meta, [], [])[0]).read()
    assert "Taxonomy" not in text and "Hoard 2026" not in text
    assert "not measured" not in text
