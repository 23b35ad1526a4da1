"""A sweep's folder for Slurm without Slurm: the plan and the job script, a task run by hand
(`slurm-task DIR K`, as the job script runs it), the build check, a task resumed after it was
killed, collect, and the error without sbatch. The real Slurm is tests/tools/test_slurm.py."""
import argparse
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, HERE
from hoardlab_lib.runkit import tidy
from hoardlab_lib.slurm import plan as slurm
from hoardlab_lib.common import ToolError

sys.path.insert(0, os.path.join(HERE, "slurm"))
import expect  # noqa: E402

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
SWEEP = os.path.join(HERE, "slurm", "tiny-slurm.ini")
built = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(BDIR, p)) for p in
            ("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")),
    reason="hlbench/hlconfig/libhoardlab.so not built in %s (run tools/hoardlab build)" % BDIR)


def tool(*args, env=None):
    e = dict(os.environ if env is None else env, HOARDLAB_BUILD_DIR=BDIR)
    for k in [k for k in e if k.startswith("SLURM")]:
        del e[k]                    # a task by hand: not inside a Slurm job
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True,
                          env=e, timeout=120)


def folder(tmp_path, ntasks):
    """The folder `sweep --slurm` writes before it submits: P given, no sinfo."""
    out = str(tmp_path / "sweep")
    plan, sw, _ = slurm.make_plan(SWEEP, BDIR, ntasks=ntasks, ncores=2)
    slurm.prepare(out, plan, sw, BDIR)
    return out


def test_array_spec():
    assert slurm.array_spec([0, 1, 2, 3]) == "0-3"
    assert slurm.array_spec([7, 1, 3, 2, 9, 10]) == "1-3,7,9-10"
    assert slurm.array_spec([4]) == "4"


def test_no_sbatch(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match="sbatch not found.*slurm-client"):
        slurm.command("sbatch")
    p = tool("sweep", SWEEP, "--slurm", "--no-build", env={"PATH": str(tmp_path)})
    assert p.returncode == 2 and "sbatch not found" in p.stderr, p.stderr


def test_slurm_options_need_slurm():
    p = tool("sweep", SWEEP, "--wait", "--no-build")
    assert p.returncode == 2 and "go with --slurm" in p.stderr


@built
def test_dry_run_is_the_local_plan_and_prints_the_job_script():
    local = tool("sweep", SWEEP, "--dry-run", "--no-build")
    dist = tool("sweep", SWEEP, "--dry-run", "--no-build", "--slurm", "--nodes", "2",
                "--partition", "big", "--time", "0:10:00")
    assert local.returncode == 0 and dist.returncode == 0, dist.stderr

    def runs(text):
        return [ln.split()[-6:] for ln in text.splitlines() if ln[:4].strip().isdigit()]
    assert runs(local.stdout) == runs(dist.stdout) and len(runs(local.stdout)) == 4
    assert "shuffle seed 11" in dist.stdout
    for line in ("#SBATCH --array=0-1", "#SBATCH --exclusive", "#SBATCH --nodes=1",
                 "#SBATCH --partition=big", "#SBATCH --time=0:10:00", "slurm-task"):
        assert line in dist.stdout, line


@built
def test_plan_and_folder(tmp_path):
    out = folder(tmp_path, 3)
    plan = expect.plan(out)
    assert plan["seed"] == 11 and len(plan["runs"]) == 4
    assert [o for shard in plan["shards"] for o in shard] == [0, 1, 2, 3]
    assert len(plan["shards"]) == 3
    assert set(plan["build"]["sha256"]) == {"src/libhoardlab.so", "harness/hlbench"}
    with open(os.path.join(out, "job.sh")) as f:
        script = f.read()
    assert "#SBATCH --array=0-2" in script and os.access(os.path.join(out, "job.sh"), os.X_OK)
    assert os.path.exists(os.path.join(out, "tiny-slurm.ini"))
    with pytest.raises(ToolError, match="already holds a sweep"):
        slurm.prepare(out, plan, argparse.Namespace(path=SWEEP, text="", cost=False), BDIR)


@built
def test_a_mismatched_build_fails_the_task(tmp_path):
    out = folder(tmp_path, 1)
    path = os.path.join(out, "plan.json")
    plan = expect.plan(out)
    good = plan["build"]["sha256"]["harness/hlbench"]
    plan["build"]["sha256"]["harness/hlbench"] = "0" * 64
    with open(path, "w") as f:
        json.dump(plan, f)
    p = tool("slurm-task", out, "0")
    assert p.returncode == 3, p.stderr
    assert "not the sweep's build" in p.stderr and "harness/hlbench has sha256" in p.stderr
    assert "never mixes builds" in p.stderr
    assert expect.status(out, 0)["state"] == "build-mismatch"
    assert expect.part_lines(out, 0) == []              # nothing ran
    c = tool("collect", out)
    assert c.returncode == 1
    assert "task 0 (job not submitted): failed, 0 of 4 runs: task 0 on" in c.stdout
    assert "not the sweep's build" in c.stdout
    plan["build"]["sha256"]["harness/hlbench"] = good
    with open(path, "w") as f:
        json.dump(plan, f)
    assert tool("slurm-task", out, "0").returncode == 0
    assert tool("collect", out).returncode == 0 and expect.mismatches(out) == []


@built
def test_a_killed_task_resumes_with_the_runs_it_had_not_done(tmp_path):
    out = folder(tmp_path, 1)
    p = tool("slurm-task", out, "0")
    assert p.returncode == 0, p.stderr
    lines = expect.part_lines(out, 0)
    assert len(lines) == 4
    # as if killed (SIGKILL) while writing its third run: two whole lines and a torn one
    with open(os.path.join(out, "parts", "task-0.jsonl"), "w") as f:
        f.write("\n".join(lines[:2]) + "\n" + lines[2][:40])
    st = expect.status(out, 0)
    st.update(state="running", finished_at=None)
    with open(os.path.join(out, "parts", "task-0.json"), "w") as f:
        json.dump(st, f)
    c = tool("collect", out)
    assert c.returncode == 1
    assert "task 0 (job not submitted): missing, 2 of 4 runs" in c.stdout
    assert "ended without a word after 2 of 4 runs" in c.stdout
    assert len(expect.rows(out)) == 2                   # what there is, merged
    p = tool("slurm-task", out, "0")
    assert p.returncode == 0, p.stderr
    assert "2 runs (2 done by an earlier attempt)" in p.stderr
    assert expect.part_lines(out, 0)[:2] == lines[:2]   # the first two were not run again
    st = expect.status(out, 0)
    assert st["attempt"] == 2 and st["state"] == "done" and len(st["attempts"]) == 1
    c = tool("collect", out)
    assert c.returncode == 0, c.stdout + c.stderr
    assert "task 0 (job not submitted): done, 4 of 4 runs" in c.stdout
    assert expect.mismatches(out) == []
    meta = json.load(open(os.path.join(out, "meta.json")))
    assert meta["interrupted"] is False and meta["runs_done"] == 4
    assert meta["machine"]["cpu_model"] == expect.rows(out)[0]["cpu_model"]
    # every run's memory over time reached series.csv through the parts, in the run's order
    series = tidy.read_series(out)
    assert {x["index"] for x in series} == {int(r["index"]) for r in expect.rows(out)}
    assert all(a["t_s"] <= b["t_s"] for a, b in zip(series, series[1:])
               if a["index"] == b["index"])
