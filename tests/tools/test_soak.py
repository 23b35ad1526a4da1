"""`hoardlab soak` (issue 29): a few seconds of the real stress under every strategy count
operations and bytes verified with no failure; a planted stress program that fails under one
strategy and prints no closing line under another makes it exit 1, naming both and the
command lines that repeat them. Skips only when the library or the stress is not built."""
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(BDIR, p)) for p in
            ("src/hlconfig", "src/libhoardlab.so", "tests/reliability/rel_stress")),
    reason="libhoardlab.so/hlconfig/rel_stress not built in %s (run tools/hoardlab build)"
    % BDIR)


def soak(*args):
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    return subprocess.run([sys.executable, TOOL, "soak", "--no-build"] + list(args),
                          capture_output=True, text=True, env=env, timeout=600)


def strategies():
    out = subprocess.run([os.path.join(BDIR, "src", "hlconfig"), "--strategies"],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines() if line.strip()]


def table(stdout):
    """{strategy: (runs, operations, bytes verified, failures)} from the summary."""
    rows = {}
    for line in stdout.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", line)
        if m:
            rows[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return rows


def test_soak_counts_every_strategy():
    p = soak("--seconds", "4", "--run-seconds", "0.3", "--threads", "2", "--seed", "7")
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    rows = table(p.stdout)
    assert set(strategies()) | {"total"} == set(rows)
    for s in strategies():
        runs, ops, nbytes, fails = rows[s]
        assert runs >= 1 and ops > 0 and nbytes > 0 and fails == 0, (s, rows[s])
    assert rows["total"][1] == sum(rows[s][1] for s in strategies())
    assert "seed 7" in p.stdout


def test_soak_fails_on_a_planted_failure(tmp_path):
    fake = tmp_path / "fake_stress"
    fake.write_text(
        "#!/bin/sh\n"
        "case $HOARD_STRATEGY in\n"
        "  hoard) echo 'FAIL: planted damage at byte 3' >&2; exit 1;;\n"
        "  serial) exit 0;;              # no closing line: not a success\n"
        "esac\n"
        "echo \"ok: stress under $HOARD_STRATEGY: 2 threads, 0.3 s, 1000 operations, "
        "10 freed remotely, 5000 bytes verified\"\n")
    fake.chmod(0o755)
    p = soak("--seconds", "1", "--run-seconds", "0.2", "--stress", str(fake))
    assert p.returncode == 1, p.stdout + p.stderr
    rows = table(p.stdout)
    want = {"hoard", "serial"} & set(strategies())
    for s in strategies():
        assert (rows[s][3] > 0) == (s in want), (s, rows[s])
        if s not in want:
            assert rows[s][1] == 1000 * rows[s][0] and rows[s][2] == 5000 * rows[s][0]
    if "hoard" in want:
        assert "FAILED hoard: exit 1: FAIL: planted damage at byte 3" in p.stdout
        assert re.search(r"repeat: LD_PRELOAD=\S+libhoardlab.so HOARD_STRATEGY=hoard .*"
                         + re.escape(str(fake)) + " --threads 4", p.stdout)
    if "serial" in want:
        assert "FAILED serial: exit 0" in p.stdout
