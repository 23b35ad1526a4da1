"""Issue 49's measurements in hlbench phased (real runs): which blocks survive the drain
(`keep_every`: every k-th in allocation order, spread; `keep_first`: the first 1/k, together),
the threads idle through the drain, and `churn` (the threads that allocated are gone when the
checkpoints read what came back: mimalloc-pprof's churn measure); bad values refused with the
one-line error."""
import json
import math
import os
import subprocess

import pytest

from conftest import BDIR, needs_built

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
LIB = os.path.join(BDIR, "src", "libhoardlab.so")
SMALL = ["--min-size", "16", "--max-size", "512", "--large-p", "0"]


def phased(*args, env=None):
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    if env:
        e.update(env, LD_PRELOAD=LIB)
    p = subprocess.run([HLBENCH, "phased", "--threads", "2"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=e)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def kept_counts_hold(ex, k, threads=2):
    """ceil(n_i / k) of each thread's n_i blocks stayed: all threads together, between n / k
    and n / k + threads; the bytes kept about 1/k of the bytes (sizes drawn at random)."""
    n, kept = ex["drain_live_blocks"], ex["drain_kept_blocks"]
    assert n > 20 * k and math.ceil(n / k) <= kept <= n / k + threads, ex
    assert 0.5 < ex["drain_kept_bytes"] * k / ex["drain_live_bytes"] < 2, ex
    assert ex["drain_rss_kb"] > 0 and ex["drain_lazyfree_kb"] >= 0, ex   # before the frees
    # the harness's tables of live blocks resident before and after the drain (mincore)
    assert ex["drain_table_kb"] >= 4 * threads and 0 < ex["kept_table_kb"] < ex["drain_table_kb"]


@needs_built("harness/hlbench")
@pytest.mark.parametrize("param", ["keep-every", "keep-first"])
def test_one_block_in_k_survives_and_the_threads_idle(param):
    """1/32 of the live blocks stay; the threads idle through the drain (held until the last
    checkpoint by next_burst), so the live bytes at both checkpoints are exactly what was
    kept; the next burst runs after it."""
    ex = phased("--live", "2000", "--seconds", "0.3", "--checkpoints", "0.05,0.2",
                "--next-burst", "1", "--" + param, "32", *SMALL)["extra"]
    kept_counts_hold(ex, 32)
    for t in ("50ms", "200ms"):
        assert ex["after_drain_%s_live_bytes" % t] == ex["drain_kept_bytes"], ex
    assert [p["name"] for p in ex["phases"]] == ["steady", "spike", "drain", "burst", "steady"]
    assert ex["next_burst_ops_per_s"] > 0


@needs_built("harness/hlbench")
def test_random_drain_records_no_survivor_counts_and_keeps_working():
    """Without keep_*, the drain is `drain`'s coin as before, and the threads keep their
    light load in it: live bytes move between two checkpoints."""
    ex = phased("--live", "2000", "--seconds", "0.3", "--checkpoints", "0.05,0.2",
                "--next-burst", "1", *SMALL)["extra"]
    assert "drain_kept_blocks" not in ex and "churn_threads" not in ex
    assert ex["after_drain_50ms_live_bytes"] != ex["after_drain_200ms_live_bytes"], ex


@needs_built("harness/hlbench", "src/libhoardlab.so")
def test_spread_survivors_hold_more_superblocks_than_together():
    """Long lifetimes (the heap filled in allocation order, as a program that allocates and
    then drains), one size class: under hoard2026, every 32nd block kept leaves a survivor in
    several times as many superblocks as the first 1/32 kept (the same number of blocks;
    measured 120-151 against 22-24 superblocks in 0.6 s runs)."""
    sb = {}
    for param in ("keep-every", "keep-first"):
        ex = phased("--live", "1000000", "--seconds", "1", "--checkpoints", "0.05",
                    "--next-burst", "1", "--" + param, "32", "--min-size", "64",
                    "--max-size", "64", "--large-p", "0",
                    env={"HOARD_STRATEGY": "hoard2026"})["extra"]
        kept_counts_hold(ex, 32)
        sb[param] = ex["after_drain_50ms_sb_live"]
    assert sb["keep-every"] > 2 * sb["keep-first"], sb


@needs_built("harness/hlbench")
def test_churn_threads_exit_before_the_checkpoints():
    """churn = 3: three threads run each lane in turn (six created for two lanes), the last
    exits after its drain; the run lasts until the last checkpoint (after the planned
    `seconds`), the phases end with the drain, every checkpoint is read, and the survivors
    (every 20th, as mimalloc-pprof's) stay live after their threads are gone."""
    rec = phased("--live", "2000", "--seconds", "0.3", "--checkpoints", "0.05,0.5",
                 "--churn", "3", "--keep-every", "20", *SMALL)
    ex = rec["extra"]
    assert ex["churn_threads"] == 6, ex
    assert [p["name"] for p in ex["phases"]] == ["steady", "spike", "drain"]
    assert ex["phases"][-1]["end_s"] >= ex["drained_s"] + 0.5 and rec["wall_s"] > 0.5
    kept_counts_hold(ex, 20)
    for t in ("50ms", "500ms"):
        assert isinstance(ex["after_drain_%s_rss_kb" % t], int), ex
        assert ex["after_drain_%s_live_bytes" % t] == ex["drain_kept_bytes"], ex
    assert ex["next_burst_ops_per_s"] is None
    # without survivors kept: the random drain, the same shape
    ex = phased("--live", "2000", "--seconds", "0.3", "--checkpoints", "0.05", "--churn", "1",
                *SMALL)["extra"]
    assert ex["churn_threads"] == 2 and isinstance(ex["after_drain_50ms_rss_kb"], int), ex


@needs_built("harness/hlbench")
@pytest.mark.parametrize("bad", [["--keep-every", "-1"], ["--keep-first", "x"],
                                 ["--keep-every", "4", "--keep-first", "4"],
                                 ["--churn", "-2"], ["--churn", "2", "--next-burst", "1"]])
def test_bad_values_are_refused_in_one_line(bad):
    p = subprocess.run([HLBENCH, "phased", "--seconds", "0.1"] + bad, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    name = bad[0][2:].replace("-", "_")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert name in p.stderr, p.stderr


@needs_built("harness/hlbench", "src/libhoardlab.so")
def test_the_drain_takes_no_memory_from_the_allocator():
    """Sorting the live blocks into allocation order takes nothing from malloc (glibc's qsort
    took a buffer the size of the table, half the bytes of 64 B blocks, which an allocator may
    keep after the drain): libhoardlab's peak of bytes in use stays at the live bytes' peak."""
    rec = phased("--live", "1000000", "--seconds", "0.4", "--checkpoints", "0.05",
                 "--next-burst", "1", "--keep-every", "32", "--min-size", "64",
                 "--max-size", "64", "--large-p", "0", env={"HOARD_STRATEGY": "hoard2026"})
    live = max(p["live_bytes_peak"] for p in rec["extra"]["phases"])
    assert rec["hoardlab"]["in_use_peak"] < 1.1 * live, (rec["hoardlab"]["in_use_peak"], live)
