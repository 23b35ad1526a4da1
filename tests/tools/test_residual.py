"""`hoardlab residual` (tools/hoardlab_lib/residual.py, report/residual.py): the share of the
real allocator's advantage a composed row explains, its interval and verdict on synthetic
records (a gap inside the noise, a negative gap, a row that overshoots), the residual named
where the share is not decided at least half, the section and plot from a synthetic folder,
the command's argument errors, and one tiny real run (skipped when the build is missing)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from hoardlab_lib import attribute as A, residual as R, verdicts as V
from hoardlab_lib.runkit import tidy
from hoardlab_lib.common import ToolError
from hoardlab_lib.report import residual as RS

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")


def sp(*xs):
    return V.spread_of(xs)


# --- the numbers -----------------------------------------------------------------------------

def test_half_explained_decided_with_its_interval():
    h, r, a = sp(99, 100, 101), sp(179, 180, 181), sp(199, 200, 201)
    p = R.pair(h, r, a)
    assert p["gap"].med == 100 and p["explained"].med == 80 and p["residual"].med == 20
    assert p["share"].med == pytest.approx(0.8)
    # the ends: (179 - 101) / (201 - 101) and (181 - 99) / (199 - 99), the least and the
    # greatest over a grid of the whole box too
    assert p["share"].lo == pytest.approx(78 / 100)
    assert p["share"].hi == pytest.approx(82 / 100)
    grid = [(rr - hh) / (aa - hh) for rr in range(179, 182) for hh in range(99, 102)
            for aa in range(199, 202)]
    assert (min(grid), max(grid)) == pytest.approx((p["share"].lo, p["share"].hi))
    assert p["status"] == R.AT_LEAST_HALF and p["decided"] is True and not p["overshoot"]


def test_less_than_half_decided_and_threshold_inside_the_interval_is_within_noise():
    h, a = sp(99, 100, 101), sp(199, 200, 201)
    low = R.pair(h, sp(119, 120, 121), a)
    assert low["status"] == R.LESS_THAN_HALF and low["decided"] is False
    # explained 50 +- 20: the share's interval reaches 0.5
    mid = R.pair(h, sp(130, 150, 170), a)
    assert mid["share"].lo < 0.5 < mid["share"].hi
    assert mid["status"] == R.WITHIN and mid["decided"] is None


def test_a_gap_inside_the_noise_has_no_share():
    h, r, a = sp(95, 100, 110), sp(120, 121, 122), sp(98, 104, 112)
    p = R.pair(h, r, a)
    assert p["gap"].lo <= 0 <= p["gap"].hi
    assert p["share"] is None and p["status"] == R.NO_GAP and p["decided"] is None


def test_a_negative_gap_is_no_advantage_to_explain():
    h, r, a = sp(199, 200, 201), sp(149, 150, 151), sp(99, 100, 101)
    p = R.pair(h, r, a)
    assert p["gap"].hi < 0 and p["status"] == R.NO_ADVANTAGE and p["decided"] is None
    assert p["share"].med == pytest.approx(0.5)      # the row went half the way down


def test_a_row_that_overshoots():
    h, r, a = sp(99, 100, 101), sp(249, 250, 251), sp(199, 200, 201)
    p = R.pair(h, r, a)
    assert p["share"].lo > 1 and p["overshoot"] and p["status"] == R.AT_LEAST_HALF
    assert p["residual"].hi < 0


def test_one_repetition_decides_nothing_and_missing_is_not_measured():
    p = R.pair(sp(100), sp(180), sp(200))
    assert p["status"] == R.ONE_RUN and p["decided"] is None
    assert p["share"].med == pytest.approx(0.8) and p["share"].n == 1
    assert R.pair(None, sp(1, 2), sp(1, 2))["status"] == R.NOT_MEASURED


def test_the_residual_is_named_from_the_rows_account():
    for row, real in R.ROWS.items():
        assert R.LACKS[row], row
        for m, wls, src in R.LACKS[row]:
            assert m and src and set(wls) <= set(R.WORKLOADS), (row, m)
        # every workload has at least one named mechanism, so no residual goes unnamed
        for wl in R.WORKLOADS:
            assert R.named(row, wl), (row, wl)
        assert "configs/rows/%s.ini" % row in " ".join(s for _, _, s in R.LACKS[row])
        assert os.path.exists(os.path.join(REPO, "configs", "rows", row + ".ini"))
    fake = {"x-like": (("m1", ("larson",), "s1"), ("m2", ("spike",), "s2"))}
    assert R.named("x-like", "larson", fake) == [("m1", "s1")]
    assert R.named("x-like", "handoff", fake) == []


def test_target_needs_two_decided_workloads():
    per = {"a": {"status": R.AT_LEAST_HALF}, "b": {"status": R.WITHIN},
           "c": {"status": R.AT_LEAST_HALF}}
    assert R.target_met(per) == (["a", "c"], True)
    assert R.target_met({"a": per["a"], "b": per["b"]}) == (["a"], False)


def test_tlab_joins_cache_only_where_it_restates_it():
    diff = [("size_classes", "pow2x4"), ("tlab", "off"), ("cache", "none"), ("purge", "x")]
    assert R.alias_order(diff) == ["size_classes", "tlab+cache", "purge"]
    assert R.alias_order([("tlab", "off"), ("cache", "cpu")]) is None
    assert R.alias_order([("heap_select", "thread")]) is None


# --- the section and the plot from a synthetic folder ---------------------------------------

def synthetic_folder(tmp_path):
    """A residual folder for snmalloc-like with a one-element plan: runs.csv and
    residual.json, the row explaining 80% of larson and 20% of spike."""
    p = A.Plan(R.BASE, "snmalloc-like", [("heap_select", {"heap_select": "thread"})])
    vals = {"larson": {R.BASE: 100, "snmalloc-like": 180, "snmalloc": 200},
            "spike": {R.BASE: 100, "snmalloc-like": 120, "snmalloc": 200},
            "handoff": {R.BASE: 200, "snmalloc-like": 150, "snmalloc": 100},
            "migrating-objects": {R.BASE: 100, "snmalloc-like": 150, "snmalloc": 101}}
    rows, i = [], 0
    for wl, by in vals.items():
        metric = R.WORKLOADS[wl][3]
        for v, x in by.items():
            for f in (0.99, 1.0, 1.01):
                rows.append({"index": i, "record": 0, "variant": v, "workload_label": wl,
                             "workload": R.WORKLOADS[wl][0], "threads": 2, "status": "ok",
                             metric: x * f})
                i += 1
    out = tmp_path / "res"
    out.mkdir()
    with open(out / "residual.json", "w") as fh:
        json.dump({"base": R.BASE, "threshold": 0.5, "scale": 1,
                   "rows": {"snmalloc-like": {"real": "snmalloc", "plan": p.to_json()}},
                   "workloads": {w: {"workload": R.WORKLOADS[w][0],
                                     "metric": R.WORKLOADS[w][3], "what": "w"}
                                 for w in vals}}, fh)
    return str(out), rows


def test_section_tables_named_residual_and_plot(tmp_path):
    out, rows = synthetic_folder(tmp_path)
    lines = RS.residual_section(out, rows)
    text = "\n".join(lines)
    assert "## Residual: what the composed rows explain" in text
    assert "### snmalloc-like against snmalloc" in text
    assert "| larson | throughput |" in text and R.AT_LEAST_HALF in text
    assert "| spike | extra.spike_ops_per_s |" in text and R.LESS_THAN_HALF in text
    assert "| handoff | throughput |" in text and R.NO_ADVANTAGE in text
    assert "| migrating-objects | throughput |" in text and R.NO_GAP in text
    assert "**residual on spike**" in text and "**residual on larson**" not in text
    assert "**residual on handoff**" not in text
    assert "not met" in text                     # one workload decided, two needed
    assert "#### Attribution hoard2026 -> snmalloc-like" in text
    assert "| heap_select |" in text
    assert os.path.getsize(os.path.join(out, RS.PLOT)) > 1000
    assert "![share explained](%s)" % RS.PLOT in text
    assert RS.residual_section(str(tmp_path), rows) == []      # no residual.json: nothing


# --- the command -------------------------------------------------------------------------

def tool(*args, timeout=300):
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    return subprocess.run([sys.executable, TOOL, "residual", "--no-build"] + list(args),
                          capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("args,words", [
    (["--rows", "mimalloc-lik"], ["--rows", "mimalloc-lik", "mimalloc-like, snmalloc-like, "
                                  "tcmalloc-like"]),
    (["--workloads", "larson,xfree"], ["--workloads", "'xfree'", "handoff, larson, "
                                       "migrating-objects, spike"]),
    (["--rows", ","], ["--rows", "none named"]),
    (["--scale", "0"], ["--scale"]),
    (["--repetitions", "0"], ["--repetitions"]),
])
def test_argument_errors_are_one_line_naming_the_choices(args, words):
    p = tool(*args, timeout=60)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hoardlab: residual: "), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_choose_keeps_order_and_drops_repeats():
    assert R.choose("larson, spike,larson", list(R.WORKLOADS), "--workloads") == \
        ["larson", "spike"]
    assert R.choose(None, ["a", "b"], "--rows") == ["a", "b"]
    with pytest.raises(ToolError):
        R.choose("c", ["a", "b"], "--rows")


def test_sweep_text_runs_base_steps_row_and_real_allocator():
    p = A.Plan(R.BASE, "snmalloc-like", [("heap_select", {"heap_select": "thread"}),
                                        ("cache", {"cache": "thread"})])
    text = R.sweep_text({"snmalloc-like": p}, ["handoff", "spike"], 0.5, "P", 2, 60, "residual")
    assert "hoard2026 = hoard2026\n" in text
    assert "snmalloc-like.f1 = hoard2026, heap_select=thread" in text
    assert "snmalloc-like.r1 = hoard2026, cache=thread" in text
    assert "snmalloc-like = snmalloc-like" in text and "snmalloc = snmalloc" in text
    assert "[workload handoff]\nworkload = xfree\nscale = 0.5\nbatches = 500" in text
    assert "[workload spike]\nworkload = phased\nscale = 0.1" in text


BUILT = all(os.path.exists(os.path.join(BDIR, f)) for f in
            ("harness/hlbench", "src/hlconfig", "src/libhoardlab.so"))


@pytest.mark.skipif(not BUILT, reason="not built in %s" % BDIR)
def test_tiny_real_run(tmp_path):
    out = str(tmp_path / "res")
    p = tool("--rows", "snmalloc-like", "--workloads", "larson", "--scale", "0.01", "-r", "1",
             "-t", "2", "--out", out, "--seed", "5", "-q")
    assert p.returncode == 0, p.stderr[-2000:]
    for f in ("runs.csv", "report.md", "residual.ini", "residual.json", RS.PLOT):
        assert os.path.exists(os.path.join(out, f)), f
    with open(os.path.join(out, "report.md")) as fh:
        report = fh.read()
    assert "## Residual: what the composed rows explain" in report
    assert "### snmalloc-like against snmalloc" in report and "| larson |" in report
    assert R.ONE_RUN in report              # one repetition: nothing decided
    assert "snmalloc-like vs snmalloc: at least half explained (decided) on 0 of 1" in p.stdout
    assert "  larson " in p.stdout and p.stdout.rstrip().endswith("report.md")
    rows = tidy.read_csv(os.path.join(out, "runs.csv"))
    assert {"hoard2026", "snmalloc-like", "snmalloc"} <= {r["variant"] for r in rows}
