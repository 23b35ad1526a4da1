"""`hoardlab compare` on synthetic results folders whose answer is known: one clear speed-up,
one difference inside the noise, one group with too few runs (no build needed)."""
import csv
import json
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


def write_folder(path, rows, meta=None):
    """A results folder of `rows` (dicts; the columns are their keys) and meta.json."""
    os.makedirs(path)
    cols = sorted({k for r in rows for k in r})
    with open(os.path.join(path, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    if meta is not None:
        with open(os.path.join(path, "meta.json"), "w") as f:
            json.dump(meta, f)
    return str(path)


def meta_of(commit, load, cpu="Xeon"):
    return {"git": {"commit": commit, "dirty": False},
            "machine": {"cpu_model": cpu, "cores": 2, "loadavg_start": [load, 0, 0],
                        "loadavg_end": [load, 0, 0]}}


def test_folders_of_another_commit_or_load_are_warned_about_first(tmp_path):
    rows = [{"status": "ok", "variant": "hoard", "workload_label": "threadtest", "threads": 1,
             "throughput": 100 + i} for i in range(3)]
    a = write_folder(tmp_path / "a", rows, meta_of("a" * 40, 2.3))
    b = write_folder(tmp_path / "b", rows, meta_of("b" * 40, 7.6))
    text = compare.run(a, b)[0].splitlines()
    assert text[0].startswith("WARNING: the two folders differ in commit, load")
    assert any("load average A 2.3, B 7.6" in ln for ln in text[1:4])
    same = write_folder(tmp_path / "c", rows, meta_of("a" * 40, 2.5))
    assert not compare.run(a, same)[0].startswith("WARNING")
    other = write_folder(tmp_path / "d", rows, meta_of("a" * 40, 2.3, cpu="EPYC"))
    assert "machine: cpu_model A Xeon, B EPYC" in compare.run(a, other)[0]


def test_a_knob_that_did_not_act_is_said_so(tmp_path):
    rows = []
    for knob, thr in (("list", 124), ("lock", 100)):
        for t, remote in ((1, 21), (2, 50000)):
            for i in range(5):
                rows.append({"status": "ok", "variant": "hoard[remote_free=%s]" % knob,
                             "knobs": "remote_free=%s" % knob, "workload_label": "prodcons",
                             "threads": t, "throughput": thr + i, "hoardlab.mallocs": 400000,
                             "hoardlab.remote_frees": remote if i else 0})
    d = write_folder(tmp_path / "k", rows)
    res = {r["threads"]: r for r in compare.run(d, allocators=["hoard[remote_free=lock]",
                                                              "hoard[remote_free=list]"])[1]}
    assert res[1]["verdict"].startswith("did not act (remote_free: ")
    assert res[1]["ratio"] > 1.2                   # the ratio stays, the verdict does not
    assert res[2]["verdict"] == "faster"           # 50000 remote frees: the knob acted


def test_the_sweeps_busy_and_noise_warnings_are_repeated(tmp_path):
    """A "no significant difference" from a sweep whose own report warns that the machine was
    busy carries that warning here too, in the report head's words (report/header.py)."""
    from hoardlab_lib.report import header
    rows = [{"status": "ok", "variant": v, "workload_label": "shbench", "threads": 2,
             "throughput": x, "load.busy": int(i == 0), "load.during_cpus": 1.2 if i == 0
             else 0.1} for v, xs in (("x", (60, 100, 130)), ("y", (70, 105, 125)))
            for i, x in enumerate(xs)]
    meta = {"machine": {"cores": 2, "loadavg_start": [3.1, 0, 0], "loadavg_end": [2.0, 0, 0]},
            "load": {"busy_cpus": 0.5, "redone": [], "redo_share": 0.1}}
    d = write_folder(tmp_path / "busy", rows, meta)
    text, res = compare.run(d, allocators=["x", "y"])
    assert res[0]["verdict"] == "no significant difference"
    said = header.busy_lines(meta, compare.load(d)) + header.machine_warnings(meta,
                                                                             compare.load(d))
    assert len([ln for ln in said if ln]) == 2
    assert "**busy machine**: 2 of 6 runs" in said[0]
    assert "Warning: the machine was busy or noisy" in said[1]
    for ln in said:
        assert ln in text.splitlines(), ln
    assert text.index("busy or noisy") < text.index("no significant difference")
    # two folders: each one's own warnings, named A and B; a quiet folder says nothing
    quiet = write_folder(tmp_path / "quiet", [dict(r, throughput=100 + i, **{"load.busy": 0})
                                              for i, r in enumerate(rows)],
                         {"machine": {"cores": 2}, "load": {"busy_cpus": 0.5}})
    text = compare.run(quiet, d)[0]
    assert "B (%s), from its report:" % d in text and "A (" not in text
    assert "busy or noisy" not in compare.run(quiet, quiet)[0]
