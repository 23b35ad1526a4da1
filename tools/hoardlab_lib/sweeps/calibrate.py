"""Runs sized to the machine (`calibrate = yes` in [sweep]), as pyperf calibrates its loops:
before the timed runs, every timing group of a workload (each allocator and thread count,
census and memory workloads aside) runs once at a quarter of its scale; the fastest of them,
times four, estimates the workload's shortest run. Where that is under TARGET_S (the
report's 0.1 s floor with a margin) the workload's scale grows until it is not. A scale only
grows: a sweep's own choice stands where it is long enough.

A calibration holds for one sweep file on one machine and build: it is kept in the build
folder (calibration.json, keyed by host, CPU model and the sweep's text) and reused,
so only the first sweep on a machine pays for it (about 1 / (4 x repetitions) of its time)."""
import hashlib
import json
import math
import os
import platform

from .. import runkit, verdicts as V

FRACTION = 0.25             # the calibration runs' share of the planned scale
TARGET_S = 1.5 * V.SHORT_RUN_S
FILE = "calibration.json"


def nice_up(x):
    """x rounded up to two significant digits."""
    if x <= 0:
        return x
    step = 10 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / step - 1e-9) * step, 12)


def label_of(r):
    """The label a run is calibrated under: today's allocators' `today-<label>` copy of a
    workload shares <label>'s (verdicts.today), so both run at one scale, compared as equals."""
    wl = r["workload_label"]
    return wl[len(V.TODAY_PREFIX):] if wl.startswith(V.TODAY_PREFIX) else wl


def timing_groups(runs):
    """{calibration label: [one run of each (variant, threads)]} of the timing workloads:
    no census (libhoardlab's knob or the workload's outside census), no memory workload."""
    out = {}
    seen = set()
    for r in runs:
        if r.get("program") or V.truthy(r["knobs"].get("census", "")) or \
                V.truthy(r.get("params", {}).get("census", "")) or \
                r["workload"].startswith(V.TIMING_WORKLOADS_EXCLUDED):
            continue
        key = (r["variant"], r["workload_label"], r["threads"])
        if key not in seen:
            seen.add(key)
            group = out.setdefault(label_of(r), [r])
            if group[0]["scale"] != r["scale"]:   # a copy at a scale of its own
                group = out.setdefault(r["workload_label"], [r])
            if r is not group[0]:
                group.append(r)
    return out


def key_of(sw, bdir):
    """The machine (host, CPU model), the build folder and the sweep's text: not the commit,
    as a machine's speed does not change with it (a change that makes runs short again shows
    in the report's short-runs line, and a new sweep text calibrates anew)."""
    text = "\n".join([platform.node(), runkit.cpu_model() or "", os.path.realpath(bdir),
                      sw.text])
    return hashlib.sha1(text.encode()).hexdigest()


def measure(groups, bdir, hlbench, log):
    """{label: {planned, scale, shortest_s, by}} from one run of each group at FRACTION."""
    res = {}
    for label, rs in sorted(groups.items()):
        planned = rs[0]["scale"]
        best = None
        for r in rs:
            got = runkit.run_one(dict(r, scale=planned * FRACTION, timeout=r["timeout"]), bdir,
                                 hlbench)
            walls = [x.get("wall_s") for x in got["records"] if x.get("wall_s")]
            if got["status"] == "ok" and walls and (best is None or min(walls) < best[0]):
                best = (min(walls), "%s t=%d" % (r["variant"], r["threads"]))
        if best is None:
            continue
        est = best[0] / FRACTION
        scale = planned if est >= TARGET_S else nice_up(planned * TARGET_S / max(est, 1e-6))
        res[label] = {"planned": planned, "scale": scale, "shortest_s": round(est, 4),
                      "by": best[1]}
        if scale != planned:
            log("calibrate: %s scale %g -> %g (its shortest run, %s, would last %.3f s)"
                % (label, planned, scale, best[1], est))
    return res


def calibrate(sw, runs, bdir, hlbench, log):
    """meta.json's `calibration` ({key, reused, workloads}); the runs' scales set from it."""
    key = key_of(sw, bdir)
    path = os.path.join(bdir, FILE)
    try:
        with open(path) as f:
            kept = json.load(f)
    except (OSError, ValueError):
        kept = {}
    reused = key in kept
    if not reused:
        log("calibrate: one run of each timing group at %g of its scale" % FRACTION)
        kept[key] = measure(timing_groups(runs), bdir, hlbench, log)
        with open(path, "w") as f:
            json.dump(kept, f, indent=1)
    found = kept[key]
    for r in runs:
        got = found.get(label_of(r))
        if got and r["scale"] != got["planned"]:
            got = found.get(r["workload_label"])
        if got and r["scale"] == got["planned"]:
            r["scale"] = got["scale"]
    return {"key": key, "reused": reused, "target_s": TARGET_S, "fraction": FRACTION,
            "workloads": found}
