"""The node of every run (runs.csv's node, cpu_model, topology) and the report over several
kinds of node: one report per kind, under an index that says the sweep spans them."""
import os
import platform
import subprocess
import sys

import pytest

from conftest import REPO, HERE
from hoardlab_lib.runkit import nodes, tidy
from hoardlab_lib.sweeps import orchestrate

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
SWEEP = os.path.join(HERE, "slurm", "tiny-slurm.ini")      # 4 runs: hoard, glibc x 2


def test_topology_text_and_kinds():
    assert nodes.topology_text({"pu": 4, "core": 2, "package": 1, "lstopo": ["..."]}) == \
        "package=1 core=2 pu=4"
    rows = [{"index": i, "node": n, "cpu_model": c, "topology": "pu=2"}
            for i, (n, c) in enumerate([("a", "X"), ("b", "X"), ("c", "Y"), ("a", "X")])]
    ks = nodes.kinds(rows)
    assert [(k["label"], k["cpu_model"], k["nodes"], len(k["rows"])) for k in ks] == \
        [("kind-1", "X", ["a", "b"], 3), ("kind-2", "Y", ["c"], 1)]
    assert len(nodes.kinds([{"index": 0}, {"index": 1}])) == 1     # results from before


@pytest.mark.skipif(not os.path.exists(os.path.join(BDIR, "harness", "hlbench")),
                    reason="hlbench not built in %s" % BDIR)
def test_a_local_sweep_records_its_node_and_a_report_splits_by_kind(tmp_path):
    out = str(tmp_path / "local")
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    env.pop("SLURMD_NODENAME", None)
    p = subprocess.run([sys.executable, TOOL, "sweep", "--no-build", "-q", SWEEP, "--out", out],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = tidy.read_csv(os.path.join(out, "runs.csv"))
    assert {r["node"] for r in rows} == {platform.node()} and len(rows) == 4
    assert all(r["cpu_model"] and r["topology"].startswith("package=") for r in rows)
    with open(os.path.join(out, "report.md")) as f:
        assert "kinds of node" not in f.read()               # one kind: the report as ever
    # The same runs as if half had run on another CPU.
    other = [dict(r, index=r["index"] + 100, node="n2", cpu_model="Other CPU 9000")
             for r in rows]
    tidy.write_csv(os.path.join(out, "runs.csv"), rows + other,
                   tidy.columns_for(rows + other))
    path = orchestrate.make_report(out)
    with open(path) as f:
        index = f.read()
    assert "**2 kinds of node**" in index and "compared only within one kind" in index
    assert "Other CPU 9000" in index and "(kind-2/report.md)" in index
    k2 = tidy.read_csv(os.path.join(out, "kind-2", "runs.csv"))
    assert {r["cpu_model"] for r in k2} == {"Other CPU 9000"} and len(k2) == 4
    with open(os.path.join(out, "kind-2", "report.md")) as f:
        text = f.read()
    assert "- machine: Other CPU 9000" in text
    assert "- nodes n2: kind-2 of the 2 kinds of node this sweep ran on" in text
    assert orchestrate.make_report(out) == path                 # again: the kind folders anew
    assert sorted(f for f in os.listdir(out) if f.startswith("kind-")) == ["kind-1", "kind-2"]
