"""`hoardlab residual`: how much of a real allocator's advantage over `hoard2026` do the
elements of its composed row explain, and what is left?

For each composed row R (docs/rows.md) and the production allocator A it imitates (ROWS), on
the workloads of WORKLOADS, one generated sweep runs, interleaved and shuffled:
  - the attribution from hoard2026 to R, element by element in both orders (attribute.plan:
    the same plan, steps and tables as `hoardlab attribute hoard2026 R`), and
  - A itself,
so hoard2026 (H), R and A are measured in the same run. Per row and workload (metric: the
workload's, higher is better):
    gap       = A - H       the real allocator's advantage over hoard2026
    explained = R - H       what the row's elements give
    share     = explained / gap,  residual = A - R.
share's interval is interval arithmetic on the three medians' intervals (verdicts.spread_of,
the noise rule's interval of a median): the least and greatest (r - h) / (a - h) over r, h, a
within them (the ends are corners of that box: the ratio is monotone in each). A gap whose
interval reaches 0 has no share (undecided). Whether the elements explain at least half is
verdicts.check(share, '>=', THRESHOLD): decided only when the interval lies wholly on one side
(verdicts.NOISE_RULE). Where it is not decided at least half, the residual is named: the
mechanisms of LACKS that the row leaves out of A and that the workload exercises.

The run writes residual.json (the plans, the workloads, the pairs) beside the sweep's
runs.csv; the report's section "Residual: what the composed rows explain" (report/residual.py)
reads it, so `hoardlab report DIR` draws it again. Not part of the main job."""
import json
import os

from . import attribute, verdicts as V
from .common import ToolError, split_commas

BASE = "hoard2026"
THRESHOLD = 0.5
TARGET_WORKLOADS = 2        # the aim: on at least two workloads per row, decided
# composed row -> the production allocator it imitates (allocators.PRODUCTION's name)
ROWS = {"mimalloc-like": "mimalloc3", "snmalloc-like": "snmalloc",
        "tcmalloc-like": "tcmalloc-google"}

# label -> (hlbench workload, parameters, scale at --scale 1, metric, what it is). The
# scales are those of the sweeps the workloads come from (handoff.ini, purge.ini).
WORKLOADS = {
    "handoff": ("xfree", {"batches": "500", "batch": "4000", "depth": "100",
                          "min_size": "64", "max_size": "64"}, 1.0, "throughput",
                "the hand-off's producer-consumer (handoff.ini's xfree-deep): batches of 4000 "
                "64-byte blocks, 100 in flight a pair, freed by the consumer"),
    "larson": ("larson", {}, 0.03, "throughput",
               "Larson's server: blocks inherited by later threads (handoff.ini's scale)"),
    "migrating-objects": ("migrating-objects", {}, 1.0, "throughput",
                          "threads that come and go hand blocks of 8 B..32 KiB on while the "
                          "live set grows and shrinks (handoff.ini's scale)"),
    "spike": ("phased", {}, 0.2, "extra.spike_ops_per_s",
              "the phased workload's spike phase (4x the steady allocation rate), its "
              "operations per second (extra.spike_ops_per_s; purge.ini's workload)"),
}

# What each row leaves out of its real allocator (the "What it leaves out" of its
# configs/rows/NAME.ini), as data: (mechanism, the workloads whose gap it can make, source).
# The workloads are named by what they exercise, not measured: the testbed lacks the
# mechanism, so no run can switch it on. The last mechanism of every row is the testbed's
# own common path, which every workload pays.
COMMON_PATH = ("the testbed's common path (interposition, init check, dispatch, free "
               "routing) around each malloc and free", tuple(WORKLOADS),
               "DESIGN.md, 'The cost of the testbed itself'; `tools/hoardlab cost` prints the "
               "core's share of each pair")
LACKS = {
    "mimalloc-like": (
        ("a lock-free owner path: the owner takes its heap's lock on every malloc and local "
         "free", ("handoff", "larson", "migrating-objects", "spike"),
         "configs/rows/mimalloc-like.ini; Leijen, Zorn, de Moura (APLAS 2019): a heap is only "
         "ever touched by its thread"),
        ("segments and abandonment instead of Hoard's threshold and global heap",
         ("larson", "migrating-objects"),
         "configs/rows/mimalloc-like.ini; mimalloc 2.x/3.x: pages change threads only with a "
         "segment abandoned at thread exit"),
        ("the delayed-free flag on full pages (the owner collects on slow paths and every 64 "
         "mallocs here)", ("handoff", "migrating-objects"),
         "configs/rows/mimalloc-like.ini; docs/free-lists.md"),
        ("medium and large pages: objects above 32 KiB get an OS mapping each here",
         ("spike",), "configs/rows/mimalloc-like.ini; the phased workload's blocks reach 64 "
         "KiB and 4 MiB"),
        COMMON_PATH),
    "snmalloc-like": (
        ("local frees straight onto the slab's free list, without the TLAB and the locked "
         "give-back", ("larson", "migrating-objects", "spike"),
         "configs/rows/snmalloc-like.ini; Lietar et al. (ISMM 2019)"),
        ("slabs touched only by their owner: collected runs here wait for the owner heap's "
         "lock", ("handoff", "larson", "migrating-objects"),
         "configs/rows/snmalloc-like.ini; docs/remote-free.md"),
        ("a shared chunk backend instead of Hoard's threshold and global heap",
         ("larson", "migrating-objects"), "configs/rows/snmalloc-like.ini"),
        ("slab sizes per size class (one 64 KiB superblock size here; objects above 32 KiB "
         "mapped each)", ("spike",), "configs/rows/snmalloc-like.ini"),
        COMMON_PATH),
    "tcmalloc-like": (
        ("a lock per size class and a transfer cache between the CPU caches and the central "
         "lists (one heap lock here)", ("handoff", "larson", "migrating-objects", "spike"),
         "configs/rows/tcmalloc-like.ini; Hunter et al. (OSDI 2021)"),
        ("per-CPU caches sized dynamically, capacity moved between classes and CPUs (fixed "
         "cpu_cache_bytes here)", ("larson", "spike"),
         "configs/rows/tcmalloc-like.ini; Hunter et al. (OSDI 2021)"),
        ("the huge-page-aware page heap instead of Hoard's global heap and threshold",
         ("spike", "migrating-objects"), "configs/rows/tcmalloc-like.ini"),
        COMMON_PATH),
}


# --- arguments --------------------------------------------------------------------------

def choose(text, valid, what):
    """The names of a comma-separated list, each one of `valid` (all when empty); a
    ToolError naming the valid choices on the first that is not."""
    names = split_commas(text) if text else list(valid)
    for n in names:
        if n not in valid:
            raise ToolError("residual: %s: %r is not one of %s" % (what, n, ", ".join(valid)))
    if not names:
        raise ToolError("residual: %s: none named (choose from %s)" % (what, ", ".join(valid)))
    return list(dict.fromkeys(names))


def check_numbers(scale, repetitions):
    if not scale or scale <= 0:
        raise ToolError("residual: --scale must be a number > 0 (got %r)" % scale)
    if repetitions < 1:
        raise ToolError("residual: --repetitions must be at least 1 (got %d)" % repetitions)


# --- the plan and its sweep ---------------------------------------------------------------

def variant_of(row):
    """label of a row's attribution plan -> the sweep's allocator label."""
    return lambda label: BASE if label == "base" else row if label == "target" \
        else "%s.%s" % (row, label)


def alias_order(diff):
    """--order for attribute.plan: the differing keys in table order, except that `tlab`
    (cache's older name) joins `cache` as one element when the row's cache is none or
    thread, where it only restates it (docs/rows.md); None when nothing is joined."""
    vals = dict(diff)
    if "tlab" not in vals or vals.get("cache") not in ("none", "thread"):
        return None
    return [("tlab+cache" if k == "cache" else k) for k, _ in diff if k != "tlab"]


def plan_row(bdir, row, strategies):
    diff = attribute.differing(attribute.effective(bdir, BASE, {}),
                               attribute.effective(bdir, row, {}))
    return attribute.plan(bdir, BASE, row, alias_order(diff), strategies)


def sweep_text(plans, workloads, scale, threads, repetitions, timeout, name):
    """One sweep file: hoard2026, every row's steps and the row itself, and each row's real
    allocator, on the workloads (labels of WORKLOADS)."""
    out = ["; generated by `hoardlab residual` (docs/tool.md)", "[sweep]", "name = %s" % name,
           "description = residual: attribution from %s to %s, and each row "
           "against %s" % (BASE, ", ".join(plans), ", ".join(ROWS[r] for r in plans)),
           "strategies = none", "threads = %s" % threads, "repetitions = %d" % repetitions,
           "baseline = %s" % BASE, "timeout = %g" % timeout, "", "[allocators]",
           "%s = %s" % (BASE, BASE)]
    for row, p in plans.items():
        v = variant_of(row)
        for label, base, knobs, _ in p.configs:
            if label == "base":
                continue
            out.append("%s = %s" % (v(label), ", ".join([base] + ["%s=%s" % kv for kv in
                                                                 knobs.items()])))
        out.append("%s = %s" % (ROWS[row], ROWS[row]))
    for label in workloads:
        wl, params, base_scale, _, _ = WORKLOADS[label]
        out += ["", "[workload %s]" % label]
        if wl != label:
            out.append("workload = %s" % wl)
        out.append("scale = %g" % (base_scale * scale))
        out += ["%s = %s" % kv for kv in params.items()]
    return "\n".join(out) + "\n"


def write_plan(outdir, plans, workloads, scale):
    with open(os.path.join(outdir, "residual.json"), "w") as f:
        json.dump({"base": BASE, "threshold": THRESHOLD, "scale": scale,
                   "rows": {r: {"real": ROWS[r], "plan": p.to_json()} for r, p in plans.items()},
                   "workloads": {w: {"workload": WORKLOADS[w][0], "metric": WORKLOADS[w][3],
                                     "what": WORKLOADS[w][4]} for w in workloads}},
                  f, indent=2)
        f.write("\n")


def read_plan(outdir):
    """residual.json of a folder `hoardlab residual` wrote, its plans as attribute.Plans;
    None when there is none."""
    path = os.path.join(outdir, "residual.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        d = json.load(f)
    for r in d["rows"].values():
        r["plan"] = attribute.Plan.from_json(r["plan"])
    return d


# --- the computation -------------------------------------------------------------------

def diff_spread(a, b):
    """a - b of two medians' Spreads, its interval [a.lo - b.hi, a.hi - b.lo]."""
    return V.Spread(a.med - b.med, a.lo - b.hi, a.hi - b.lo, min(a.n, b.n))


def share_spread(h, r, a):
    """(r - h) / (a - h) and its interval over the box of the three intervals; None when
    the gap's interval reaches 0 (the share is then unbounded)."""
    gap = diff_spread(a, h)
    if gap.lo <= 0 <= gap.hi:
        return None
    ends = [(rr - hh) / (aa - hh) for rr in (r.lo, r.hi) for hh in (h.lo, h.hi)
            for aa in (a.lo, a.hi)]
    med = (r.med - h.med) / (a.med - h.med)
    return V.Spread(med, min(ends + [med]), max(ends + [med]), min(h.n, r.n, a.n))


# statuses of a (row, workload) pair; NAMED: those whose residual is named
AT_LEAST_HALF = "explains at least half"
LESS_THAN_HALF = "explains less than half"
WITHIN = "within noise"
NO_GAP = "no gap beyond noise"
NO_ADVANTAGE = "real allocator slower"
ONE_RUN = "one repetition: no interval"
NOT_MEASURED = "not measured"
NAMED = (LESS_THAN_HALF, WITHIN)


def pair(h, r, a, threshold=THRESHOLD):
    """The numbers and the status of one row on one workload from the Spreads of hoard2026
    (h), the row (r) and the real allocator (a): {gap, explained, residual, share, status,
    decided (True/False/None: share >= threshold), overshoot (share wholly above 1)}."""
    res = {"gap": None, "explained": None, "residual": None, "share": None,
           "decided": None, "overshoot": False}
    if h is None or r is None or a is None:
        return dict(res, status=NOT_MEASURED)
    res.update(gap=diff_spread(a, h), explained=diff_spread(r, h), residual=diff_spread(a, r))
    if min(h.n, r.n, a.n) < 2:
        # the medians still give a share, but one run has no interval to decide on
        if a.med != h.med:
            m = (r.med - h.med) / (a.med - h.med)
            res["share"] = V.Spread(m, m, m, 1)
        return dict(res, status=ONE_RUN)
    s = share_spread(h, r, a)
    res["share"] = s
    if s is None:
        return dict(res, status=NO_GAP)
    if res["gap"].hi < 0:
        return dict(res, status=NO_ADVANTAGE)
    res["decided"] = V.check(s, ">=", threshold)
    res["overshoot"] = s.lo > 1
    status = {True: AT_LEAST_HALF, False: LESS_THAN_HALF, None: WITHIN}[res["decided"]]
    return dict(res, status=status)


def named(row, workload, lacks=None):
    """[(mechanism, source)] that the row leaves out and the workload exercises."""
    return [(m, src) for m, wls, src in (lacks or LACKS).get(row, ()) if workload in wls]


def spreads(rows, variant, workload, metric, threads):
    return V.spread_of([r.get(metric) for r in V.ok(rows) if r["variant"] == variant and
                        r["workload_label"] == workload and r["threads"] == threads])


def results(plan, rows):
    """{row: {workload: pair(...) + {h, r, a, threads}}} of a run's rows and its
    residual.json (read_plan)."""
    out = {}
    for row, d in plan["rows"].items():
        out[row] = {}
        for wl, w in plan["workloads"].items():
            ts = sorted({r["threads"] for r in V.ok(rows) if r["workload_label"] == wl})
            t = ts[-1] if ts else None
            h, r, a = (spreads(rows, v, wl, w["metric"], t) for v in (BASE, row, d["real"]))
            out[row][wl] = dict(pair(h, r, a, plan.get("threshold", THRESHOLD)), h=h, r=r,
                                a=a, threads=t)
    return out


def target_met(per_workload):
    """(workloads where the elements explain at least half, decided; the target met?)"""
    won = [w for w, p in per_workload.items() if p["status"] == AT_LEAST_HALF]
    return won, len(won) >= TARGET_WORKLOADS


def summary(plan, rows):
    """The command's closing lines: per row and workload the share explained, its interval
    and verdict, and the mechanisms named where it is not decided at least half."""
    out = []
    for row, per in results(plan, rows).items():
        won, met = target_met(per)
        out.append("%s vs %s: at least half explained (decided) on %d of %d workloads%s"
                   % (row, plan["rows"][row]["real"], len(won), len(per),
                      "" if met else " (target: %d)" % TARGET_WORKLOADS))
        for wl, p in per.items():
            out.append("  %-18s share %-24s %s" % (wl, V.interval_text(p["share"], "%.2f"),
                                                   p["status"]))
            if p["status"] in NAMED:
                out += ["    lacks: %s" % m for m, _ in named(row, wl)]
    return "\n".join(out)
