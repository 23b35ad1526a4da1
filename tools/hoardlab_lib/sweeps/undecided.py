"""The groups behind the taxonomy verdicts that stayed within noise (or undecided because the
machine was busy), and the repetitions an Execution (execute.py) adds to decide them: one
round at a time, within a time budget, never while other processes keep the CPUs busy at
every look (busy_throughout) or disturbed every run of the last round (busy_round).
"""
import math
import time

from .. import verdicts as V

MAX_EXTRA_REPS = 10         # repetitions one group may gain (besides the time budget)
TIMING_VERDICTS = ("fast", "scalable", "false_sharing")


def repeat(ex, runs, ncores):
    """Execution ex's more repetitions of the groups behind every timing verdict within
    noise, one round at a time (each round: one more run of each such group, shuffled),
    until none is left or the budget is spent: policy.extra_time seconds, plus the time of the runs
    a busy machine disturbed and that were not redone (set aside by the verdicts, their
    time bought nothing). Not one round is added while the load watcher has seen no
    quiet moment since the sweep began (busy_throughout), nor another once every run of
    a round was disturbed (busy_round): the verdicts set such runs aside, so more of them
    cannot decide anything while the load lasts."""
    if ex.policy.extra_time <= 0:
        return
    ex.lost_s = ex.disturbed_s()
    deadline = time.monotonic() + ex.policy.extra_time + ex.lost_s
    next_index = max(r["index"] for r in runs) + 1
    added = {}
    last = None             # the indices of the last round's runs
    while True:
        groups = undecided_groups(ex.rows, ex.rounds, ncores)
        todo = [g for g in groups if added.get(g, 0) < MAX_EXTRA_REPS]
        if not todo or time.monotonic() >= deadline:
            break
        ex.stopped = busy_throughout(ex.waiter) if last is None else \
            busy_round(ex.rows, last)
        if ex.stopped:
            break
        ex.deadline = deadline
        batch = []
        for g in todo:
            batch.append(more_of(runs, ex.rows, g, next_index))
            next_index += 1
            added[g] = added.get(g, 0) + 1
            ex.why.setdefault(g, groups[g])
        ex.rng.shuffle(batch)
        last = {r["index"] for r in batch}
        ex.prog.total += len(batch)
        ex.prog.plan(batch)
        if not ex.run_queue(batch, deadline):
            break
    first = max(r["index"] for r in runs) + 1      # the runs that were done, by group
    for r in ex.rows:
        if r["index"] >= first and r["record"] == 0:
            g = (r["variant"], r["workload_label"], r["threads"])
            ex.extra[g] = ex.extra.get(g, 0) + 1
    ex.undecided = undecided_groups(ex.rows, ex.rounds, ncores)


def busy_throughout(waiter):
    """{'looks', 'during'} when every reading of others' load the waiter made since the sweep
    began saw the CPUs busy: then no run was quiet, and a verdict that waits for quiet runs
    (busy runs are set aside) cannot be decided by adding more while the load lasts. None
    when a quiet moment was seen, or nothing was looked at."""
    if not waiter.never_quiet():
        return None
    return {"looks": waiter.looks, "during": "the sweep"}


def busy_round(rows, indices):
    """{'runs', 'during'} when every run of the last round of added runs (`indices`) that was
    done was disturbed (load.busy): set aside by the verdicts, the round bought nothing, and
    the next would buy as little while the load lasts. None otherwise."""
    done = [r for r in rows if r["index"] in indices and r.get("record") == 0]
    if not done or not all(r.get("load.busy") for r in done):
        return None
    return {"runs": len(done), "during": "the last round of added runs"}


def verdict_terms(rows, v, key, ref, ncores):
    """{workload: (Spread of the ratio, its two groups)}: the terms a timing verdict of
    variant v combines (a geometric mean over workloads): for fast?, v against the
    reference at 1 thread; for scalable? and false sharing from speed, v's speedup."""
    if key == "fast":
        tab = V.throughput_spreads(rows)
        return {wl: (V.ratio(tab[(v, wl, 1)], tab[(ref, wl, 1)]), [(v, wl, 1), (ref, wl, 1)])
                for (x, wl, t) in tab if x == v and t == 1 and (ref, wl, 1) in tab and
                not wl.startswith(V.TIMING_WORKLOADS_EXCLUDED)}
    wls = V.SCALE_WORKLOADS if key == "scalable" else V.FS_TIMING_WORKLOADS
    return {wl: (s, [(v, wl, 1), (v, wl, t)])
            for wl, (s, t) in V.speedup_spreads(rows, v, wls, ncores=ncores).items()}


def narrow_terms(terms):
    """The workloads of `terms` whose ratio is already narrow: measured at least 3 times a
    side and at most half as wide (in logarithms) as the widest term's. Repeating them
    would hardly move the verdict: its interval is dominated by its widest terms (errors add
    as squares, noise.gmean_spread)."""
    width = {wl: math.log(s.hi / s.lo) for wl, (s, _) in terms.items() if s and s.lo > 0}
    widest = max(width.values(), default=0)
    return {wl for wl, w in width.items() if terms[wl][0].n >= 3 and w <= widest / 2}


def undecided_groups(rows, rounds, ncores):
    """{(variant, workload_label, threads): why} for the timing groups behind each taxonomy
    verdict that is within noise or undecided because the machine was busy: fast? (the
    variant and serial at 1 thread), scalable? (its scaling workloads) and false sharing
    decided from speed (active-/passive-false) — less the groups whose terms are already
    narrow (narrow_terms), unless another undecided verdict needs them; and the blowup
    groups behind a blowup class within noise (the verdict's `repeat`)."""
    res = {}
    add_undecided(res, rows, V.taxonomy(rows, rounds, ncores), ncores)
    # today's allocators (verdicts.today): their `today-<label>` runs read as <label>, and
    # each group found mapped back to the label it runs under
    names = sorted({r["variant"] for r in rows
                    if str(r.get("workload_label", "")).startswith(V.TODAY_PREFIX)})
    if names:
        rl = V.relabel(rows)
        ents = [e for e in V.today_verdicts(rl, rounds, ncores, {n: {} for n in names})
                if not e.get("missing")]
        planned = {(r["variant"], r["workload_label"], r["threads"]) for r in rows}
        found = {}
        add_undecided(found, rl, ents, ncores)
        for (v, wl, t), why in found.items():
            g = (v, V.TODAY_PREFIX + wl, t)
            res.setdefault(g if g in planned else (v, wl, t), why)
    return res


def add_undecided(res, rows, entries, ncores):
    """Into res, the groups behind each timing verdict of `entries` (taxonomy entries) that
    is within noise or busy-undecided, less narrow terms (undecided_groups)."""
    ref = V.reference_variant(rows, "serial")
    groups = set(V.throughput_groups(rows))
    quiet = [r for r in rows if not r.get("load.busy")]
    for e in entries:
        v = e["variant"]
        for k in TIMING_VERDICTS:
            if e[k]["value"] not in (V.WITHIN_NOISE, V.BUSY_UNDECIDED):
                continue
            why = "%s %s %s" % (v, k, e[k]["value"])
            terms = verdict_terms(quiet, v, k, ref, ncores)
            skip = {g for wl in narrow_terms(terms) for g in terms[wl][1]}
            for g in groups:
                if V.timing_group_of(k, v, ref, g) and g not in skip:
                    res.setdefault(g, why)
        for wl, t in e["blowup"].get("repeat", ()):      # a blowup class within noise
            res.setdefault((v, wl, t), "%s blowup %s" % (v, e["blowup"]["value"]))


def more_of(runs, rows, group, index):
    """A new run of `group` (variant, workload_label, threads): the planned run's settings,
    the next repetition and its workload seed, a new index."""
    v, wl, t = group
    tmpl = next(r for r in runs if (r["variant"], r["workload_label"], r["threads"]) == group
                and not V.truthy(r["knobs"].get("census", "")))
    rep = 1 + max(r["repetition"] for r in rows
                  if (r["variant"], r["workload_label"], r["threads"]) == group)
    return dict(tmpl, index=index, repetition=rep, seed=tmpl["seed"] - tmpl["repetition"] + rep)
