"""`hoardlab compare`: is B faster than A, slower, or not significantly different?

A and B are two results folders (each with runs.csv; every variant present in both is
compared) or two allocators (variants) of one folder. Per workload and thread count, the
statistic is the ratio of medians B / A of a metric (throughput by default), and its 95 %
interval is a percentile bootstrap: both samples resampled with replacement, RESAMPLES times
from a fixed seed (so the answer is reproducible), the ratio of the two medians each time,
and the 2.5th and 97.5th percentiles of those ratios. The verdict follows the interval:
entirely above 1 or entirely below 1 is a difference, an interval containing 1 is "no
significant difference". With 3 runs a side this amounts to asking that every run of one
side beat every run of the other, which is what 3 runs can show; fewer than MIN_RUNS a side
is "too few runs". Stdlib only (random, statistics)."""
import os
import random
import statistics

from . import report, runkit
from .common import ToolError, knob_key
from .fmt import si

RESAMPLES = 2000
SEED = 1
MIN_RUNS = 3
# Metrics where lower is better, said as faster / slower; any other metric but throughput
# is said as higher / lower.
TIMES = {"wall_s", "elapsed_s"}
# A knob's mechanism acts only on what its statistic counts (`hlconfig --stats`): where the
# runs of both sides counted at most ACT_MIN of it per malloc, the knob could not act and a
# difference is not its effect. knob (or its prefix): (statistics, what they count).
ACTS = {"remote_": (("remote_frees",), "remote frees"),
        "global_": (("global_to", "global_from"), "superblocks moved to or from the global heap"),
        "empty_fraction": (("global_to",), "superblocks moved to the global heap"),
        "release_threshold": (("global_to",), "superblocks moved to the global heap"),
        "large_": (("large_allocs",), "large allocations")}
ACT_MIN = 1e-4
# Folders whose load differs by more than this factor (and LOAD_GAP in absolute terms) are
# said to differ in load.
LOAD_FACTOR, LOAD_GAP = 1.5, 0.5


def load(folder):
    path = os.path.join(folder, "runs.csv")
    if not runkit.table_file(path):
        raise ToolError("%s: no runs.csv (a results folder of `hoardlab sweep`)" % folder)
    return runkit.read_csv(path)


def samples(rows, metric, variant=None):
    """{(variant, workload_label, threads): [values]} of the ok rows."""
    out = {}
    for r in rows:
        v = r.get(metric)
        if r.get("status") != "ok" or not isinstance(v, (int, float)):
            continue
        if variant is not None and r.get("variant") != variant:
            continue
        out.setdefault((r.get("variant"), r.get("workload_label"), r.get("threads")), []).append(v)
    return out


def interval(a, b, rng, resamples=RESAMPLES):
    """(ratio of medians b/a, (low, high)): the 95 % percentile-bootstrap interval."""
    ratios = []
    for _ in range(resamples):
        ma = statistics.median(rng.choices(a, k=len(a)))
        mb = statistics.median(rng.choices(b, k=len(b)))
        ratios.append(mb / ma if ma else float("inf"))
    ratios.sort()
    lo = ratios[int(0.025 * (resamples - 1))]
    hi = ratios[int(round(0.975 * (resamples - 1)))]
    ma = statistics.median(a)
    return (statistics.median(b) / ma if ma else float("inf")), (lo, hi)


def verdict(lo, hi, metric):
    if lo <= 1 <= hi:
        return "no significant difference"
    higher = lo > 1
    if metric == "throughput":
        return "faster" if higher else "slower"
    if metric in TIMES:
        return "slower" if higher else "faster"
    return "higher" if higher else "lower"


def compare(a_rows, b_rows, metric="throughput", a_variant=None, b_variant=None):
    """One dict per group present on both sides: variant (None when comparing two allocators),
    workload, threads, n_a, n_b, median_a, median_b, ratio, low, high, verdict."""
    sa = samples(a_rows, metric, a_variant)
    sb = samples(b_rows, metric, b_variant)
    if a_variant is not None:           # two allocators: group by workload and threads only
        sa = {(None,) + k[1:]: v for k, v in sa.items()}
        sb = {(None,) + k[1:]: v for k, v in sb.items()}
    rng = random.Random(SEED)
    res = []
    for key in sorted(set(sa) & set(sb), key=lambda k: tuple(str(x) for x in k[:2]) + (k[2],)):
        a, b = sa[key], sb[key]
        row = {"variant": key[0], "workload": key[1], "threads": key[2], "n_a": len(a),
               "n_b": len(b), "median_a": statistics.median(a), "median_b": statistics.median(b),
               "ratio": None, "low": None, "high": None}
        if min(len(a), len(b)) < MIN_RUNS:
            row["verdict"] = "too few runs"
        else:
            row["ratio"], (row["low"], row["high"]) = interval(a, b, rng)
            row["verdict"] = verdict(row["low"], row["high"], metric)
        va, vb = (a_variant, b_variant) if a_variant is not None else (key[0], key[0])
        quiet = did_not_act(differing(a_rows, b_rows, va, vb), a_rows, b_rows,
                            (va,) + key[1:], (vb,) + key[1:])
        if quiet:
            row["verdict"] = quiet
        res.append(row)
    return res


def acting(knob):
    """(statistics, what they count) that show `knob` acted, or None (no counter says so)."""
    k = knob_key(knob)
    for prefix, what in ACTS.items():
        if k == prefix or (prefix.endswith("_") and k.startswith(prefix)):
            return what
    return None


def knobs_of(rows, variant):
    r = next((r for r in rows if r.get("variant") == variant), None)
    text = str((r or {}).get("knobs") or "")
    return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)


def differing(a_rows, b_rows, a_variant, b_variant):
    """The knobs whose values differ between the two sides' variant."""
    ka, kb = knobs_of(a_rows, a_variant), knobs_of(b_rows, b_variant)
    return sorted(k for k in set(ka) | set(kb) if ka.get(k) != kb.get(k))


def per_malloc(rows, key, stats):
    """[the statistics' sum / mallocs] of the ok runs of a group (None: not counted)."""
    out = []
    for r in rows:
        if r.get("status") != "ok" or \
                (r.get("variant"), r.get("workload_label"), r.get("threads")) != key:
            continue
        vals = [r.get("hoardlab." + s) for s in stats]
        m = r.get("hoardlab.mallocs")
        if any(not isinstance(v, (int, float)) for v in vals) or not m:
            return None
        out.append(sum(vals) / m)
    return out or None


def did_not_act(knobs, a_rows, b_rows, a_key, b_key):
    """'did not act (...)' when no knob in `knobs` acted in either side's runs of the group
    (each one's statistics at most ACT_MIN per malloc in every run), else None."""
    said = []
    for k in knobs:
        what = acting(k)
        if what is None:
            return None
        counts = [per_malloc(rows, key, what[0]) for rows, key in
                  ((a_rows, a_key), (b_rows, b_key))]
        if any(c is None for c in counts) or max(max(c) for c in counts) > ACT_MIN:
            return None
        said.append("%s: at most %.0e %s per malloc" % (k, max(max(c) for c in counts) or 0,
                                                        what[1]))
    return "did not act (%s)" % "; ".join(said) if said else None


def folder_differences(a, b):
    """Lines warning that two folders differ in commit, machine or load (meta.json and the
    runs' load columns), for the head of the comparison; [] when nothing differs."""
    ma, mb = (runkit.read_meta(os.path.join(f, "meta.json")) for f in (a, b))
    out = []
    ga, gb = ma.get("git") or {}, mb.get("git") or {}
    ca, cb = ga.get("commit"), gb.get("commit")
    if ca and cb and (ca != cb or ga.get("diff_sha1") != gb.get("diff_sha1")):
        out.append("commit: A %s%s, B %s%s" % (ca[:12], " (uncommitted changes)" if
                                               ga.get("dirty") else "", cb[:12],
                                               " (uncommitted changes)" if gb.get("dirty")
                                               else ""))
    xa, xb = ma.get("machine") or {}, mb.get("machine") or {}
    for key in ("cpu_model", "cores", "hostname"):
        if xa.get(key) and xb.get(key) and xa.get(key) != xb.get(key):
            out.append("machine: %s A %s, B %s" % (key, xa[key], xb[key]))
            break
    la, lb = machine_load(ma, a), machine_load(mb, b)
    for what, (x, y) in (("load average", (la[0], lb[0])),
                         ("other processes' CPU use during runs", (la[1], lb[1]))):
        if x is not None and y is not None and abs(x - y) > LOAD_GAP and \
                max(x, y) > LOAD_FACTOR * max(min(x, y), 1e-9):
            out.append("load: %s A %.1f, B %.1f" % (what, x, y))
    return out


def machine_load(meta, folder):
    """(the larger 1-minute load average at start and end, the median of others' CPU use
    during the runs) of a folder; None where not recorded."""
    m = meta.get("machine") or {}
    la = [x[0] for x in (m.get("loadavg_start"), m.get("loadavg_end")) if x]
    rows = load(folder)
    during = [r["load.during_cpus"] for r in rows
              if isinstance(r.get("load.during_cpus"), (int, float))]
    return (max(la) if la else None), (statistics.median(during) if during else None)


def warning_lines(diffs):
    if not diffs:
        return []
    return ["WARNING: the two folders differ in %s: a ratio below mixes that difference with "
            "the allocators'" % ", ".join(sorted({d.split(":")[0] for d in diffs}))] + \
        ["  " + d for d in diffs] + [""]


def sweep_warnings(folders):
    """What each folder's own report says of its machine, repeated: the runs made while other
    processes kept the CPUs busy, and the warning (busy or noisy) or note (the machine's own
    noise) its timing verdicts carry -- the report head's own functions, so a "no significant
    difference" below is read as that report would read it. [] when every folder was quiet."""
    out = []
    for label, folder in folders:
        meta = runkit.read_meta(os.path.join(folder, "meta.json"))
        rows = load(folder)
        said = report.busy_lines(meta, rows) + report.machine_warnings(meta, rows)
        if said:
            out += ["%s (%s), from its report:" % (label, folder)] + \
                [ln for ln in said if ln] + [""]
    return out


def table(res, metric, a_name, b_name):
    """The comparison as text, one line a group, after a header stating the method."""
    better = "higher is better" if metric == "throughput" else \
        "lower is better" if metric in TIMES else "a difference, not a judgement"
    lines = ["B = %s against A = %s; %s (%s)" % (b_name, a_name, metric, better),
             "ratio: median of B / median of A; interval: 95 %% percentile bootstrap of that "
             "ratio (%d resamples, seed %d); the verdict is the interval's: containing 1 = no "
             "significant difference; fewer than %d runs a side: too few runs; where the knob "
             "compared could not act (its own statistic, e.g. remote frees, at most %g per "
             "malloc on both sides): did not act" % (RESAMPLES, SEED, MIN_RUNS, ACT_MIN), ""]
    head = (["allocator"] if any(r["variant"] for r in res) else []) + \
        ["workload", "threads", "A median (n)", "B median (n)", "B/A", "95% interval", "verdict"]
    body = []
    for r in res:
        cells = ([str(r["variant"])] if r["variant"] is not None else []) + [
            str(r["workload"]), str(r["threads"]), "%s (%d)" % (si(r["median_a"]), r["n_a"]),
            "%s (%d)" % (si(r["median_b"]), r["n_b"])]
        if r["ratio"] is None:
            cells += ["-", "-"]
        else:
            cells += ["%.3f" % r["ratio"], "[%.3f, %.3f]" % (r["low"], r["high"])]
        body.append(cells + [r["verdict"]])
    if not body:
        return "\n".join(lines + ["nothing to compare: no workload and thread count with ok "
                                  "runs of %s on both sides" % metric])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    for cells in [head] + body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(lines)


def run(a, b=None, allocators=None, metric="throughput"):
    """The command: (text, results)."""
    if allocators:
        if b is not None:
            raise ToolError("compare: --allocators X Y compares two allocators of ONE folder")
        rows = load(a)
        known = sorted({r.get("variant") for r in rows if r.get("variant")})
        for v in allocators:
            if v not in known:
                raise ToolError("compare: %s has no allocator %r (it has: %s)"
                                % (a, v, ", ".join(known)))
        res = compare(rows, rows, metric, allocators[0], allocators[1])
        return "\n".join(sweep_warnings([("the folder", a)]) +
                         [table(res, metric, allocators[0], allocators[1])]), res
    if b is None:
        raise ToolError("compare: give two results folders, or one and --allocators X Y")
    res = compare(load(a), load(b), metric)
    return "\n".join(warning_lines(folder_differences(a, b)) +
                     sweep_warnings([("A", a), ("B", b)]) + [table(res, metric, a, b)]), res
