"""The smoke run: a few seconds of a strategy, with a hard timeout, before its tests (`test
--strategy`) and its grade, so that a strategy that hangs or crashes is named in seconds
rather than found by 75 tests timing out one after another.

Two short hlbench runs under the strategy with `checks = on` (src/core/checks.c: a block
handed out twice, a double free, a foreign free each stop the program with one line): a
threaded malloc/free loop (threadtest) and frees by other threads (larson). What it saw is
one line: for a run that makes no progress before the timeout, "NAME appears to deadlock; a
lock not released?"; for a crash, the signal; for the checker's finding, its line."""
import os
import re

from . import runkit
from .common import require
from .allocators import allocator_env

TIMEOUT = 20.0           # seconds per run; each takes well under one on an idle machine
RUNS = [("threadtest", 2, 0.1, {}), ("larson", 2, 0.02, {})]
CHECKER = ("hoardlab handed out", "double free of", "which hoardlab never returned",
           "overlaps live block")


def spec(strategy, workload, threads, scale, params, timeout=TIMEOUT):
    return {"index": 0, "allocator": strategy, "variant": strategy, "base": strategy,
            "kind": "hoardlab", "knobs": {"checks": "on"}, "swept": {},
            "workload_label": workload, "workload": workload, "params": dict(params),
            "threads": threads, "scale": scale, "seed": 42, "repetition": 0, "pin": False,
            "timeout": timeout, "extra_args": []}


def command(bdir, run):
    """The run as a shell command a student can paste: HOARD_CHECKS=on first."""
    env = allocator_env(run["base"], run["knobs"], bdir, environ={})
    words = ["%s=%s" % (k, os.path.relpath(v) if k == "LD_PRELOAD" else v)
             for k, v in sorted(env.items(), key=lambda kv: kv[0] != "HOARD_CHECKS")]
    argv = runkit.hlbench_argv(os.path.relpath(require(bdir, "hlbench")), run)
    i = argv.index("--label")
    return " ".join(words + argv[:i] + argv[i + 2:])


def diagnosis(strategy, run, res):
    """One line on what a smoke run's result (runkit.run_one's) shows, or None when it ran."""
    what = "hlbench %s -t %d" % (run["workload"], run["threads"])
    if res["status"] == "ok":
        return None
    if res["status"] == "timeout":
        return ("%s appears to deadlock; a lock not released? (%s made no progress in %gs; "
                "it takes under a second)" % (strategy, what, run["timeout"]))
    lines = [re.sub(r"^(killed by SIG\w+: )?(hoardlab: )?", "", ln.strip())
             for ln in (res.get("error") or "").splitlines() if ln.strip()]
    found = next((ln for key in CHECKER for ln in lines if key in ln), None)
    sig = runkit.signal_name(res.get("exit_code"))
    if found:
        return "%s: %s (%s)" % (strategy, found, what)
    if sig:
        return "%s crashed: %s in %s" % (strategy, sig, what)
    return "%s failed: %s in %s" % (strategy, (lines[-1] if lines else res["status"]), what)


def run(bdir, strategy, runs=RUNS, timeout=TIMEOUT):
    """None when every smoke run ran, else {"kind": hang|crash|checker|failed, "line": the
    diagnosis, "command": the run to repeat by hand}. Stops at the first that did not."""
    for workload, threads, scale, params in runs:
        r = spec(strategy, workload, threads, scale, params, timeout)
        res = runkit.run_one(r, bdir)
        line = diagnosis(strategy, r, res)
        if line:
            kind = "hang" if res["status"] == "timeout" else \
                "checker" if any(k in line for k in CHECKER) else \
                "crash" if runkit.signal_name(res.get("exit_code")) else "failed"
            return {"kind": kind, "line": line, "command": command(bdir, r)}
    return None
