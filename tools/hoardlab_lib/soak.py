"""`hoardlab soak`: the integrity stress (tests/reliability/stress.c, built as
<build>/tests/reliability/rel_stress) under every strategy, again and again with other knob
values, until the time is up.

Round 0 runs each strategy with its defaults; every later round gives each strategy a new
combination of the knobs in KNOBS that act under it (asked of the built hlconfig, so config.h's
`acts` column stays the only source), drawn from --seed. One run is the stress preloaded with
libhoardlab (`LD_PRELOAD`, `HOARD_STRATEGY`, `HOARD_<KNOB>`), its threads freeing a third of
the blocks remotely, every block stamped and verified. A run fails if it exits non-zero, is
killed, hangs (its duration plus HANG_S) or does not print its closing line; the summary gives
each failure's command line to repeat it, and the command exits 1 if there was one."""
import os
import random
import re
import shlex
import subprocess
import time

from . import runkit
from .common import ToolError, artifact, hlconfig_strategies, log, require

# The knobs a soak rotates: the design elements that change what a strategy does with blocks
# and memory (and the checks mode, which verifies every free). The first value is the default.
KNOBS = [
    ("remote_free", ["lock", "list", "queue"]),
    ("tlab", ["off", "on"]),
    ("global_shards", ["1", "8"]),
    ("large_reuse", ["follow", "unmap", "fixed"]),
    ("heap_select", ["hash", "thread", "cpu"]),
    ("free_list", ["lifo", "fifo"]),
    ("partial_list", ["fifo", "lifo"]),
    ("padding", ["off", "on"]),
    ("release_empty", ["off", "on"]),
    ("superblock_size", ["8K", "4K", "64K"]),
    ("lock", ["spin", "mutex"]),
    ("checks", ["off", "on"]),
]
HANG_S = 120           # beyond its duration, a run is declared hung and killed
CLOSING = re.compile(r"^ok: stress under (\S+): .*?(\d+) operations, (\d+) freed remotely, "
                     r"(\d+) bytes verified", re.M)


def acting(bdir, strategy):
    """The KNOBS that act under `strategy` (each alone, its second value: hlconfig --check)."""
    return [(k, vals) for k, vals in KNOBS
            if runkit.knob_problem(bdir, strategy, {k: vals[1]}) is None]


def plan_knobs(rng, knobs):
    return {k: rng.choice(vals) for k, vals in knobs}


def command(stress, lib, strategy, knobs, threads, seconds, seed):
    env = {"LD_PRELOAD": lib, "HOARD_STRATEGY": strategy}
    env.update(("HOARD_" + k.upper(), v) for k, v in knobs.items())
    argv = [stress, "--threads", str(threads), "--duration", "%.3g" % seconds, "--seed",
            str(seed)]
    return env, argv


def run_one(env, argv, seconds):
    """(ok, operations, bytes verified, error text) of one stress run."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith("HOARD_") and k != "RELIABILITY_DURATION"}
    full.update(env)
    try:
        p = subprocess.run(argv, env=full, capture_output=True, text=True, errors="replace",
                           timeout=seconds + HANG_S)
    except subprocess.TimeoutExpired:
        return False, 0, 0, "hung: no exit %d s after its duration" % HANG_S
    m = CLOSING.search(p.stdout)
    if p.returncode != 0 or not m:
        why = "exit %d" % p.returncode if p.returncode >= 0 else "killed by signal %d" % \
            -p.returncode
        tail = (p.stderr.strip() or p.stdout.strip()).splitlines()[-3:]
        return False, 0, 0, "%s%s" % (why, (": " + " | ".join(tail)) if tail else "")
    return True, int(m.group(2)), int(m.group(4)), ""


def soak(bdir, seconds, threads=4, run_seconds=10.0, seed=None, stress=None, out=print):
    """Run the soak; returns the number of failed runs."""
    lib = require(bdir, "lib")
    stress = stress or os.path.join(bdir, "tests", "reliability", "rel_stress")
    if not os.path.exists(stress):
        raise ToolError("%s not found: build it (ninja -C %s tests/reliability/rel_stress)"
                        % (stress, bdir))
    strategies = [n for n, _ in hlconfig_strategies(bdir)]
    knobs = {s: acting(bdir, s) for s in strategies}
    seed = random.SystemRandom().randrange(1 << 31) if seed is None else seed
    rng = random.Random(seed)
    per_run = min(run_seconds, max(0.5, seconds / len(strategies)))
    log("soak: %d strategies, %.0f s, runs of up to %.3g s with %d threads, seed %d (stress: %s)"
        % (len(strategies), seconds, per_run, threads, seed, stress))
    totals = {s: {"runs": 0, "ops": 0, "bytes": 0, "failures": 0} for s in strategies}
    failures = []
    t0 = time.time()
    deadline = t0 + seconds
    rnd = 0
    while rnd == 0 or time.time() + 0.5 < deadline:
        for s in strategies:
            left = deadline - time.time()
            if rnd and left < 0.5:
                break
            dur = per_run if rnd == 0 else min(per_run, left)
            kn = {} if rnd == 0 else plan_knobs(rng, knobs[s])
            env, argv = command(stress, lib, s, kn, threads, dur, rng.randrange(1 << 31))
            ok, ops, nbytes, err = run_one(env, argv, dur)
            t = totals[s]
            t["runs"] += 1
            t["ops"] += ops
            t["bytes"] += nbytes
            log("soak: %-10s %-60s %s" % (s, " ".join("%s=%s" % kv for kv in kn.items())
                                          or "(defaults)", "%d operations" % ops if ok
                                          else "FAILED"))
            if not ok:
                t["failures"] += 1
                line = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items()) + " " + \
                    " ".join(shlex.quote(a) for a in argv)
                failures.append((s, err, line))
                log("soak: FAILED under %s: %s\n  repeat: %s" % (s, err, line))
        rnd += 1
    took = time.time() - t0
    out("soak: %.1f minutes (%.0f s), %d rounds, seed %d" % (took / 60, took, rnd, seed))
    out("%-12s %6s %14s %18s %9s" % ("strategy", "runs", "operations", "bytes verified",
                                     "failures"))
    for s in strategies:
        t = totals[s]
        out("%-12s %6d %14d %18d %9d" % (s, t["runs"], t["ops"], t["bytes"], t["failures"]))
    out("%-12s %6d %14d %18d %9d" % ("total", sum(t["runs"] for t in totals.values()),
                                     sum(t["ops"] for t in totals.values()),
                                     sum(t["bytes"] for t in totals.values()), len(failures)))
    for s, err, line in failures:
        out("FAILED %s: %s\n  repeat: %s" % (s, err, line))
    return len(failures)


# What a soak runs: built (incrementally) first, as `run` builds what it measures.
TARGETS = ("src/libhoardlab.so", "src/hlconfig", "tests/reliability/rel_stress")


def main(a, bdir):
    seconds = a.seconds if a.seconds is not None else a.minutes * 60.0
    if seconds <= 0 or a.threads < 1 or a.run_seconds <= 0:
        raise ToolError("soak: --minutes, --seconds, --threads and --run-seconds must be "
                        "positive")
    return 1 if soak(bdir, seconds, a.threads, a.run_seconds, a.seed, a.stress) else 0
