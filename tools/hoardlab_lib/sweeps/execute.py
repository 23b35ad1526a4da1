"""A sweep's runs executed in their shuffled order with the machine's other load seen and
waited out (load.py): before each run the sweep waits, bounded, for other processes to
quieten; a run they disturbed anyway (their CPU use during it above the threshold) is redone
later in the order, within a budget; after the planned runs, the groups whose taxonomy
verdict stayed *within noise* get more repetitions, interleaved, until it is decided or the
time budget is spent -- unless other processes kept the CPUs busy at every look (no quiet
run was made, and none would be), which no repetition can outwait. What happened is
returned for meta.json's `load`."""
import json
import math
import random
import time

from .. import runkit, verdicts as V
from . import load

MAX_EXTRA_REPS = 10         # repetitions one group may gain (besides the time budget)
TIMING_VERDICTS = ("fast", "scalable", "false_sharing")


class Progress(runkit.Progress):
    """runkit.Progress whose estimate of the time left also counts what may still be added
    and the waits for a quiet machine before the runs left (`pending`, set by Execution:
    Execution.pending_s), and the step after the runs (`after_s`: the callgrind step), so
    that it is an upper bound rather than a figure that stays put while added runs keep
    coming."""
    pending = None
    after_s = 0.0

    def left(self):
        base = super().left()
        if base is None:
            return base
        return base + (self.pending(base) if self.pending else 0.0) + self.after_s


class Execution:
    """The loop over runs. rows, rounds and series collect the tidy results; `redone` lists
    the disturbed runs done again; `extra` the repetitions added to undecided groups."""

    def __init__(self, name, bdir, hlbench, policy, recf, prog, seed=0):
        self.name, self.bdir, self.hlbench, self.policy = name, bdir, hlbench, policy
        self.recf, self.prog = recf, prog
        self.rows, self.rounds, self.series = [], [], []
        self.redone, self.extra, self.undecided, self.why = [], {}, {}, {}
        self.waiter = load.Waiter(policy)
        self.rng = random.Random(seed)
        self.done = 0
        self.redo_left = 0
        self.lost_s = 0.0       # time of the disturbed runs kept (repeat_undecided)
        self.last = None        # others' CPUs during the run before
        self.deadline = None    # when adding repetitions stops (repeat_undecided), monotonic
        self.stopped = None     # why repetitions stopped (busy_throughout, busy_round)
        self.wait_s = 0.0       # wall time spent before the runs, looking and waiting
        prog.pending = self.pending_s

    def pending_s(self, planned_left):
        """Seconds beyond `planned_left` (the runs queued): what may be added, and the
        waits before the runs left."""
        return self.may_add_s(planned_left) + self.waits_left_s(planned_left)

    def waits_left_s(self, planned_left):
        """The waits before the runs left: the mean wait per run so far, for each run left,
        bounded as load.Waiter bounds them (never more in all than the runs' own time plus
        one quiet_wait); beside a load taken as one that does not stop, a look per run."""
        if not self.done:
            return 0.0
        runs_left = sum(self.prog.remaining.values())
        rate = self.wait_s / self.done
        if self.waiter.persistent():
            rate = min(rate, load.WINDOW_S)
            return rate * runs_left
        allowance = self.waiter.ran_s + planned_left + self.policy.quiet_wait - \
            self.waiter.waited_s
        return min(rate * runs_left, max(0.0, allowance))

    def may_add_s(self, planned_left):
        """Seconds beyond the `planned_left` of the runs already queued that this execution
        may still add: before the added repetitions, the disturbed runs the redo budget may
        redo (at the mean run's length) and the repetitions' own budget (policy.extra_time
        plus the disturbed runs' time so far); while adding them, what is left until their
        deadline (nothing starts after it). Beside a load that has not paused once, the
        repetitions will not be added (busy_throughout), and are not counted: should the
        load pause, the estimate grows by their budget then."""
        if self.deadline is not None:
            return max(0.0, self.deadline - time.monotonic() - planned_left)
        mean = self.waiter.ran_s / self.done if self.done else 0.0
        redo = 0.0 if self.waiter.persistent() else self.redo_left * mean
        extra = 0.0
        if self.policy.extra_time > 0 and not self.waiter.never_quiet():
            extra = self.policy.extra_time + self.disturbed_s()
        return redo + extra

    def disturbed_s(self):
        """Seconds of the disturbed runs kept (not redone): what the verdicts set aside."""
        return sum(r.get("elapsed_s") or 0 for r in self.rows
                   if r.get("load.busy") and r.get("record") == 0)

    def run_one(self, run):
        """Wait for a quiet moment, run, and return the result with its `load`."""
        t0 = time.monotonic()
        before = self.waiter.before(self.done, self.last)
        self.wait_s += time.monotonic() - t0
        probe = load.Probe()
        res = runkit.run_one(run, self.bdir, self.hlbench)
        res["load"] = dict(before, **load.during(probe, self.policy))
        self.last = self.waiter.saw(res["load"]["during_cpus"])
        self.waiter.ran_s += res["elapsed_s"]
        return res

    def record(self, run, res, redone=False):
        for rec in res["records"]:
            self.recf.write(json.dumps({"index": run["index"], "order": self.done,
                                        "variant": run["variant"], "record": rec,
                                        "load": res["load"], "redone": redone}) + "\n")
        self.recf.flush()

    def run_queue(self, queue, deadline=None):
        """Run `queue` (a list, in order); a disturbed run that went ok is put back at a
        random later place while the redo budget lasts. Stops at `deadline` (monotonic)."""
        i = 0
        while i < len(queue):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            run = queue[i]
            self.prog.start(self.done, run)
            res = self.run_one(run)
            # redone while the budget lasts, unless the load does not stop (redoing is vain)
            redo = bool(res["load"]["busy"]) and res["status"] == "ok" and \
                self.redo_left > 0 and not self.waiter.persistent()
            if redo:
                self.redo_left -= 1
                self.redone.append({"index": run["index"], "variant": run["variant"],
                                    "workload_label": run["workload_label"],
                                    "threads": run["threads"], "order": self.done,
                                    "during_cpus": res["load"]["during_cpus"]})
                queue.insert(self.rng.randint(i + 1, len(queue)), run)
                self.prog.add(run)
            else:
                rr, rd = runkit.rows_for(run, res, self.name, self.done, self.bdir, self.series)
                self.rows += rr
                self.rounds += rd
            self.prog.finish(run, res["elapsed_s"], res["status"], res["error"])
            self.record(run, res, redo)
            self.done += 1
            i += 1
        return True

    def run_planned(self, order):
        self.redo_left = int(self.policy.redo_share * len(order))
        self.run_queue(list(order))

    def repeat_undecided(self, runs, ncores):
        """More repetitions of the groups behind every timing verdict within noise, one
        round at a time (each round: one more run of each such group, shuffled), until none
        is left or the budget is spent: policy.extra_time seconds, plus the time of the runs
        a busy machine disturbed and that were not redone (set aside by the verdicts, their
        time bought nothing). Not one round is added while the load watcher has seen no
        quiet moment since the sweep began (busy_throughout), nor another once every run of
        a round was disturbed (busy_round): the verdicts set such runs aside, so more of them
        cannot decide anything while the load lasts."""
        if self.policy.extra_time <= 0:
            return
        self.lost_s = self.disturbed_s()
        deadline = time.monotonic() + self.policy.extra_time + self.lost_s
        next_index = max(r["index"] for r in runs) + 1
        added = {}
        last = None             # the indices of the last round's runs
        while True:
            groups = undecided_groups(self.rows, self.rounds, ncores)
            todo = [g for g in groups if added.get(g, 0) < MAX_EXTRA_REPS]
            if not todo or time.monotonic() >= deadline:
                break
            self.stopped = busy_throughout(self.waiter) if last is None else \
                busy_round(self.rows, last)
            if self.stopped:
                break
            self.deadline = deadline
            batch = []
            for g in todo:
                batch.append(more_of(runs, self.rows, g, next_index))
                next_index += 1
                added[g] = added.get(g, 0) + 1
                self.why.setdefault(g, groups[g])
            self.rng.shuffle(batch)
            last = {r["index"] for r in batch}
            self.prog.total += len(batch)
            self.prog.plan(batch)
            if not self.run_queue(batch, deadline):
                break
        first = max(r["index"] for r in runs) + 1      # the runs that were done, by group
        for r in self.rows:
            if r["index"] >= first and r["record"] == 0:
                g = (r["variant"], r["workload_label"], r["threads"])
                self.extra[g] = self.extra.get(g, 0) + 1
        self.undecided = undecided_groups(self.rows, self.rounds, ncores)

    def summary(self):
        """meta.json's `load`: the policy, what the waiting, redoing and repeating did."""
        busy = [r for r in self.rows if r.get("load.busy")]
        return {
            "busy_cpus": self.policy.busy_cpus, "quiet_wait_s": self.policy.quiet_wait,
            "redo_share": self.policy.redo_share, "extra_time_s": self.policy.extra_time,
            "extra_lost_s": round(self.lost_s, 1),
            "runs_busy": len({r["index"] for r in busy}),
            "busy_groups": sorted({"%s %s t=%s" % (r["variant"], r["workload_label"],
                                                   r["threads"]) for r in busy}),
            "waited_s": round(self.waiter.waited_s, 1), "runs_waited": self.waiter.runs_waited,
            "gave_up_waiting_at": self.waiter.gave_up, "redone": self.redone,
            "extra_runs": sum(self.extra.values()),
            "extra": ["%s %s t=%d: +%d (%s)" % (g + (n, self.why.get(g, "?")))
                      for g, n in sorted(self.extra.items())],
            "still_undecided": sorted({w for w in self.undecided.values()}),
            "looks": self.waiter.looks, "quiet_looks": self.waiter.quiet_looks,
            "extra_stopped": self.stopped,
        }


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
