"""End to end, for real: build products of `meson setup && ninja` (HOARDLAB_BUILD_DIR, else
build/), a tiny sweep through tools/hoardlab, and the output folder checked. Skips only
when hlbench is not built; `tools/hoardlab test` always builds first."""
import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, HERE
from hoardlab_lib.runkit import tidy

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
HLBENCH = os.path.join(BDIR, "harness", "hlbench")
TOOL = os.path.join(REPO, "tools", "hoardlab")

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(BDIR, p)) for p in
            ("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")),
    reason="hlbench/hlconfig/libhoardlab.so not built in %s (run tools/hoardlab build)" % BDIR)


def tool(*args, **kw):
    """tools/hoardlab on the build under test, which `sweep` and `run` leave as it is
    (--no-build): test_build.py shows they build first, in a copy of the tree."""
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    if args[0] in ("sweep", "run", "cost"):
        args = (args[0], "--no-build") + args[1:]
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True,
                          env=env, timeout=kw.get("timeout", 120))


def strategies():
    out = subprocess.run([os.path.join(BDIR, "src", "hlconfig"), "--strategies"],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("e2e") / "tiny")
    p = tool("sweep", os.path.join(HERE, "tiny.ini"), "--out", out, "--seed", "5", timeout=300)
    assert p.returncode == 1, p.stderr[-2000:]     # must-fail failed: the report is written
    assert p.stdout.strip() == os.path.join(out, "report.md")
    assert "run 1" not in p.stderr and "[" in p.stderr      # the progress lines
    return out


def test_output_folder(sweep_dir):
    files = set(os.listdir(sweep_dir))
    assert {"runs.csv", "rounds.csv", "meta.json", "report.md", "records.jsonl",
            "tiny.ini", "cost.json"} <= files
    pngs = {f for f in files if f.endswith(".png")}
    assert "speedup-threadtest.png" in pngs and "memory.png" in pngs
    assert "relative-throughput-1thread.png" in pngs
    assert any(f.startswith("rounds-") for f in pngs)
    for f in pngs:
        with open(os.path.join(sweep_dir, f), "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_runs_csv(sweep_dir):
    n_alloc = len(strategies()) + 1
    # threadtest 2x2, census 1, blowup-prodcons 1, roundrobin 2, per allocator; + must-fail
    expected = n_alloc * (4 + 1 + 1 + 2) + 1
    with open(os.path.join(sweep_dir, "runs.csv")) as f:
        rd = csv.DictReader(f)
        cols = rd.fieldnames
        rows = list(rd)
    assert cols[:len(tidy.RUN_COLUMNS)] == tidy.RUN_COLUMNS
    assert {"hoardlab." + k for k in tidy.hoardlab_fields(BDIR)} <= set(cols)
    assert "knob.census" in cols and "params.size" in cols
    assert len(rows) == expected
    assert sorted(int(r["index"]) for r in rows) == list(range(expected))
    assert sorted(int(r["order"]) for r in rows) == list(range(expected))
    bad = [r for r in rows if r["status"] != "ok"]
    assert [(r["workload_label"], r["status"], r["exit_code"]) for r in bad] == \
        [("must-fail", "failed", "2")]
    assert "size" in bad[0]["error"]
    for r in rows:
        if r["status"] != "ok":
            continue
        assert float(r["throughput"]) > 0 and int(r["ops"]) > 0
        if r["alloc_kind"] == "hoardlab":
            assert r["reported_strategy"] == r["strategy"]
            assert int(r["hoardlab.os_bytes_peak"]) > 0
        else:
            assert r["hoardlab.mallocs"] == "" and r["preload"] == ""
    census = [r for r in rows if r["workload_label"] == "census-threadtest" and
              r["alloc_kind"] == "hoardlab"]
    assert census and all(r["knob.census"] == "on" and r["hoardlab.census_false_blocks"] != ""
                          for r in census)
    with open(os.path.join(sweep_dir, "rounds.csv")) as f:
        rounds = list(csv.DictReader(f))
    assert rounds and set(rounds[0]) == set(tidy.ROUND_COLUMNS)
    assert {r["workload"] for r in rounds} == {"blowup-prodcons", "blowup-roundrobin"}


def test_meta(sweep_dir):
    with open(os.path.join(sweep_dir, "meta.json")) as f:
        m = json.load(f)
    assert m["shuffle_seed"] == 5 and m["runs_done"] == m["runs_planned"]
    assert m["machine"]["cores"] >= 1 and m["machine"]["kernel"]
    assert m["machine"]["topology"].get("pu", 0) >= 1
    assert "[sweep]" in m["sweep"]["text"]
    assert isinstance(m["config_table"], list) and \
        {"name", "default", "env"} <= set(m["config_table"][0])
    assert all("text" in a["effective"] for a in m["allocators"] if a["base"] != "glibc")
    assert "version" in m["compiler"] and "commit" in m["git"]
    assert m["cost"]["file"] == "cost.json" and m["cost"]["allocators"] == strategies() + ["glibc"]


def test_report(sweep_dir):
    with open(os.path.join(sweep_dir, "report.md")) as f:
        rep = f.read()
    assert "## Taxonomy (Hoard Table 7)" in rep
    for s in strategies():
        assert "| %s |" % s in rep
    assert "### Rules" in rep and "## Failed runs" in rep and "must-fail" in rep
    assert "![speedup-threadtest.png](speedup-threadtest.png)" in rep
    assert "cores" in rep
    cost = rep.split("## Instructions per malloc+free pair (callgrind)", 1)[1]
    for a in strategies() + ["glibc"]:
        assert "| %s | " % a in cost.split("## Plots")[0]


def test_report_command_redraws(sweep_dir):
    os.remove(os.path.join(sweep_dir, "report.md"))
    os.remove(os.path.join(sweep_dir, "memory.png"))
    p = tool("report", sweep_dir, "--baseline", "glibc")
    assert p.returncode == 0, p.stderr
    assert os.path.exists(os.path.join(sweep_dir, "memory.png"))
    with open(os.path.join(sweep_dir, "report.md")) as f:
        rep = f.read()
    assert "relative to `glibc`" in rep and "## Instructions per malloc+free pair" in rep


def test_run_command():
    s = strategies()[-1]
    p = tool("run", "threadtest", "-a", s + ", census=on", "-t", "2", "--scale", "0.01",
             "--json")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[0])
    assert rec["strategy"] == s and rec["threads"] == 2
    p = tool("run", "threadtest", "-a", "glibc", "--scale", "0.01")
    assert p.returncode == 0 and "threadtest under glibc" in p.stdout


def test_bad_knob_is_surfaced():
    p = tool("run", "threadtest", "-a", strategies()[0], "-k", "no_such_knob=1",
             "--scale", "0.01")
    assert p.returncode == 2
    assert "no_such_knob" in p.stderr.lower()


def test_bad_knob_stops_a_sweep_before_running(tmp_path):
    ini = tmp_path / "bad.ini"
    ini.write_text("[sweep]\n[allocators]\nh = %s, census=maybe\n[workload threadtest]\n"
                   % strategies()[0])
    p = tool("sweep", str(ini), "--out", str(tmp_path / "o"))
    assert p.returncode == 2 and "census" in p.stderr.lower() and "maybe" in p.stderr
    assert not os.path.exists(tmp_path / "o" / "runs.csv")


def test_strategies_and_config():
    p = tool("strategies")
    assert p.returncode == 0 and strategies()[0] in p.stdout and "glibc" in p.stdout
    p = tool("config", "--list")
    assert p.returncode == 0 and "census" in p.stdout
    p = tool("config", "--effective", "-a", strategies()[0] + ", census=on")
    assert p.returncode == 0 and "census" in p.stdout
