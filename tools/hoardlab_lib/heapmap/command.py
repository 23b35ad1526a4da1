"""`hoardlab heapmap`: run a workload with the heap log on, cap the log, draw the map and
export the trace."""
import os

from .. import allocators, common, plotkit, runkit
from ..common import ToolError
from .png import draw
from .trace import export_trace

HEAP_STRATEGIES = ("private", "ownership", "hoard", "hoard2026", "hoard202607")
# `hoardlab heapmap`'s defaults: phased (a program's phases: grow, shrink, grow again) at 4
# threads, scale 0.2: about 3 s and a 10 MB log on an idle machine (scale 1 took 2.5 minutes
# and wrote 463 MB beside another user's builds)
WORKLOAD, THREADS, SCALE = "phased", 4, 0.2
TIMEOUT = 600            # seconds for the run
LOG_CAP = 64 << 20       # bytes of the log read and kept; beyond, cut with a note


def cap_log(path, cap=LOG_CAP):
    """Cut the log at `path` to its first `cap` bytes (whole lines), so a long run's log
    neither fills the disk nor the memory of the map; returns a note, or None if it fit."""
    size = os.path.getsize(path)
    if size <= cap:
        return None
    with open(path, "rb+") as f:
        head = f.read(cap)
        f.seek(0)
        f.truncate(head.rfind(b"\n") + 1)
    return ("the log reached its cap of %d MiB (%.0f MiB written) and was cut there: the map "
            "shows the run's start; a larger --interval or a smaller --scale shows all of it"
            % (cap >> 20, size / 2 ** 20))


def run(bdir, allocator, workload, out_dir, threads=THREADS, params=None, interval=0,
        scale=SCALE, seed=42, timeout=TIMEOUT, extra=(), quiet=False):
    """Run hlbench WORKLOAD under allocator (a heap strategy, with knobs) with heap_log on;
    write out_dir/heapmap-ALLOCATOR-WORKLOAD-Nt.{log,png,json}. Returns (paths, facts).
    Says what it does as it goes (on stderr) unless quiet; the log kept at most LOG_CAP."""
    say = (lambda msg: None) if quiet else (lambda msg: common.log("heapmap: " + msg))
    base, knobs = allocators.parse_allocator_spec(allocator)
    only = ToolError("heapmap -a %s: the heap log is kept by the heap strategies only: %s"
                     % (allocator, ", ".join(HEAP_STRATEGIES)))
    if allocators.allocator_kind(base) != "hoardlab":
        raise only
    runkit.check_allocator(bdir, base, knobs, [n for n, _ in common.hlconfig_strategies(bdir)],
                    "heapmap -a %s" % allocator)
    if allocators.expected_strategy(base, knobs) not in HEAP_STRATEGIES:   # a row: its file's
        raise only
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, plotkit.fname("heapmap-%s-%s-%dt" % (allocator, workload,
                                                                      threads)))
    paths = {k: stem + "." + k for k in ("log", "png", "json")}
    knobs.update({"heap_log": os.path.abspath(paths["log"]),
                  "heap_log_interval": str(int(interval))})
    spec = {"index": 0, "allocator": base, "variant": allocator, "base": base,
            "kind": "hoardlab", "knobs": knobs, "swept": {}, "workload_label": workload,
            "workload": workload, "params": dict(params or {}), "threads": threads,
            "scale": scale, "seed": seed, "repetition": 0, "pin": False, "timeout": timeout,
            "extra_args": list(extra)}
    say("running %s under %s, %d threads, scale %g, the heap log on (stopped after %ds)"
        % (workload, allocator, threads, scale, timeout or 0))
    res = runkit.run_one(spec, bdir)
    if res["status"] != "ok":
        raise ToolError("heapmap: %s under %s: %s (%s)" % (workload, allocator, res["status"],
                                                          res["error"].strip()[-300:]))
    if not os.path.exists(paths["log"]):
        raise ToolError("heapmap: %s under %s wrote no heap log %s"
                        % (workload, allocator, paths["log"]))
    note = cap_log(paths["log"])
    if note:
        say(note)
    say("ran in %.1f s; drawing the map from a %.1f MiB log" % (
        res["elapsed_s"], os.path.getsize(paths["log"]) / 2 ** 20))
    name = "%s on %s, %d threads" % (allocator, workload, threads)
    f = draw(paths["log"], paths["png"], "Heap map: " + name)
    if f["dropped"]:
        note = "; ".join(x for x in (note, "the library's log buffer was full: %d lines "
                                     "dropped" % f["dropped"]) if x)
    f["note"] = note
    say("exporting the Chrome trace")
    export_trace(paths["log"], paths["json"], name)
    return paths, f
