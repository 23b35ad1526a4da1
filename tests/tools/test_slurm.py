"""Sweeps through a real Slurm: the test starts a single-node Slurm on this machine (munged,
slurmctld and slurmd from Debian's packages, tools/packages/slurm.txt, every file in a folder
of its own and every port on 127.0.0.1: tests/tools/slurm/localslurm.py), submits a tiny
sweep with `--slurm --wait` and checks runs.csv against the plan run for run; then cancels
one task of a second sweep on purpose, and checks that `collect` names it and `collect
--resume` runs it (and only it). If the daemons cannot start, the test fails with their
logs: it never skips for want of Slurm."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import REPO, HERE

sys.path.insert(0, os.path.join(HERE, "slurm"))
import expect  # noqa: E402
import localslurm  # noqa: E402

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
SWEEP = os.path.join(HERE, "slurm", "tiny-slurm.ini")

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(BDIR, p)) for p in
            ("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")),
    reason="hlbench/hlconfig/libhoardlab.so not built in %s (run tools/hoardlab build)" % BDIR)


@pytest.fixture(scope="module")
def cluster():
    root = tempfile.mkdtemp(prefix="hlslurm-")     # short: munged's socket path has a limit
    c = localslurm.LocalSlurm(root)
    t0 = time.time()
    try:
        c.start()
    except Exception as e:
        c.stop()
        pytest.fail("the single-node Slurm did not start: %s" % e, pytrace=False)
    sys.stderr.write("single-node Slurm up in %.1f s (%s)\n" % (time.time() - t0, c.conf))
    yield c
    c.stop()
    shutil.rmtree(root, ignore_errors=True)


def tool(c, *args, timeout=180):
    """tools/hoardlab with the test cluster's SLURM_CONF, on the build under test."""
    if args[0] == "sweep":
        args = (args[0], "--no-build") + args[1:]
    env = dict(c.env, HOARDLAB_BUILD_DIR=BDIR)
    p = subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True,
                       env=env, timeout=timeout)
    return p


def client(c, *argv):
    p = subprocess.run(list(argv), capture_output=True, text=True, env=c.env, timeout=30)
    assert p.returncode == 0, "%s: %s\n%s" % (" ".join(argv), p.stderr, c.logs())
    return p.stdout


def jobs(outdir):
    with open(os.path.join(outdir, "slurm.json")) as f:
        return json.load(f)["submissions"]


def test_sweep_wait(cluster, tmp_path):
    out = str(tmp_path / "waited")
    p = tool(cluster, "sweep", SWEEP, "--slurm", "--nodes", "2", "--wait", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr + cluster.logs()
    assert p.stdout.splitlines()[-1] == os.path.join(out, "report.md")
    assert expect.mismatches(out) == []
    job = jobs(out)[0]["job"]
    for k in (0, 1):
        assert "task %d (job %s_%d): done, 2 of 2 runs on %s" % (
            k, job, k, localslurm.NODE) in p.stdout
        assert expect.status(out, k)["job"] == "%s_%d" % (job, k)
        assert os.path.exists(os.path.join(out, "slurm", "%s_%d.out" % (job, k)))
    rows = expect.rows(out)
    assert {r["node"] for r in rows} == {localslurm.NODE}
    assert all(r["cpu_model"] and "pu=" in r["topology"] for r in rows)
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    assert list(meta["nodes"]) == [localslurm.NODE] and meta["slurm"]["jobs"] == [job]
    assert meta["shuffle_seed"] == 11 and meta["interrupted"] is False
    with open(os.path.join(out, "report.md")) as f:
        assert "- Slurm: job %s, 2 tasks; nodes %s: one kind of node" % (
            job, localslurm.NODE) in f.read()


def test_a_cancelled_task_is_named_and_resumed(cluster, tmp_path):
    out = str(tmp_path / "resumed")
    # The partition down: the array waits in the queue until one of its tasks is cancelled.
    client(cluster, "scontrol", "update", "PartitionName=%s" % localslurm.PARTITION,
           "State=DOWN")
    try:
        p = tool(cluster, "sweep", SWEEP, "--slurm", "--nodes", "2", "--out", out)
        assert p.returncode == 0 and p.stdout.strip() == out, p.stderr + cluster.logs()
        job = jobs(out)[0]["job"]
        client(cluster, "scancel", "%s_1" % job)
    finally:
        client(cluster, "scontrol", "update", "PartitionName=%s" % localslurm.PARTITION,
               "State=UP")
    c = tool(cluster, "collect", out, "--wait")
    assert c.returncode == 1, c.stdout + c.stderr + cluster.logs()
    assert "task 0 (job %s_0): done, 2 of 2 runs" % job in c.stdout
    assert "task 1 (job %s_1): missing, 0 of 2 runs: never started" % job in c.stdout
    assert "1 task missing or failed (task 1)" in c.stdout and "--resume" in c.stdout
    assert len(expect.rows(out)) == 2
    with open(os.path.join(out, "report.md")) as f:
        assert "**interrupted**: 2 of 4 planned runs were done" in f.read()
    done0 = expect.part_lines(out, 0)

    r = tool(cluster, "collect", out, "--resume", "--wait")
    assert r.returncode == 0, r.stdout + r.stderr + cluster.logs()
    subs = jobs(out)
    assert [s["tasks"] for s in subs] == [[0, 1], [1]]     # only the missing task again
    again = subs[1]["job"]
    assert "task 1 (job %s_1): done, 2 of 2 runs" % again in r.stdout
    assert expect.part_lines(out, 0) == done0            # task 0 was not run again
    assert expect.mismatches(out) == []
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    assert meta["slurm"]["jobs"] == [job, again] and meta["interrupted"] is False
