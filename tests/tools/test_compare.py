"""`hoardlab compare` on synthetic results folders whose answer is known: one clear speed-up,
one difference inside the noise, one group with too few runs (no build needed)."""
import csv
import os
import subprocess
import sys

from conftest import REPO
from hoardlab_lib import compare

COLS = ["status", "variant", "workload_label", "threads", "throughput", "wall_s"]
A = {("hoard", "threadtest", 1): [100, 101, 99, 100, 102],
     ("hoard", "shbench", 2): [100, 120, 80, 110, 90],
     ("hoard", "larson", 2): [50]}
B = {("hoard", "threadtest", 1): [130, 131, 129, 132, 128],      # 1.3x, no overlap: faster
     ("hoard", "shbench", 2): [105, 85, 115, 95, 100],           # the same noise: no difference
     ("hoard", "larson", 2): [70]}


def folder(path, groups, failed=()):
    os.makedirs(path)
    with open(os.path.join(path, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLS)
        for (variant, wl, t), vals in groups.items():
            for v in vals:
                w.writerow(["ok", variant, wl, t, v, 1000.0 / v])
        for variant, wl, t in failed:
            w.writerow(["failed", variant, wl, t, "", ""])
    return str(path)


def by_workload(res):
    return {r["workload"]: r for r in res}


def test_two_folders(tmp_path):
    a = folder(tmp_path / "a", A, failed=[("hoard", "threadtest", 1)])
    b = folder(tmp_path / "b", B)
    res = by_workload(compare.run(a, b)[1])
    tt, sh = res["threadtest"], res["shbench"]
    assert tt["verdict"] == "faster" and abs(tt["ratio"] - 1.30) < 0.01 and tt["low"] > 1
    assert tt["n_a"] == 5                              # the failed run is not a sample
    assert sh["verdict"] == "no significant difference" and sh["low"] < 1 < sh["high"]
    assert res["larson"]["verdict"] == "too few runs" and res["larson"]["ratio"] is None
    # the other way round: slower; and by wall time (lower is better) the same verdicts
    assert by_workload(compare.run(b, a)[1])["threadtest"]["verdict"] == "slower"
    wall = by_workload(compare.run(a, b, metric="wall_s")[1])
    assert wall["threadtest"]["verdict"] == "faster"
    assert wall["shbench"]["verdict"] == "no significant difference"


def test_two_allocators_of_one_folder_and_the_command(tmp_path):
    one = {("x",) + k[1:]: v for k, v in A.items()}
    one.update({("y",) + k[1:]: v for k, v in B.items()})
    d = folder(tmp_path / "one", one)
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "hoardlab"), "compare", d,
                        "--allocators", "x", "y"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.strip()}
    assert lines["threadtest"].endswith("faster") and "1.300" in lines["threadtest"]
    assert lines["shbench"].endswith("no significant difference")
    assert "percentile bootstrap" in p.stdout
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "hoardlab"), "compare", d,
                        "--allocators", "x", "z"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "no allocator 'z'" in p.stderr
