"""hlbench phased's `collect` (issue 49): each thread calls the allocator's explicit collect
right after its share of the drain. Under libhoardlab with a purge that keeps everything for a
minute, the checkpoint after the drain finds nothing parked unpurged with it and everything
parked without it (a drain of every block, so nothing parks after the last call); under
glibc the workload still runs, with glibc's malloc_trim; collect = 0 records nothing."""
import json
import os
import subprocess

from conftest import BDIR, needs_built

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
LIB = os.path.join(BDIR, "src", "libhoardlab.so")
KEEP = {"HOARD_STRATEGY": "hoard2026", "HOARD_PURGE": "free", "HOARD_PURGE_DELAY": "60000",
        "HOARD_RETAIN": "0"}


def phased(collect, env=None):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    if env:
        e.update(env, LD_PRELOAD=LIB)
    p = subprocess.run([HLBENCH, "phased", "--threads", "2", "--live", "500", "--seconds", "2",
                        "--drain", "1", "--checkpoints", "0.05", "--sample-interval", "0",
                        "--collect", str(collect)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=e)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])["extra"]


@needs_built("harness/hlbench", "src/libhoardlab.so")
def test_collect_after_the_drain_under_hoardlab():
    without, ex = phased(0, KEEP), phased(1, KEEP)
    assert "collect_call" not in without
    assert without["after_drain_50ms_parked_bytes"] > 0, without       # kept a minute
    assert without["after_drain_50ms_purged_bytes"] == 0, without
    assert ex["collect_call"] == "hoardlab_collect", ex
    assert ex["collect_s_max"] >= 0
    assert ex["after_drain_50ms_parked_bytes"] == 0, ex
    assert ex["after_drain_50ms_purged_bytes"] > 0, ex


@needs_built("harness/hlbench")
def test_collect_runs_under_another_allocator():
    ex = phased(1)
    assert ex["collect_call"] == "malloc_trim", ex                      # glibc's
    assert isinstance(ex["after_drain_50ms_rss_kb"], int)
