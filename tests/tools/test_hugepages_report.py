"""The hugepages sweep (configs/sweeps/hugepages.ini) and its report section
(report/hugepages.py): Temeraire's claim decided per row and value on hand-made tidy rows
(made-up numbers: coverage up, memory worse beyond the bound, a throughput gain inside the
noise, THP never), hoard2026 with filler beside tcmalloc-google and mimalloc3, the plot; the
sweep file parsed and every allocator and knob of it checked as `tools/hoardlab sweep` checks
them (check.sweep: hlconfig --check); and a tiny real run of the sweep's sections."""
import configparser
import itertools
import json
import os
import subprocess
import sys

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, sweeps as SW
from hoardlab_lib.runkit import check, tidy
from hoardlab_lib.report import hugepages as H
from hoardlab_lib.report.drain import col

SWEEP = os.path.join(REPO, "configs", "sweeps", "hugepages.ini")
TOOL = os.path.join(REPO, "tools", "hoardlab")
_ids = itertools.count()
FREE0, OFF = "purge = free, retain = 0", "purge = off"


def chase(label, value, thr, cov, reps=(0.98, 1.0, 1.02), kind="hoardlab"):
    """Chase rows of one allocator and value: throughput thr x each rep, coverage cov (+ a
    little spread when above 0)."""
    rows = []
    for i, f in enumerate(reps):
        knobs = "hugepages=%s" % value if value else ""
        rows.append({"index": next(_ids), "allocator": label,
                     "variant": label + ("[hugepages=%s]" % value if value else ""),
                     "strategy": label, "alloc_kind": kind, "knobs": knobs,
                     "workload": "chase", "workload_label": "chase", "threads": 1,
                     "status": "ok", "repetition": i, "throughput": thr * f, "wall_s": 2.0,
                     "huge_coverage": min(1.0, cov * f), "series.anon_huge_kb_mean": cov * f,
                     "series.rss_kb_mean": 1.0})
    return rows


def drain(label, value, purge, held_mib, reps=(0.99, 1.0, 1.01), kind="hoardlab"):
    """Phased rows of one allocator, value and purge ('free0', 'off' or None: its own), RSS
    less LazyFree 1 s after the drain held_mib MiB x each rep."""
    knobs = {"free0": "purge=free;retain=0", "off": "purge=off", None: ""}[purge]
    if value:
        knobs = ";".join(x for x in ("hugepages=" + value, knobs) if x)
    rows = []
    for i, f in enumerate(reps):
        r = {"index": next(_ids), "allocator": label, "variant": label, "strategy": label,
             "alloc_kind": kind, "knobs": knobs, "workload": "phased",
             "workload_label": "drain", "threads": 2, "status": "ok", "repetition": i}
        r[col("1s", "rss_kb")] = int(held_mib * f * 1024) + 100
        r[col("1s", "lazyfree_kb")] = 100
        rows.append(r)
    return rows


def row_set(filler_thr=1.3, filler_held=1.02, filler_cov=0.95):
    """hoard2026 off / madvise / filler, mimalloc3 and tcmalloc-google."""
    rows = chase("hoard2026", "off", 100e6, 0.0) + \
        chase("hoard2026", "madvise", 100.5e6, 0.5) + \
        chase("hoard2026", "filler", 100e6 * filler_thr, filler_cov) + \
        chase("mimalloc3", None, 120e6, 0.9, kind="production") + \
        chase("tcmalloc-google", None, 110e6, 0.4, kind="production")
    for value, f in (("off", 1.0), ("madvise", 1.0), ("filler", filler_held)):
        rows += drain("hoard2026", value, "free0", 50 * f) + drain("hoard2026", value, "off",
                                                                      80 * f)
    rows += drain("mimalloc3", None, None, 30, kind="production")
    return rows


def text_of(rows, meta=None):
    return "\n".join(H.hugepages_section(rows, meta or {"machine": {"thp": "madvise"}}, 2))


def claim_line(text, value):
    """hoard2026's line of the claim table (after the main table)."""
    claims = text.split("### Temeraire")[1]
    return next(line for line in claims.splitlines()
                if line.startswith("| hoard2026 | %s |" % value))


def test_coverage_up_memory_within_throughput_up_agrees():
    text = text_of(row_set())
    assert "## " + H.SECTION in text
    # the table: throughput over off, coverage, held under each purge over off's
    assert "| hoard2026 | filler | 130M ±2% | 1.30 ±4% | 0.95 ±2% | 0.95 ±2% | 51.00 ±1% | " \
        "1.02 ±2% | 81.60 ±1% | 1.02 ±2% | – | – |" in text
    assert "| hoard2026 | off | 100M ±2% | – | 0.00 ±0% |" in text
    assert "| mimalloc3 | – | 120M ±2% | – | 0.90 ±2% | 0.90 ±2% | – | – | – | – | " \
        "30.00 ±1% | – |" in text
    assert claim_line(text, "filler") == "| hoard2026 | filler | up | yes | up | agrees |"
    # madvise: coverage up, memory the same, throughput 1.005x: within noise
    assert claim_line(text, "madvise") == \
        "| hoard2026 | madvise | up | yes | within noise | within noise |"
    assert "The claim agrees in 1 of 2, **MISMATCH** in 0, within noise in 1." in text
    assert "THP" not in text.split("### ")[0] and "never" not in text


def test_memory_beyond_the_bound_is_a_mismatch():
    text = text_of(row_set(filler_held=1.2))
    assert claim_line(text, "filler") == "| hoard2026 | filler | up | no | up | **MISMATCH** |"
    # the aim's bound is 1.1x: beyond it too, under both purge policies
    assert "- held 1 s after the drain over `off`'s, purge = free, retain = 0: 1.20 " \
        "[1.18, 1.22]: beyond 1.1x." in text
    # between the claim's 5% and the aim's 1.1x: the claim fails, the aim holds
    text = text_of(row_set(filler_held=1.075))
    assert claim_line(text, "filler").endswith("| up | no | up | **MISMATCH** |")
    assert "purge = off: 1.07 [1.05, 1.10]: within 1.1x." in text


def test_a_throughput_gain_inside_the_noise_is_undecided():
    rows = row_set(filler_thr=1.03)
    for r in rows:      # wide spread: the ratio's interval reaches 1
        if r.get("workload") == "chase" and r["allocator"] == "hoard2026":
            r["throughput"] *= (0.9, 1.0, 1.1)[r["repetition"]]
    text = text_of(rows)
    assert claim_line(text, "filler") == \
        "| hoard2026 | filler | up | yes | within noise | within noise |"
    # one repetition decides nothing either
    one = [r for r in row_set() if r["repetition"] == 0]
    line = claim_line(text_of(one), "filler")
    assert line == "| hoard2026 | filler | within noise | within noise | within noise | " \
        "within noise |"


def test_coverage_not_up_when_both_stay_at_zero():
    rows = [r for r in row_set() if not (r["allocator"] == "hoard2026" and
                                         "madvise" in r["knobs"])]
    rows += chase("hoard2026", "madvise", 130e6, 0.0)
    assert claim_line(text_of(rows), "madvise").startswith(
        "| hoard2026 | madvise | not up | ")
    assert H.above(H.V.exact(0), H.V.spread_of([0, 0])) is None      # one value: no interval
    assert H.above(H.V.spread_of([0.1, 0.2]), H.V.spread_of([0, 0.3])) is None


def test_hoard2026_filler_beside_the_production_allocators():
    text = text_of(row_set())
    assert "- coverage 0.95 [0.93, 0.97] against `tcmalloc-google`'s 0.40 [0.39, 0.41]: " \
        "at least." in text
    assert "- coverage 0.95 [0.93, 0.97] against `mimalloc3`'s 0.90 [0.88, 0.92]: " \
        "at least." in text
    assert "- coverage 0.95 [0.93, 0.97] against 0.90: at least." in text
    assert "- chase throughput over `mimalloc3`'s: 1.08 [1.04, 1.13]: at least." in text
    assert "- held 1 s after the drain over `off`'s, purge = free, retain = 0: 1.02 " \
        "[1.00, 1.04]: within 1.1x." in text
    # the report's rule: an aim is shown, not judged, and names no issue
    aim = text.split("### `hoard2026` with `filler`")[1]
    assert "MISMATCH" not in aim and "agrees" not in aim and "issue" not in text.lower()
    text = text_of(row_set(filler_cov=0.5, filler_thr=1.1))
    assert "against `mimalloc3`'s 0.90 [0.88, 0.92]: below." in text
    assert "- coverage 0.50 [0.49, 0.51] against 0.90: below." in text
    assert "- chase throughput over `mimalloc3`'s: 0.92 [0.88, 0.95]: below." in text


def test_thp_never_is_said_once_and_nothing_is_judged():
    rows = row_set(filler_cov=0.0)
    for r in rows:
        if r.get("workload") == "chase":
            r["huge_coverage"] = r["series.anon_huge_kb_mean"] = 0.0
    text = text_of(rows, {"machine": {"thp": "never"}})
    assert text.count("transparent huge pages are `never`") == 1
    assert claim_line(text, "filler").endswith("| not testable (THP never) |")
    assert "| **MISMATCH** |" not in text and "The claim agrees in" not in text
    assert "(THP `never`: every coverage above is 0.)" in text


def test_without_the_drain_the_claim_is_undecided_not_within_noise():
    rows = [r for r in row_set() if r["workload"] == "chase"]
    text = text_of(rows)
    assert claim_line(text, "filler") == \
        "| hoard2026 | filler | up | not measured | up | undecided: memory not measured |"
    assert "- held after the drain over `off`'s: not measured." in text
    assert "The claim agrees in 0 of 2, **MISMATCH** in 0, within noise in 0, undecided in " \
        "2 (memory not measured)." in text


def test_no_section_without_a_heap_row_on_the_chase():
    rows = [r for r in row_set() if r["alloc_kind"] == "production"]
    assert H.hugepages_section(rows, {}, 2) == []
    assert H.hugepages_section([], {}, 2) == []


def test_the_plot_is_drawn(tmp_path):
    assert H.coverage_plot(row_set(), str(tmp_path), 2) == [H.PLOT]
    with open(tmp_path / H.PLOT, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def strategies():
    out = subprocess.run([os.path.join(BDIR, "src", "hlconfig"), "--strategies"],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines() if line.strip()]


def test_the_sweep_file_names_every_heap_row_value_and_production_allocator():
    with open(SWEEP) as f:
        s = SW.Sweep(f.read(), SWEEP, ncores=2,
                     strategies=["ownership", "hoard", "hoard2026", "hoard202607"])
    runs = s.expand()
    rows = ("ownership", "hoard", "hoard2026", "hoard202607", "mimalloc-like",
            "snmalloc-like", "tcmalloc-like")
    prod = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "tcmalloc-google",
            "snmalloc")
    assert set(prod) <= set(allocators.PRODUCTION)
    chase_v = {r["variant"] for r in runs if r["workload"] == "chase"}
    assert chase_v == {"%s[hugepages=%s]" % (a, v) for a in rows for v in H.VALUES} | set(prod)
    assert all(r["threads"] == 1 for r in runs
               if r["workload"] == "chase")
    assert s.repetitions == 3
    # the drain: hoard, hoard2026 and hoard202607 and each value under purge = free, retain = 0
    # and purge = off, the production allocators under their own
    pol = {(r["allocator"], r["knobs"].get("hugepages"), r["knobs"].get("purge"),
            r["knobs"].get("retain")) for r in runs if r["workload"] == "phased"}
    for a in rows[1:4]:
        for v in H.VALUES:
            assert (a, v, "free", "0") in pol and (a, v, "off", None) in pol
    # ownership and the composed rows: their own (purge acts nowhere under ownership, and
    # purge = off contradicts the composed rows' retain)
    assert {(a, v, None, None) for a in rows[:1] + rows[4:] for v in H.VALUES} <= pol
    assert {(p, None, None, None) for p in prod} <= pol
    assert all(r["params"]["checkpoints"] == "0.1,1" for r in runs if r["workload"] == "phased")


@needs_built("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")
def test_the_sweep_file_passes_the_sweeps_own_checks(monkeypatch):
    """What `tools/hoardlab sweep` checks before the first run (check.sweep: every strategy,
    knob and value with hlconfig --check / --effective, every workload and parameter); the
    production libraries' presence is install-deps' business, not this file's."""
    strat = strategies()
    with open(SWEEP) as f:
        s = SW.Sweep(f.read(), SWEEP, ncores=2, strategies=strat)
    monkeypatch.setattr(check, "production_library", lambda name: None)
    check.sweep(s, s.expand(), BDIR, strat)


def tiny_sweep(tmp_path):
    """The sweep file at its smallest: one repetition, hoard2026 and glibc, a small chase and
    a 1.5 s phased run whose drain (1.2 s) holds the 1 s checkpoint, under purge = free,
    retain = 0 only (the drain workload)."""
    cp = configparser.ConfigParser(inline_comment_prefixes=(";",), interpolation=None)
    cp.optionxform = str
    cp.read(SWEEP)
    cp["sweep"].update({"repetitions": "1", "busy_threshold": "64", "quiet_wait": "0",
                        "name": "hugepages-tiny"})
    cp.remove_section("allocators")
    cp.add_section("allocators")
    cp["allocators"].update({"hoard2026": "hoard2026", "glibc": "glibc"})
    cp["workload chase"]["scale"] = "0.02"
    for sec in [s for s in cp.sections() if s.startswith("workload drain")]:
        if sec in ("workload drain-own", "workload drain-nopurge"):     # time: 1.5 s a run
            cp.remove_section(sec)
            continue
        cp[sec].update({"scale": "0.15", "drain_frac": "0.8", "steady_frac": "0.1",
                        "spike_frac": "0.05"})
        keep = [a for a in SW.split_list(cp[sec]["allocators"]) if a in ("hoard2026", "glibc")]
        cp[sec]["allocators"] = ", ".join(keep)
    path = tmp_path / "hugepages-tiny.ini"
    with open(path, "w") as f:
        cp.write(f)
    return str(path)


@needs_built("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")
def test_a_tiny_real_run_writes_the_section(tmp_path):
    out = str(tmp_path / "out")
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    p = subprocess.run([sys.executable, TOOL, "sweep", "--no-build", tiny_sweep(tmp_path),
                        "--out", out, "--seed", "3"], capture_output=True, text=True,
                       env=env, timeout=240)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = tidy.read_csv(os.path.join(out, "runs.csv"))
    assert len(rows) == 4 + 4 and all(r["status"] == "ok" for r in rows), \
        [(r["variant"], r["workload_label"], r["error"]) for r in rows if r["status"] != "ok"]
    chase_rows = [r for r in rows if r["workload"] == "chase"]
    assert all(0 <= r["huge_coverage"] <= 1 for r in chase_rows)
    assert all(r[col("1s", "rss_kb")] for r in rows if r["workload"] == "phased")
    with open(os.path.join(out, "meta.json")) as f:
        thp = json.load(f)["machine"]["thp"]
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
    assert "## " + H.SECTION in text
    for v in H.VALUES:
        assert "| hoard2026 | %s |" % v in text
    assert "| glibc | – |" in text and os.path.exists(os.path.join(out, H.PLOT))
    assert ("transparent huge pages are `never`" in text) == (thp == "never")
    # the sweep's own tools/hoardlab report draws the same section again
    p = subprocess.run([sys.executable, TOOL, "report", out], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    with open(os.path.join(out, "report.md")) as f:
        assert f.read() == text
