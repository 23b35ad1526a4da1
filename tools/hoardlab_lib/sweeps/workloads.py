"""The workloads a sweep file names and its runs: each [workload LABEL] section (a [program
LABEL] is programs/spec.py's), every run they make under each variant, thread count and
repetition, and the line of the file that gave a run each of its knobs (for check's
messages). Each takes the Sweep being read, `sw`.
"""
from .. import programs
from ..common import parse_key_values
from ..allocators import allocator_kind
from .values import WORKLOAD_KEYS


def workload_section(sw, sec, w):
    """One [workload LABEL] section: a dict (the run settings inherit [sweep]'s)."""
    label = sec[len("workload"):].strip()
    if not label:
        raise sw.error("[workload] needs a name: [workload threadtest]")
    where = "[%s]" % sec
    wl = {"label": label, "workload": w.get("workload", label), "section": sec}
    wl.update(sw.run_settings(w, where, inherited=sw.settings))
    wl["knobs"] = parse_key_values(w.get("knobs", ""), where + " knobs")
    wl["allocators"] = sw.allocator_subset(w["allocators"], where) \
        if "allocators" in w else None
    wl["params"] = {k: v for k, v in w.items() if k not in WORKLOAD_KEYS}
    return wl


def read_workloads(sw, cp):
    """sw.workloads: one dict per [workload LABEL] or [program LABEL] section, filled in the
    file's order (a [program] section checks its label against those before it); any other
    section is an error."""
    sw.workloads = out = []
    for sec in cp.sections():
        if sec.startswith("workload"):
            out.append(workload_section(sw, sec, dict(cp[sec])))
        elif sec.startswith("program"):
            out.append(programs.section(sw, sec, dict(cp[sec])))
        elif sec not in ("sweep", "allocators", "knobs"):
            raise sw.error("unknown section [%s]" % sec)
    if not out:
        raise sw.error("no [workload NAME] or [program NAME] sections")


def expand(sw):
    """Every run of the sweep, in definition order; 'index' numbers them."""
    runs = []
    for wl in sw.workloads:
        for label, base, knobs, swept, variant in sw.variants():
            if wl["allocators"] is not None and label not in wl["allocators"]:
                continue
            if label in sw.named_only and wl["allocators"] is None:
                continue
            k = dict(knobs)
            if allocator_kind(base) == "hoardlab":
                k.update(wl["knobs"])
            for t in wl["threads"]:
                for rep in range(wl["repetitions"]):
                    runs.append({
                        "index": len(runs), "allocator": label, "variant": variant,
                        "base": base, "kind": allocator_kind(base), "knobs": k,
                        "swept": dict(swept), "workload_label": wl["label"],
                        "workload": wl["workload"], "params": dict(wl["params"]),
                        "threads": t, "scale": wl["scale"],
                        "seed": wl["workload_seed"] + rep, "repetition": rep,
                        "pin": wl["pin"], "timeout": wl["timeout"],
                    })
                    if "program" in wl:
                        runs[-1]["program"] = wl["program"]
    return runs


def knob_origins(sw):
    """((section, key), knob) for every knob the file names."""
    for label, base, knobs in sw.explicit:
        for k in knobs:
            yield ("allocators", label), k
    for k in sw.knob_values:
        yield ("knobs", k), k
    for wl in sw.workloads:
        for k in wl.get("knobs", {}):
            yield (wl["section"], "knobs"), k


def knob_origin(sw, run, knob):
    """(section, key) of the line that gave `run` its `knob`."""
    wl = next(w for w in sw.workloads if w["label"] == run["workload_label"])
    if knob in wl.get("knobs", {}):
        return wl["section"], "knobs"
    if knob in run["swept"]:
        return "knobs", next(k for k in sw.knob_values if k == knob)
    if any(label == run["allocator"] for label, _, _ in sw.explicit):
        return "allocators", run["allocator"]
    return "sweep", "strategies"
