"""What tests/tools/test_slurm*.py check of a sweep's folder: runs.csv against plan.json."""
import csv
import json
import os

# The columns of a row that must be the plan's run, as the plan writes them.
PLANNED = ("index", "order", "allocator", "variant", "workload_label", "workload", "threads",
           "scale", "seed", "repetition")


def plan(outdir):
    with open(os.path.join(outdir, "plan.json")) as f:
        return json.load(f)


def rows(outdir):
    with open(os.path.join(outdir, "runs.csv")) as f:
        return list(csv.DictReader(f))


def mismatches(outdir):
    """Where runs.csv and the plan differ, run for run (an empty list when they agree):
    one row per planned run, with the plan's index, order, allocator, workload, threads,
    scale, seed and repetition, and status ok."""
    p, rs = plan(outdir), rows(outdir)
    bad = []
    by_order = {}
    for r in rs:
        by_order.setdefault(int(r["order"]), []).append(r)
    if sorted(by_order) != list(range(len(p["runs"]))):
        bad.append("orders in runs.csv %s, planned 0..%d" % (sorted(by_order),
                                                              len(p["runs"]) - 1))
    for run in p["runs"]:
        got = by_order.get(run["order"], [])
        if len(got) != 1:
            bad.append("order %d: %d rows" % (run["order"], len(got)))
            continue
        r = got[0]
        for c in PLANNED:
            want = run[c]
            have = float(r[c]) if isinstance(want, float) else \
                int(r[c]) if isinstance(want, int) else r[c]
            if have != want:
                bad.append("order %d %s: %r in runs.csv, %r planned" % (run["order"], c,
                                                                       have, want))
        if r["knobs"] != ";".join("%s=%s" % kv for kv in sorted(run["knobs"].items())):
            bad.append("order %d knobs: %r" % (run["order"], r["knobs"]))
        if r["status"] != "ok":
            bad.append("order %d status %s: %s" % (run["order"], r["status"], r["error"]))
    return bad


def part_lines(outdir, k):
    path = os.path.join(outdir, "parts", "task-%d.jsonl" % k)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def status(outdir, k):
    with open(os.path.join(outdir, "parts", "task-%d.json" % k)) as f:
        return json.load(f)
