"""`hoardlab cost` and a sweep's `cost = yes`: callgrind on the real build, the report section
from cost.json, and the start-up check. Structure and consistency only: no instruction
count is asserted, since the core changes and the numbers with it. valgrind is installed by
tools/install-deps, so a missing valgrind fails these tests; a missing build skips them as
in test_e2e.py."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import cost, report

CASES = [cost.case_name(s, m) for s, m in cost.CASES]
PARTS = ("front", "counting", "strategy", "caller")

needs_build = needs_built("harness/hlcost", "harness/hlbench", "src/hlconfig",
                          "src/libhoardlab.so")


def need_valgrind():
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        pytest.fail("valgrind not found: run tools/install-deps (Debian package valgrind)")


def strategy():
    names = [n for n, _ in cost.common.hlconfig_strategies(BDIR)]
    return "hoard" if "hoard" in names else names[0]


@needs_build
def test_run_one_strategy_and_glibc():
    need_valgrind()
    s = strategy()
    results = cost.run(BDIR, [s, "glibc"])
    assert sorted((r["allocator"], r["case"]) for r in results) == \
        sorted((a, c) for a in (s, "glibc") for c in CASES)
    for r in results:
        assert r["pair"] > 0 and r["pairs"] == cost.PAIRS and r["functions"], r["case"]
        if r["allocator"] == s and r["case"] == CASES[0]:
            assert all(r[p] >= 0 for p in PARTS)
            assert abs(sum(r[p] for p in PARTS) - r["pair"]) <= 1, r
            # counting = off installs fast paths that count nothing: the pair is cheaper
            assert 0 < r["uncounted"] < r["pair"] and r["counting"] > 0, r
        else:                                   # the split: hoardlab strategies, first case
            assert not any(p in r for p in PARTS)
    tab = cost.table(results)
    assert "| %s |" % s in tab and "| glibc |" in tab and "core share" in tab


@needs_build
def test_sweep_without_valgrind_stops_before_running(tmp_path):
    """cost = yes and no valgrind on PATH: one line, exit 2, no results folder."""
    ini = tmp_path / "c.ini"
    ini.write_text("[sweep]\nstrategies = %s\ncost = yes\nscale = 0.01\n"
                   "[workload threadtest]\n" % strategy())
    empty = tmp_path / "bin"
    empty.mkdir()
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "hoardlab"), "sweep",
                        str(ini), "--out", str(tmp_path / "o"), "--no-build"], capture_output=True,
                       text=True, env=dict(os.environ, PATH=str(empty),
                                           HOARDLAB_BUILD_DIR=BDIR), timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "hoardlab: %s: cost = yes needs valgrind (Debian package valgrind; run "
        "tools/install-deps)" % ini]
    assert not os.path.exists(tmp_path / "o")


def results_json():
    """A small hand-written cost.json: one strategy (split) and one production allocator."""
    res = []
    for (size, mode), case in zip(cost.CASES, CASES):
        res.append({"allocator": "hoard", "case": case, "size": int(size), "mode": mode,
                    "pairs": 1000, "pair": 100.0, "front": 20.0, "counting": 5.0,
                    "uncounted": 95.0, "strategy": 70.0, "caller": 5.0,
                    "functions": {"front.h:hl_malloc": 20.0}})
        res.append({"allocator": "glibc", "case": case, "size": int(size), "mode": mode,
                    "pairs": 1000, "pair": 50.0, "functions": {"malloc.c:malloc": 45.0}})
    return res


def test_report_section_from_cost_json(tmp_path):
    out = str(tmp_path)
    path, _ = report.write(out, [], [], {}, [], [])
    assert "Instructions per malloc+free pair" not in open(path).read()
    with open(os.path.join(out, "cost.json"), "w") as f:
        json.dump(results_json(), f)
    path, _ = report.write(out, [], [], {}, [], [])
    rep = open(path).read()
    sec = rep.split("## Instructions per malloc+free pair (callgrind)\n", 1)[1].split("\n## ")[0]
    assert "| allocator | " + " | ".join(CASES) + " |" in sec
    assert "| hoard | 100 | 100 | 100 | 100 |" in sec and "| glibc | 50 | 50 | 50 | 50 |" in sec
    assert "| hoard | 100 | 95 | 20.0 | 5.0 | 25.0 | 70.0 | 5.0 |" in sec    # core share = 25
    assert "| glibc | 50 | 20" not in sec
    assert "callgrind" in sec and "slope" in sec and "deterministic" in sec
    assert "`tools/hoardlab cost -a hoard,glibc --pairs 1000`" in sec
    assert rep.index("## Instructions per") < rep.index("## Plots")


def test_report_says_why_cost_is_missing(tmp_path):
    meta = {"cost": {"error": "callgrind failed (exit 1)"}}
    path, _ = report.write(str(tmp_path), [], [], meta, [], [])
    assert "Not measured: callgrind failed (exit 1)" in open(path).read()


def test_parse_variant():
    assert cost.parse_variant("hoard") == ("hoard", {})
    assert cost.parse_variant("hoard:remote_free=list:tlab=on") == (
        "hoard", {"remote_free": "list", "tlab": "on"})
    with pytest.raises(cost.ToolError):
        cost.parse_variant("hoard:remote_free")


@needs_build
def test_variant_knob_reaches_the_strategy():
    """A variant's knobs are set for its run: a bad value must fail, not measure defaults."""
    need_valgrind()
    s = strategy()
    with pytest.raises(cost.ToolError, match="remote_free"):
        cost.measure(BDIR, s + ":remote_free=bogus", "8", "local", 1000, "/tmp")


@needs_build
def test_a_composed_row_is_measured_under_its_file():
    """`cost -a fastest` runs the row's configuration file (HOARD_CONFIG), knobs on top: its
    tlab_prefetch = on shows as the TLAB's prefetching malloc among the functions counted,
    and the knob given on top takes it away. A misspelt row is named with the rows."""
    need_valgrind()
    names, split_ones = cost.allocators(BDIR, ["fastest", "fastest:tlab_prefetch=off"])
    assert names == ["fastest", "fastest:tlab_prefetch=off"] and split_ones[-2:] == names

    def functions(allocator):
        return cost.measure(BDIR, allocator, "8", "local", 1000, "/tmp")["functions"]
    assert any(f.endswith(":tlab_malloc_prefetch_entry") for f in functions("fastest"))
    assert not any("prefetch" in f for f in functions("fastest:tlab_prefetch=off"))
    with pytest.raises(cost.ToolError, match="composed rows: .*fastest"):
        cost.allocators(BDIR, ["fastst"])
