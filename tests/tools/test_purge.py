"""Issue 36's measurement: the phased workload's checkpoints after the drain and its next
burst in a real hlbench run, the purge sweep's report section (report/purge.py) on hand-made
tidy rows (made-up numbers: its frontier, the dominated named, Hoard #116's claim, the PNG),
the memory-back table's note on the rows with a purge policy, and the sweep file itself."""
import itertools
import json
import os
import subprocess

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import sweeps as SW
from hoardlab_lib.runkit import tidy
from hoardlab_lib.report import drain as D, purge as P, series as S

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
CHECKS = ("100ms", "1s", "5s")
KINDS = ("rss_kb", "private_dirty_kb", "lazyfree_kb", "live_bytes", "held_bytes")


def phased(*args):
    p = subprocess.run([HLBENCH, "phased", "--threads", "2", "--live", "200"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@needs_built("harness/hlbench")
def test_checkpoints_and_next_burst_in_a_real_run():
    """0.3 s of phases, checkpoints at 50 ms, 100 ms and 1 s after the drain: with next_burst
    the drain waits for the last, the next burst follows, and every key reaches runs.csv's
    columns; without it, a checkpoint after the end of the run is null."""
    rec = phased("--seconds", "0.3", "--checkpoints", "0.05,0.1,1", "--next-burst", "1")
    ex = rec["extra"]
    assert [p["name"] for p in ex["phases"]] == ["steady", "spike", "drain", "burst", "steady"]
    drain, burst = ex["phases"][2], ex["phases"][3]
    assert drain["end_s"] - ex["drained_s"] >= 1.0 and burst["end_s"] > burst["start_s"]
    assert rec["wall_s"] > 1.0
    for t in ("50ms", "100ms", "1s"):
        for k in KINDS[:4]:
            assert isinstance(ex["after_drain_%s_%s" % (t, k)], int), (t, k, ex)
        assert "after_drain_%s_held_bytes" % t in ex       # null without libhoardlab
        assert "after_drain_%s_cache_bytes" % t in ex      # (glibc's: null)
        assert "after_drain_%s_sb_live" % t in ex          # (where the rest is: null too)
    assert ex["next_burst_ops_per_s"] > 0 and ex["spike_ops_per_s"] > 0
    row = {}
    tidy._flatten("extra.", ex, row)
    assert row["extra.after_drain_1s_rss_kb"] == ex["after_drain_1s_rss_kb"]

    rec = phased("--seconds", "0.3")                         # the defaults: 0.1, 1 and 5 s
    ex = rec["extra"]
    assert [p["name"] for p in ex["phases"]] == ["steady", "spike", "drain", "steady"]
    assert ex["next_burst_ops_per_s"] is None
    assert all(ex["after_drain_%s_%s" % (t, k)] is None for t in ("1s", "5s") for k in KINDS)
    assert rec["wall_s"] < 1.0


@needs_built("harness/hlbench")
@pytest.mark.parametrize("bad", ["0.1,0.05", "0.0001", "1,x", "0", "1,2,3,4,5,6,7,8,9"])
def test_bad_checkpoints_are_refused(bad):
    p = subprocess.run([HLBENCH, "phased", "--seconds", "0.1", "--checkpoints", bad],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert p.returncode == 2 and "checkpoints" in p.stderr and p.stderr.count("\n") == 1


# --- the report section on hand-made rows ----------------------------------------------------

_ids = itertools.count()
PROD = ("glibc", "jemalloc", "tcmalloc")
# variant: (strategy, knobs, held 1 s after the drain (of the spike's RSS peak), next burst
# ops/s). Frontier: jemalloc, hoard2026-free-64M, hoard2026-off. Dominated: hoard2026-free-0
# by jemalloc; glibc and tcmalloc by hoard2026-free-64M.
POINTS = {"glibc": ("glibc", "", 0.6, 100e6), "jemalloc": ("jemalloc", "", 0.2, 80e6),
          "tcmalloc": ("tcmalloc", "", 0.7, 90e6),
          "hoard2026-off": ("hoard2026", "purge=off", 0.9, 150e6),
          "hoard2026-free-0": ("hoard2026", "purge=free;retain=0", 0.3, 70e6),
          "hoard2026-free-64M": ("hoard2026", "purge=free;retain=64M", 0.5, 120e6)}


def purge_rows(points=POINTS, reps=(0.98, 1.0, 1.02)):
    rows = []
    peak = 100000
    for v, (strat, knobs, held, thr) in points.items():
        for i, f in enumerate(reps):
            r = {"index": next(_ids), "variant": v, "allocator": v, "strategy": strat,
                 "alloc_kind": "production" if strat in PROD else "hoardlab", "knobs": knobs,
                 "workload": "phased", "workload_label": "phased", "threads": 2,
                 "status": "ok", "repetition": i, "extra.next_burst_ops_per_s": thr * f,
                 "extra.spike_ops_per_s": thr / 2,
                 "extra.phases": json.dumps([{"name": "steady"}, {"name": "spike",
                                             "rss_kb_peak": peak},
                                            {"name": "drain"}])}
            for t, k in zip(CHECKS, (1.2, 1.0, 0.8)):
                r[D.col(t, "rss_kb")] = int(peak * held * f * k) + 500
                r[D.col(t, "lazyfree_kb")] = 500
                r[D.col(t, "live_bytes")] = 20 << 20
            rows.append(r)
    return rows


def test_frontier_names_the_dominated():
    front, dom = P.frontier([(v, h, x) for v, (_, _, h, x) in POINTS.items()])
    assert front == ["jemalloc", "hoard2026-free-64M", "hoard2026-off"]
    assert dom == {"hoard2026-free-0": "jemalloc", "glibc": "hoard2026-free-64M",
                   "tcmalloc": "hoard2026-free-64M"}
    # a tie on both is not domination; better in one, equal in the other is
    assert P.frontier([("a", 1, 1), ("b", 1, 1)]) == (["a", "b"], {})
    assert P.frontier([("a", 1, 1), ("b", 1, 2)]) == (["b"], {"a": "b"})


def test_section_table_frontier_and_claim():
    text = "\n".join(P.purge_section(purge_rows()))
    assert "## " + P.SECTION in text
    assert "| hoard2026-free-64M | purge = free, retain = 64M | 0.60 ±2% | 0.50 ±2% | " \
        "0.40 ±2% | 120M ±2% | 2.00 ±2% |" in text
    assert "| glibc | its own |" in text
    assert "Frontier (not dominated), from least held: `jemalloc`, `hoard2026-free-64M`, " \
        "`hoard2026-off`." in text
    assert "`hoard2026-free-0` by `jemalloc` (decided)" in text
    assert "`glibc` by `hoard2026-free-64M` (decided)" in text
    # Hoard #116: 64M against retain 0 is faster (120 / 70) and holds more (0.5 / 0.3)
    assert "| hoard2026 | free | 64M | 1.71 [1.65, 1.78] | 1.67 [1.60, 1.73] | yes | yes | " \
        "agrees |" in text
    assert "The claim as a whole agrees in 1, **MISMATCH** in 0" in text
    # hoard2026 beside production: free-64M's burst is 0.8 of purge = off's, so only off
    # counts; a ratio and its direction, no development target judged
    assert "`hoard2026`'s best policy whose next burst is within 10% of `purge = off` " \
        "(ratio >= 0.9 by its interval): `hoard2026-off`, held 1 s 0.90 [0.88, 0.92]; the " \
        "production allocator holding least, `jemalloc`: 0.20 [0.20, 0.20]; ratio 4.50 " \
        "[4.32, 4.68]: holds more." in text
    assert "target" not in text.lower() and "issue" not in text.lower()
    assert "| hoard2026-free-64M | purge = free, retain = 64M |" in text and \
        "| 120M ±2% | 2.00 ±2% | 0.80 ±4% |" in text
    assert "`hoard202607` with its defaults: not measured." in text


def test_retain_budget_of_hoard202607_defaults():
    """RSS less LazyFree 1 s after the drain (0.5 of a 100000 kB peak = 48.83 MiB) beyond the
    bytes live then (20 MiB): 28.83 MiB, within the 64 MiB retain budget."""
    pts = dict(POINTS)
    pts["hoard202607"] = ("hoard202607", "", 0.5, 110e6)
    text = "\n".join(P.purge_section(purge_rows(pts, reps=(1.0, 1.0))))
    assert "- `hoard202607` with its defaults (`hoard202607`): RSS less LazyFree 1 s after " \
        "the drain beyond the bytes live then (the harness's own memory included), 28.83 " \
        "MiB, at most its retain budget of 64 MiB (Hoard #116's design): agrees." in text
    # one repetition decides nothing
    text = "\n".join(P.purge_section(purge_rows(pts, reps=(1.0,))))
    assert "28.83 MiB, at most its retain budget of 64 MiB (Hoard #116's design): within " \
        "noise." in text
    assert "- `hoard2026` against the production allocators: within noise: no policy's next " \
        "burst is within 10% of `purge = off` by its interval (ratio >= 0.9)." in text
    assert "(within noise)" in text and "| yes |" not in text


def test_retain_budget_says_where_the_bytes_sit():
    """Over the budget (0.9 of the peak: 67.89 MiB beyond live), the line gives the medians of
    the allocator's statistics: what retain bounds and the two parts it does not."""
    pts = dict(POINTS)
    pts["hoard202607"] = ("hoard202607", "", 0.9, 110e6)
    rows = purge_rows(pts)
    for r in rows:
        if r["variant"] == "hoard202607":
            r[D.col("1s", "parked_bytes")] = 60 << 20
            r[D.col("1s", "cache_bytes")] = 9 << 20
            r[D.col("1s", "heaps_free_bytes")] = (20 << 20) + r["repetition"]
    text = "\n".join(P.purge_section(rows))
    assert "at most its retain budget of 64 MiB (Hoard #116's design): **MISMATCH**. Held " \
        "then, by its statistics (medians; bytes held, resident or not, so they need not add " \
        "up to the figure above): 60.00 MiB kept within `retain` (parked empty superblocks " \
        "and freed large mappings' ranges); 9.00 MiB in the threads' TLABs; 20.00 MiB free " \
        "inside the thread heaps' superblocks (a - u: Hoard's emptiness threshold lets each " \
        "heap keep `release_threshold` superblocks free per size class under accounting = " \
        "class, and `empty_fraction` of the rest)." in text
    # rows without those statistics (a run without libhoardlab's): no breakdown, no error
    assert "Held then" not in "\n".join(P.purge_section(purge_rows(
        dict(POINTS, hoard202607=("hoard202607", "", 0.9, 110e6)))))


def test_retain_budget_on_every_free_byte():
    """With retain_counts = free beside the defaults, a second line judges that row (0.5 of
    the peak: 28.83 MiB beyond live, within the budget) under its own claim."""
    pts = dict(POINTS)
    pts["hoard202607"] = ("hoard202607", "", 0.9, 110e6)
    pts["counted"] = ("hoard202607", "purge=free;retain=64M;retain_counts=free", 0.5, 100e6)
    text = "\n".join(P.purge_section(purge_rows(pts, reps=(1.0, 1.0))))
    assert "at most its retain budget of 64 MiB (Hoard #116's design): **MISMATCH**." in text
    assert "- `hoard202607` with `retain_counts = free` (`counted`): RSS less LazyFree 1 s " \
        "after the drain beyond the bytes live then (the harness's own memory included), " \
        "28.83 MiB, at most its retain budget of 64 MiB (the budget then counts every free " \
        "byte it holds): agrees." in text
    assert "| counted | purge = free, retain = 64M, retain_counts = free |" in text


def test_claim_within_noise_and_mismatch():
    pts = dict(POINTS)
    pts["hoard2026-free-64M"] = ("hoard2026", "purge=free;retain=64M", 0.3, 70.5e6)
    text = "\n".join(P.purge_section(purge_rows(pts)))
    assert "| hoard2026 | free | 64M |" in text and "| within noise | within noise | within " \
        "noise |" in text
    pts["hoard2026-free-64M"] = ("hoard2026", "purge=free;retain=64M", 0.6, 50e6)
    text = "\n".join(P.purge_section(purge_rows(pts)))
    assert "| no | yes | **MISMATCH** |" in text


def test_claim_keeps_decay_policies_apart():
    """purge = decay (jemalloc's decaying purge): each decay_ms its own retain-0 baseline."""
    pts = dict(POINTS)
    for ms, f in (("100", 1.0), ("1000", 2.0)):
        pts["d%s-0" % ms] = ("hoard2026", "decay_ms=%s;purge=decay;retain=0" % ms, 0.3, 70e6)
        pts["d%s-64M" % ms] = ("hoard2026", "decay_ms=%s;purge=decay;retain=64M" % ms,
                               0.3 * f, 70e6 * f)
    text = "\n".join(P.purge_section(purge_rows(pts)))
    assert "| d100-64M | purge = decay, decay_ms = 100, retain = 64M |" in text
    assert "| hoard2026 | decay, decay_ms = 100 | 64M | 1.00 [0.96, 1.04] | " in text
    assert "| hoard2026 | decay, decay_ms = 1000 | 64M | 2.00 [1.92, 2.08] | 2.00 [1.92, " \
        "2.08] | yes | yes | agrees |" in text


def test_section_absent_without_checkpoints():
    rows = purge_rows()
    for r in rows:
        del r["extra.next_burst_ops_per_s"]
    assert P.purge_section(rows) == [] and D.points(rows) == []


def test_pareto_plot_is_drawn(tmp_path):
    files = P.pareto_plot(purge_rows(), str(tmp_path))
    assert files == [P.PLOT]
    with open(tmp_path / P.PLOT, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_memory_back_names_the_purge_policy():
    """The "After the spike" table says with which policy hoard2026 and hoard202607 ran, what
    they kept, and points at the purge section; a production allocator gets no line."""
    rows = []
    for v, kept in (("hoard202607", 0.9), ("jemalloc", 0.2)):
        for i in range(2):
            ph = [{"name": "steady"}, {"name": "spike", "held_bytes_peak": 100 << 20,
                                       "rss_kb_peak": 102400},
                  {"name": "drain"},
                  {"name": "steady", "held_bytes_end": int(kept * (100 << 20)),
                   "live_bytes_peak": 20 << 20,
                   "rss_kb_end": int(kept * 102400), "private_dirty_kb_end": int(kept * 102400),
                   "lazyfree_kb_end": 0}]
            rows.append({"index": next(_ids), "variant": v, "strategy": v, "knobs": "",
                         "workload": "phased", "workload_label": "phased", "threads": 2,
                         "status": "ok", "repetition": i, "series.samples": 10,
                         "extra.phases": json.dumps(ph)})
    text = "\n".join(S.phases_table(rows))
    assert "- `hoard202607` ran with purge = free, retain = 64M: it kept 0.90 of its A and " \
        "0.90 of its RSS peak in Private_Dirty; at the end 70.00 MiB of Private_Dirty beyond " \
        "the live bytes (the last phase's peak), against a retain budget of 64.00 MiB." in text
    assert "`jemalloc` ran" not in text
    assert '"%s"' % P.SECTION in text and "configs/sweeps/purge.ini" in text


def test_the_purge_sweep_file():
    path = os.path.join(REPO, "configs", "sweeps", "purge.ini")
    with open(path) as f:
        s = SW.Sweep(f.read(), path, ncores=2, strategies=["hoard", "hoard2026", "hoard202607"])
    runs = s.expand()
    variants = {r["variant"] for r in runs}
    assert {"glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc"} <= variants
    for strat in ("hoard2026", "hoard202607"):
        for purge in ("free", "dontneed"):
            for retain in ("0", "16M", "64M", "256M"):
                assert "%s-%s-%s" % (strat, purge, retain) in variants
    assert all(r["workload"] == "phased" for r in runs)
    assert all(r["params"]["next_burst"] == "1" for r in runs if r["workload_label"] != "churn")
    # issue 49: both survivor patterns against every production allocator (the targets are
    # decided: at least 3 repetitions), the explicit collect, and the churn measure
    prod = {"glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc",
            "tcmalloc-google"}
    for label, param in (("spread", "keep_every"), ("together", "keep_first")):
        rr = [r for r in runs if r["workload_label"] == label]
        assert prod <= {r["variant"] for r in rr} and "hoard2026-off" in {r["variant"] for r in rr}
        assert all(r["params"][param] == "32" and r["params"]["max_size"] == "512" and
                   r["repetition"] < 5 for r in rr) and max(r["repetition"] for r in rr) >= 2
        assert {r["variant"] for r in runs if r["workload_label"] == label + "-collect" and
                r["params"]["collect"] == "1"} >= {"hoard2026-off", "hoard202607-free-64M"}
    churn = [r for r in runs if r["workload_label"] == "churn"]
    assert churn and all(r["params"]["churn"] != "0" and
                         r["params"]["checkpoints"].endswith(",10") for r in churn)
    assert "purge_holes" in open(path).read()       # where the hole-purging rows go
